"""No callback comes back up: the core's entry points that pages and jobs call to load and run
models take no ``Callable`` parameter (their signatures are read, annotations resolved), so no
Streamlit call, and no rerun exception, can enter the core through them. Progress reaches a page
only through the run service's snapshots."""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.live import job_models
from specdec_core.live.model_choices import load_draft, load_target
from specdec_core.live.run_service import RunService
from specdec_core.live.shelf import ModelShelf
from specdec_core.models import HFCausalLM
from specdec_core.models.bundled import load_bundled, prepare_bundled_cache

ENTRY_POINTS = {
    "ModelShelf.get": ModelShelf.get,
    "ModelShelf.put": ModelShelf.put,
    "load_target": load_target,
    "load_draft": load_draft,
    "load_bundled": load_bundled,
    "prepare_bundled_cache": prepare_bundled_cache,
    "HFCausalLM.load": HFCausalLM.load,
    "job_models.target": job_models.target,
    "job_models.draft": job_models.draft,
    "RunService.submit": RunService.submit,
    "generate": generate,
    "autoregressive": autoregressive,
}


def _is_callable_type(hint: Any) -> bool:
    """Whether `hint` is, or holds (in a union, an optional, a generic's arguments), a Callable."""
    if (
        hint is Callable
        or hint is collections.abc.Callable
        or typing.get_origin(hint) is collections.abc.Callable
    ):
        return True
    return any(_is_callable_type(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


def callable_parameters(fn: Any) -> list[str]:
    """The parameters of `fn` typed as a callable, or left untyped (which could be one)."""
    hints = typing.get_type_hints(inspect.unwrap(fn))
    out = []
    for name, param in inspect.signature(fn).parameters.items():
        if name in ("self", "cls") or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if name not in hints or _is_callable_type(hints[name]):
            out.append(name)
    return out


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_the_core_entry_points_take_no_callable(name):
    assert callable_parameters(ENTRY_POINTS[name]) == [], name


def test_the_reader_finds_a_callable_however_it_is_written():
    def plain(a: int, on_wait: Callable[[float], None]) -> None: ...

    def optional(a: int, progress: Callable[[float, str], None] | None = None) -> None: ...

    def nested(a: int, hooks: tuple[Callable[[], None], ...] = ()) -> None: ...

    def untyped(a: int, b) -> None: ...

    assert callable_parameters(plain) == ["on_wait"]
    assert callable_parameters(optional) == ["progress"]
    assert callable_parameters(nested) == ["hooks"]
    assert callable_parameters(untyped) == ["b"]
