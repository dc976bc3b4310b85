"""OpenMP waiting policy for torch's CPU thread pool, chosen by an entry point before torch loads.

torch's CPU kernels run on an OpenMP pool (libgomp). By default its threads spin for a
while after each parallel region, waiting for the next one. A decode step of a small model
is hundreds of short regions, so on a machine where the cores are shared (a Streamlit
server with a browser on the same laptop, other users' jobs) a spinning thread holds a core
that the thread doing the work, the browser or the web server needs, and every region
waits for a thread that was pushed off its core. With passive waiting the threads sleep
instead. libgomp reads ``OMP_WAIT_POLICY`` once, when it is loaded (with torch), so
:func:`prefer_passive_wait` must run before the first ``import torch``.

A library does not change its user's environment on import, so the entry points call it:
``app.py``, the root ``conftest.py``, ``bench/__init__.py`` (every ``python -m bench.<name>``
passes through it) and ``train/__main__.py``. This module imports nothing but the standard
library, so calling it loads no torch.

Sleeping costs a wake-up per parallel region, so on cores nobody else needs, spinning is
faster (``bench.floor`` times both, side by side, on the machine it runs on). A machine that
serves only the app can ask for a short spin: an ``OMP_WAIT_POLICY`` or a ``GOMP_SPINCOUNT``
already set is kept (README: ``GOMP_SPINCOUNT``).
"""

from __future__ import annotations

import os
import sys

WAIT_ENV = "OMP_WAIT_POLICY"
#: libgomp's spin count before a waiting thread sleeps (its own knob beside the policy).
SPIN_ENV = "GOMP_SPINCOUNT"


def prefer_passive_wait() -> str | None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it or ``GOMP_SPINCOUNT`` is set or torch is loaded;
    the policy in force for this process's OpenMP pool (None when none was set)."""
    if WAIT_ENV not in os.environ and SPIN_ENV not in os.environ and "torch" not in sys.modules:
        os.environ[WAIT_ENV] = "PASSIVE"
    return os.environ.get(WAIT_ENV)
