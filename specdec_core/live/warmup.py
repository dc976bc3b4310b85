"""Warm a freshly loaded model before anyone times it.

A transformer's first forward pass in a process pays one-off costs (kernel choice, buffers),
which would make the first run a learner times look slower than the next. The live page
times the first run a learner asks for, and the classroom replays that run to everyone with
the same settings, so the loaders pay these costs here, on a short prompt, right after
loading.
"""

from __future__ import annotations

import time
from typing import Any

from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.sampling import SamplingConfig

#: The warm-up prompt (its words do not matter: any prefill and a few steps do).
WARM_TEXT = "Hello, how are you today?"
WARM_TOKENS = 4


def warm_up(target: Any, draft: Any = None) -> float | None:
    """Run `target` once on a short prompt (greedy, a few tokens): target-only, or speculative
    with `draft` so the draft's forward and a multi-token verification run too.

    Returns the seconds it took and records them as ``warm_up_s`` on the model warmed (`draft`,
    else `target`); None when the models cannot run this prompt (a context too short for it,
    say): a learner's own run then gets the engine's message about its own prompt.
    """
    greedy, options = SamplingConfig(temperature=0.0), RunOptions(top_n=0)
    start = time.perf_counter()
    try:
        ids = target.encode(WARM_TEXT)
        if draft is None:
            run = autoregressive(target, ids, greedy, WARM_TOKENS, options=options)
        else:
            run = generate(target, draft, ids, greedy, 2, WARM_TOKENS, options=options)
        for _ in run:
            pass
    except ValueError:
        return None
    seconds = time.perf_counter() - start
    (target if draft is None else draft).warm_up_s = seconds
    return seconds
