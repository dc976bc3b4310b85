"""Hostile inputs built once for the catalogue: a real toy trace whose token texts are payloads."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from specdec_core.engine import autoregressive, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.settings import LiveSettings
from specdec_core.live.trace import LiveTrace, RunRecord, build
from specdec_core.models.toy_words import toy_draft, toy_target
from tests.bad_input.payloads import PAYLOADS


@cache
def toy_trace(seed: int = 3) -> LiveTrace:
    """A real speculative run of the toy pair (sampled, so rounds accept and reject)."""
    target, draft = toy_target(), toy_draft()
    settings = LiveSettings(
        TargetSpec("toy"), DraftSpec("toy_draft"), chat=False, temperature=0.8, seed=seed, max_new_tokens=40
    )
    ids = target.encode("the cat sat")
    spec = list(generate(target, draft, ids, settings.sampling(), 4, 40, seed))
    base = list(autoregressive(target, ids, settings.sampling(), 40, seed))
    return build(settings, "the cat sat", ids, target, draft, RunRecord(spec, 0.5), RunRecord(base, 0.7))


@cache
def hostile_trace() -> LiveTrace:
    """:func:`toy_trace` with every token's text replaced by a payload (id i → PAYLOADS[i % n])."""
    trace = toy_trace()
    texts = {t: PAYLOADS[t % len(PAYLOADS)] for t in trace.texts}
    return replace(trace, texts=texts, prompt="**bold prompt** [x](y) $z$")
