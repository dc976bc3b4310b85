"""Once per server process: Python's collector stops rescanning the modules the app imported.

Streamlit, plotly, pandas, numpy and the course modules make hundreds of thousands of
long-lived objects. Python's full collections, which its allocator triggers on its own
while a page runs, walk all of them every time: 0.05–0.15 s pauses inside a lesson rerun
(bench/lessons.py). Once the first page run has imported what the app uses (``page.start``), one collection
clears what is garbage and ``gc.freeze()`` moves the survivors out of the collector's view;
they are still freed as usual when nothing refers to them.

A model load adds as many long-lived objects again (torch modules, the tokenizer's
vocabulary), so the shelf settles the collector after each build too
(:func:`settle_after_load`): full collections had taken 0.25–0.37 s once a model was loaded
(bench/RESULTS.md, stop 33).
"""

from __future__ import annotations

import gc
import threading

from specdec_core.models.memory import collect_all

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


def settle_after_load() -> None:
    """After a model is built (and others unloaded to make room): collect everything, the
    frozen objects included, so an unloaded model's reference cycles are freed, and freeze
    what survives, the new model with it. One full collection, some 0.3 s, per load."""
    collect_all(freeze=True)
