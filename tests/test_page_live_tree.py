"""The live page with a tree draft, under AppTest on the toy Markov pair."""

import json

import pytest

from specdec_core.live.token_tree_round import slot_of_node, tree_problem
from specdec_core.live.trace import from_json, to_json
from support.apptest import open_page, rerun, shared_link

TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 40}


def _generate(at):
    at.button(key="live_generate").click()
    return rerun(at)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_tree_run_draws_its_tree_and_keeps_greedy_output(temperature):
    at = open_page("live", state={**TOY, "live_t": temperature, "live_shape": "3-2-1", "live_seed": 3})
    _generate(at)
    trace = at.session_state["live_trace"]
    assert trace.settings.tree == (3, 2, 1)
    events = trace.speculative.events
    assert all(e.tree is not None and 1 <= len(e.committed) <= 4 for e in events)
    if temperature == 0:
        assert trace.speculative.tokens == trace.baseline.tokens
    assert any("draft tree" in c.value for c in at.caption)
    assert shared_link(at)["live_shape"] == "3-2-1"
    exported = to_json(trace)
    assert from_json(exported).speculative.events[0].tree == events[0].tree


def test_a_node_maps_to_its_slot_and_bad_trees_are_refused():
    at = open_page("live", state={**TOY, "live_t": 1.0, "live_shape": "2-2", "live_seed": 1})
    _generate(at)
    events = at.session_state["live_trace"].speculative.events
    for e in events:
        path = e.tree["path"]
        for depth, node in enumerate(path[1:]):
            assert slot_of_node(e, node) == depth
        assert slot_of_node(e, 0) is None
        assert tree_problem(e.tree) is None
    broken = json.loads(to_json(at.session_state["live_trace"]))
    broken["speculative"]["events"][0]["tree"]["parents"][1] = 5
    replay = open_page("live", state={"live_target": "toy"})
    replay.file_uploader(key="live_upload").set_value(
        ("run.json", json.dumps(broken).encode(), "application/json")
    )
    rerun(replay)
    assert any("cannot be replayed" in e.value for e in replay.error)
