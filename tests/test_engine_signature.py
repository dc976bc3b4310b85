"""The engine's doors stay small: ``generate`` and ``autoregressive`` take the positional form
their callers use, a few keywords DESIGN.md names (``adaptive_gamma``, ``tree``), and one
``RunOptions`` for the rest; no catch-all and no callback back into a caller. The model pair
(``target``, ``draft``) is positional-only, as every caller passes it: with DESIGN.md's two
keywords and the options object beside the positional form, that keeps the names a caller
may pass at eight."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

import pytest

from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.models import MarkovChainLM
from specdec_core.sampling import SamplingConfig

P = inspect.Parameter


def _named(fn: Callable[..., object]) -> list[str]:
    """The parameters a caller may pass by name (positional-only ones are not named)."""
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is not P.POSITIONAL_ONLY]


@pytest.mark.parametrize("fn", [generate, autoregressive])
def test_no_more_than_nine_named_parameters_no_catch_all_and_no_callable(fn):
    params = inspect.signature(fn).parameters.values()
    assert len(_named(fn)) <= 9, _named(fn)
    assert not [p.name for p in params if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
    hints = typing.get_type_hints(fn)
    for name, hint in hints.items():
        assert "Callable" not in str(hint), (name, hint)
    assert hints["options"] is RunOptions


def test_the_positional_form_and_the_design_keywords_hold():
    positional = ["target", "draft", "prompt_ids", "sampling", "gamma", "max_new_tokens", "seed"]
    assert list(inspect.signature(generate).parameters)[:9] == [*positional, "adaptive_gamma", "tree"]
    assert _named(generate) == [*positional[2:], "adaptive_gamma", "tree", "options"]
    chain = MarkovChainLM.random(5, seed=1)
    hot = SamplingConfig()
    runs = [
        generate(chain, chain, [0], hot, 2, 6, 3, adaptive_gamma=True),
        generate(chain, chain, [0], hot, 2, 6, 3, True),
        generate(chain, chain, [0], hot, 2, 6, 3, tree=(2, 1)),
        generate(chain, chain, [0], hot, 2, 6, 3, options=RunOptions(top_n=0, stop_at_eos=False)),
        generate(chain, chain, prompt_ids=[0], sampling=hot, gamma=2, max_new_tokens=6, seed=3),
    ]
    for run in runs:
        assert sum(len(e.committed) for e in run) == 6
    by_name = generate(chain, chain, [0], hot, 2, 12, 4, adaptive_gamma="heuristic")
    by_place = generate(chain, chain, [0], hot, 2, 12, 4, "heuristic")
    assert [e.to_dict(timings=False) for e in by_name] == [e.to_dict(timings=False) for e in by_place]
