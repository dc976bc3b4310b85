"""Classroom mode on the live and race pages under AppTest (issue 17), and the layer-skip bound.

The server's rules come from the environment (specdec_core.live.access), read on every run,
so each test sets them with monkeypatch before opening a fresh AppTest. The shelf of models
and the preload's ticket are process-wide (st.cache_resource): `fresh_shelf` empties both around
each test, so no test sees another's models.
"""

from __future__ import annotations

import time

import pytest

from pages.common.models import access, preload_ticket, run_service, shelf
from specdec_core.live.model_choices import TargetSpec, targets
from specdec_core.viz.escape import md
from support.apptest import open_page, rerun

pytestmark = pytest.mark.usefixtures("fresh_shelf")


def _panel(at):
    return next(e for e in at.expander if e.label.startswith(("Models in memory", "内存中的模型")))


def _preloaded(at):
    """Wait for the teacher's models (started by the page's first run), then run again."""
    ticket, deadline = preload_ticket(access()), time.monotonic() + 120
    while not run_service().snapshot(ticket).ended_already:
        assert time.monotonic() < deadline, "the preload did not end"
        time.sleep(0.2)
    return rerun(at)


def test_a_learner_sees_only_the_teachers_models_and_types_no_path(classroom_models):
    at = _preloaded(open_page("live"))
    target = at.selectbox(key="live_target")
    assert target.options == ["Toy Markov pair (instant, no download)", "Custom: HF id or local folder"]
    at.selectbox(key="live_target").set_value("custom")
    rerun(at)
    source = at.selectbox(key="live_target_src")
    assert source.options == [classroom_models] and source.value == classroom_models
    assert not [t for t in at.text_input if t.key in ("live_target_src", "live_draft_src")]
    panel = _panel(at)
    assert panel.label == "Models in memory (2)"
    listed = " ".join(m.value for m in panel.markdown)
    assert listed.count("(the teacher's)") == 2
    assert any("Classroom server" in c.value for c in panel.caption)


def test_a_link_to_a_server_path_loads_the_teachers_model_and_names_no_path(classroom_models):
    at = _preloaded(
        open_page(
            "live",
            query={
                "live_target": "custom",
                "live_target_src": "/etc",
                "live_draft": "layerskip",
                "live_k": "3",
            },
        )
    )
    assert at.session_state["live_target_src"] == classroom_models
    assert at.number_input(key="live_k").max == 4  # the tiny model's layers, from its config
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    trace = at.session_state["live_trace"]
    assert trace.settings.target == TargetSpec("custom", classroom_models)
    shown = " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.info, *at.warning])
    assert "/etc" not in shown


def test_a_custom_draft_is_offered_only_from_the_teachers_list(monkeypatch):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    at = open_page("live", query={"live_draft": "custom", "live_draft_src": "/etc"})
    assert at.session_state["live_target"] == "toy"
    assert at.selectbox(key="live_draft").options == ["Toy draft chain (30 % noise)", "n-gram prompt lookup"]
    race = open_page("race", query={"race_target": "custom", "race_target_src": "/etc"})
    assert race.session_state["race_target"] == "toy"
    assert race.selectbox(key="race_target").options == ["Toy Markov pair (instant, no download)"]


def test_unloading_needs_the_teachers_passcode(classroom_models):
    at = _preloaded(open_page("live"))
    assert len(shelf().loaded()) == 2
    at.text_input(key="models_passcode").input("owl-41")
    at.button(key="models_unload").click()
    rerun(at)
    assert at.error[0].value == "Wrong passcode: nothing was unloaded."
    assert len(shelf().loaded()) == 2 and not at.success
    assert at.text_input(key="models_passcode").value == ""  # emptied after a try
    at.button(key="models_unload").click()  # an empty passcode is wrong too
    rerun(at)
    assert at.error and len(shelf().loaded()) == 2
    at.text_input(key="models_passcode").input("owl-42")
    at.button(key="models_unload").click()
    rerun(at)
    assert at.success[0].value == "Unloaded 2 model(s)." and shelf().loaded() == []


def test_without_a_passcode_nobody_can_unload(monkeypatch):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    at = _preloaded(open_page("race"))
    assert not [b for b in at.button if b.key == "models_unload"]
    assert not [t for t in at.text_input if t.key == "models_passcode"]
    assert any("switched off" in c.value for c in _panel(at).caption)
    assert len(shelf().loaded()) == 1


