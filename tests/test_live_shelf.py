"""The bounded model shelf: least recently used unloaded first, never a pinned model, a target
with the drafts built from it (specdec_core.live.shelf, models.memory.lru_evictions)."""

import gc
import weakref

from specdec_core.live.shelf import ModelShelf
from specdec_core.models.memory import lru_evictions


class Model:
    def __init__(self, name: str) -> None:
        self.name = name


def test_lru_evictions_picks_the_oldest_until_the_bound_holds():
    assert lru_evictions(["a", "b", "c"], None) == []
    assert lru_evictions(["a", "b", "c"], 3) == []
    assert lru_evictions(["a", "b", "c"], 2) == ["a"]
    assert lru_evictions(["a", "b", "c"], 1) == ["a", "b"]
    assert lru_evictions(["a", "b", "c"], 2, held={"a"}) == ["b"]  # a held one is skipped
    assert lru_evictions(["a", "b", "c"], 1, held={"a"}) == ["b", "c"]
    assert lru_evictions(["a", "b", "c"], 1, held={"a", "b", "c"}) == []  # nothing may go: wait


def test_lru_evictions_takes_a_target_with_its_drafts_and_spares_a_held_draft_s_target():
    parents = {"d1": "t", "d2": "t"}
    assert lru_evictions(["t", "d1", "d2", "x"], 2, parents=parents) == ["t", "d1", "d2"]
    assert lru_evictions(["d1", "t", "x"], 2, parents={"d1": "t"}) == ["d1"]
    assert lru_evictions(["t", "d1", "x"], 1, held={"d1"}, parents={"d1": "t"}) == ["x"]


def test_the_shelf_unloads_the_least_recently_used_model():
    shelf = ModelShelf(limit=2)
    a = shelf.put("a", Model("a"))
    shelf.put("b", Model("b"))
    assert shelf.get("a") is a  # a is now the most recently used
    gone = weakref.ref(shelf.peek("b"))
    shelf.put("c", Model("c"))
    assert [m.name for m in shelf.loaded()] == ["a", "c"] and shelf.evicted == 1
    gc.collect()
    assert gone() is None, "an unloaded model is not kept anywhere by the shelf"
    assert shelf.get("b") is None  # the next use builds it again


def test_pinned_models_stay_and_a_target_leaves_with_its_drafts():
    shelf = ModelShelf(limit=2)
    shelf.put("class", Model("class"), pin=True)
    shelf.put("t", Model("t"))
    shelf.put("d", Model("d"), parent="t")
    assert [m.name for m in shelf.loaded()] == ["class", "d", "t"]  # the new draft keeps its target
    shelf.put("u", Model("u"))
    assert [m.name for m in shelf.loaded()] == ["class", "u"]  # t went, and its draft with it
    assert shelf.pinned(shelf.peek("class")) and not shelf.pinned(shelf.peek("u"))
    assert shelf.release() == 2 and shelf.loaded() == []


def test_using_a_draft_keeps_its_target_fresh():
    shelf = ModelShelf(limit=3)
    shelf.put("t", Model("t"))
    shelf.put("d", Model("d"), parent="t")
    shelf.put("x", Model("x"))
    shelf.get("d")  # a run of the pair: the draft, then its target, are fresh
    shelf.put("y", Model("y"))
    assert [m.name for m in shelf.loaded()] == ["d", "t", "y"]


def test_without_a_bound_nothing_is_unloaded():
    shelf = ModelShelf()
    for k in range(20):
        shelf.put(k, Model(str(k)))
    assert len(shelf.loaded()) == 20 and shelf.evicted == 0


def test_after_build_runs_once_per_build_once_the_bound_holds():
    seen = []
    shelf = ModelShelf(limit=1, after_build=lambda: seen.append([m.name for m in shelf.loaded()]))
    shelf.put("a", Model("a"))
    assert shelf.get("a").name == "a"  # no build: nothing to settle
    shelf.put("b", Model("b"))
    assert seen == [["a"], ["b"]], "called after each build, with the evicted model gone"
