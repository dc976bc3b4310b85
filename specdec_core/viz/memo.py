"""A shared cache of built figures, keyed on what they were built from.

Building a plotly figure walks plotly's property validators for every trace and setting,
which is most of a lesson page's rerun; the inputs are small (a few arrays, a dataclass, a
table of strings) and a learner dragging a slider back and forth asks for the same figures
again. :func:`figure_cache` makes a builder return the figure it built before for equal
inputs (the values compared exactly: array dtype, shape and bytes; dataclass fields;
mapping items). Inputs it cannot read as values are not cached (the builder just runs).

The figure handed out is shared by every caller with equal inputs (all sessions of one
server): callers must treat it as read-only, as ``st.plotly_chart`` does (it copies the
figure before serialising it).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import numpy as np

#: Figures kept in all (least recently used dropped first); a lesson figure is 10–200 kB.
MAX_FIGURES = 256

F = TypeVar("F", bound=Callable[..., Any])
_cache: OrderedDict[Hashable, Any] = OrderedDict()
_lock = threading.Lock()


class _Unkeyable(Exception):
    pass


def _key(x: Any) -> Hashable:
    """A hashable value equal for equal inputs; raises _Unkeyable for what it cannot read."""
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return (type(x).__name__, x)
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return ("ndarray-object", x.shape, tuple(_key(v) for v in x.ravel().tolist()))
        return ("ndarray", x.dtype.str, x.shape, np.ascontiguousarray(x).tobytes())
    if isinstance(x, np.generic):
        return ("np", x.dtype.str, x.item())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_key(v) for v in x))
    if isinstance(x, Mapping):
        return ("map", tuple(sorted((_key(k), _key(v)) for k, v in x.items())))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted(_key(v) for v in x)))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__qualname__, tuple(_key(getattr(x, f.name)) for f in dataclasses.fields(x)))
    raise _Unkeyable(type(x).__name__)


def figure_cache(builder: F) -> F:
    """Decorate a figure builder so equal inputs return the figure built before (read-only)."""

    @functools.wraps(builder)
    def cached(*args: Any, **kwargs: Any) -> Any:
        try:
            key = (builder.__module__, builder.__qualname__, _key(args), _key(kwargs))
        except _Unkeyable:
            return builder(*args, **kwargs)
        with _lock:
            if key in _cache:
                _cache.move_to_end(key)
                return _cache[key]
        fig = builder(*args, **kwargs)
        with _lock:
            _cache[key] = fig
            while len(_cache) > MAX_FIGURES:
                _cache.popitem(last=False)
        return fig

    cached.uncached = builder  # type: ignore[attr-defined]
    return cached  # type: ignore[return-value]


def result_cache(compute: F) -> F:
    """The same cache for a course computation whose result a page redraws from (read-only):
    a learner changing one control reruns the page, and the maths behind the untouched parts
    is asked for again with equal inputs."""
    return figure_cache(compute)


def clear() -> None:
    """Drop every cached figure."""
    with _lock:
        _cache.clear()
