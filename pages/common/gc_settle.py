"""Once per server process: Python's collector stops rescanning the modules the app imported.

Streamlit, plotly, pandas, numpy and the course modules make hundreds of thousands of
long-lived objects. Python's full collections, which its allocator triggers on its own
while a page runs, walk all of them every time: 0.05–0.15 s pauses inside a lesson rerun
(bench/lessons.py). Once the first page run has imported what the app uses (``page.start``), one collection
clears what is garbage and ``gc.freeze()`` moves the survivors out of the collector's view;
they are still freed as usual when nothing refers to them.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_settled = False


def settle_after_imports() -> None:
    """Collect once and freeze what survives; later calls (every rerun) do nothing."""
    global _settled
    with _lock:
        if _settled:
            return
        _settled = True
    gc.collect()
    gc.freeze()
