"""Python's collector after a model load (pages/common/gc_settle.py) and when a released
model's memory is handed back (specdec_core.models.memory): frozen objects out of the
collector's view, and reference cycles freed all the same once let go."""

from __future__ import annotations

import gc
import weakref

import pytest

from pages.common.gc_settle import settle_after_load
from specdec_core.models.memory import return_freed_memory


class Node:
    """A reference cycle, as a torch module with a hook on itself makes: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _frozen_as_before():
    """Leave the process frozen if it was (an earlier model load freezes what it loaded)."""
    was = gc.get_freeze_count() > 0
    yield
    gc.unfreeze()
    if was:
        gc.freeze()


def _in_view(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_a_load_frees_the_cycles_let_go_and_freezes_what_survives():
    old = Node()
    gone = weakref.ref(old)
    gc.freeze()  # frozen by an earlier load
    del old  # then unloaded to make room for the new model
    new = Node()
    settle_after_load()
    assert gone() is None, "an unloaded model's cycles are freed at the next load"
    assert not _in_view(new), "the new model is out of the collector's view"


def test_handing_memory_back_frees_frozen_cycles_and_freezes_the_rest_again():
    old, kept = Node(), Node()
    gone = weakref.ref(old)
    gc.freeze()
    del old  # a released model, frozen when it was loaded
    return_freed_memory()
    assert gone() is None, "a released model's cycles are freed"
    assert gc.get_freeze_count() > 0 and not _in_view(kept), "what was frozen stays so"
    gc.unfreeze()
    return_freed_memory()
    assert gc.get_freeze_count() == 0, "a process that froze nothing is left so"