def test_outside_classroom_mode_the_form_is_as_before(monkeypatch):
    for name in ("SPECDEC_CLASSROOM", "SPECDEC_PRELOAD", "SPECDEC_TEACHER_PASSCODE", "SPECDEC_MAX_MODELS"):
        monkeypatch.delenv(name, raising=False)
    at = open_page("live", query={"live_target": "custom", "live_target_src": "/etc"})
    assert len(at.selectbox(key="live_target").options) == len(targets())  # every target
    assert at.text_input(key="live_target_src").value == "/etc"  # a free text box, kept
    assert not [t for t in at.text_input if t.key == "models_passcode"]
    panel = _panel(at)
    assert not any("Classroom" in c.value for c in panel.caption)
    assert any("At most 6 models stay loaded" in c.value for c in panel.caption)
    assert [b for b in at.button if b.key == "models_unload"]
    assert shelf().loaded() == [], "outside classroom mode nothing is preloaded"


def test_the_layer_skip_depth_is_bounded_by_the_targets_layers(monkeypatch):
    monkeypatch.delenv("SPECDEC_CLASSROOM", raising=False)
    at = open_page("live", query={"live_draft": "layerskip", "live_k": "256"})
    k = at.number_input(key="live_k")
    assert k.max == 30 and k.value == 30, "SmolLM2-135M has 30 layers"
    assert "has 30 layers" in k.help
    assert shelf().loaded() == [], "the bound is read from the config; no model was loaded for it"
    zh = open_page("live", "zh", query={"live_draft": "layerskip", "live_k": "12"})
    assert zh.number_input(key="live_k").max == 30 and zh.number_input(key="live_k").value == 12


def test_the_race_refuses_a_depth_beyond_the_target_before_loading(monkeypatch):
    monkeypatch.delenv("SPECDEC_CLASSROOM", raising=False)
    at = open_page("race", query={"race_depths": "10, 40"})
    assert "has 30 layers" in at.text_input(key="race_depths").help
    at.button(key="race_run").click()
    rerun(at)
    assert md("A layer-skip depth of 40 is more than the target's 30 layers") in at.error[0].value
    assert shelf().loaded() == []


def test_the_bound_unloads_the_least_recently_used_pair(monkeypatch):
    monkeypatch.delenv("SPECDEC_CLASSROOM", raising=False)
    monkeypatch.setenv("SPECDEC_MAX_MODELS", "2")
    toy = {"live_target": "toy", "live_max": 8}
    at = open_page("live", state={**toy, "live_draft": "toy_draft"})
    at.button(key="live_generate").click()
    rerun(at)
    names = sorted(m.name for m in shelf().loaded())
    assert names == ["Toy Markov draft (30% noise)", "Toy Markov target (18 words)"]
    before = shelf().evicted  # the shelf is the process's: earlier tests may have unloaded some
    at = open_page("live", state={**toy, "live_draft": "ngram", "live_seed": 3})
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error
    kept = [getattr(m, "name", type(m).__name__) for m in shelf().loaded()]
    assert len(kept) == 2 and names[0] not in kept and names[1] in kept, (
        "the toy draft went, the target stayed"
    )
    assert shelf().evicted == before + 1
    assert any(
        "At most 2 models" in c.value and f"so far: {before + 1}." in c.value for c in _panel(at).caption
    )


@pytest.mark.parametrize("name", ["live", "race"])
def test_classroom_mode_speaks_chinese_too(classroom_models, name):
    at = _preloaded(open_page(name, "zh"))
    panel = _panel(at)
    assert any("课堂服务器" in c.value for c in panel.caption)
    assert at.text_input(key="models_passcode").label == "教师口令"
    assert " ".join(m.value for m in panel.markdown).count("（老师的）") == 2


def test_loaded_models_are_out_of_the_collectors_view(classroom_models):
    """The app's shelf settles Python's collector after each load (pages/common/gc_settle.py):
    a full collection would otherwise walk every object of the models at each of its pauses."""
    import gc

    _preloaded(open_page("live"))
    models = {id(m) for m in shelf().loaded()}
    assert len(models) == 2
    assert not any(id(o) in models for o in gc.get_objects())
