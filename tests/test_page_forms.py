"""Settings named once: each page's form gives its URL keys (today's names, so saved links
still work) and its widgets' bounds and options, and each run page's form its run request;
``restore`` runs once per script run, a Start press included."""

from __future__ import annotations

from importlib import import_module

import pytest

from pages.common import urlstate
from support.apptest import open_page, rerun, shared_link

#: The URL keys each page mirrors: saved links use them (the prompts and the race's drafts joined
#: their forms later; a saved link without them still opens).
SAVED_LINK_KEYS = {
    "live": "live_target live_target_src live_draft live_k live_vocab live_draft_src live_preset live_chat "
    "live_prompt live_gamma live_adaptive live_shape live_t live_topk live_topp live_seed live_max "
    "live_compare live_void live_shown",
    "race": "race_target race_target_src race_drafts race_depths race_draft_src race_preset race_chat "
    "race_prompt race_gamma race_adaptive race_shape race_t race_seed race_max race_repeats",
    "law_live": "law_target law_draft law_k law_preset law_chat law_prompt law_t law_topk law_topp law_gamma "
    "law_n law_broken law_seed",
    "compare": "cmp_targets cmp_source cmp_drafts cmp_cats cmp_n cmp_qseed cmp_gamma cmp_adaptive cmp_temp "
    "cmp_max cmp_metric cmp_c",
    "block": "block_chain block_draft block_k block_seed block_t block_round",
    "cost": "cost_alpha cost_gamma cost_c cost_verify cost_beta",
    "exercises": "ex_seed ex_topics ex_n ex_key",
    "tree_drafts": "trd_chain trd_draft trd_shape trd_seed trd_t trd_round trd_budget trd_k trd_repl",
    "overlap": "ov_preset ov_vocab_seed ov_table ov_T ov_variant ov_draft ov_n ov_mc_seed ov_mc_law",
    "tree": "tree_preset tree_vocab_seed tree_table tree_top_n tree_seed",
    "sampling_lab": "preset seed size logits T0 T k p min_keep order",
    "handouts": "handout",
    "tokenizers": "tok_text",
    "answers": "answers_page",
}


#: The lesson pages whose form is a module of their own (``pages/<page>_parts/form.py``, ``FORM``;
#: the cost page builds its own, β's default from the profile).
LESSON_FORMS = ("block", "cost", "exercises", "tree_drafts", "overlap", "tree")


def _forms():
    from pages.common.compare_form import CompareForm
    from pages.common.live_form import LiveForm
    from pages.law_live_parts.controls import LawForm
    from pages.race_parts.run import RaceForm
    from pages.sampling_lab_parts.form import LabForm

    return {
        "live": LiveForm(),
        "race": RaceForm(),
        "law_live": LawForm(),
        "compare": CompareForm(),
        **{page: import_module(f"pages.{page}_parts.form").FORM for page in LESSON_FORMS if page != "cost"},
        "cost": import_module("pages.cost_parts.form").CostForm(),  # β's default is the page's profile's
        "sampling_lab": LabForm(),  # its logits default to the example the link names
    }


def test_every_form_keeps_the_url_keys_of_saved_links():
    for page, form in _forms().items():
        assert [p.key for p in form.params()] == SAVED_LINK_KEYS[page].split(), page


@pytest.mark.parametrize("page", ["live", "race", "law_live", "compare", *LESSON_FORMS, "sampling_lab"])
def test_every_drawn_widget_takes_its_bounds_and_options_from_the_form(page):
    at = open_page(page)
    params = {p.key: p for p in _forms()[page].params()}
    checked = 0
    for kind in (
        "slider",
        "number_input",
        "selectbox",
        "multiselect",
        "radio",
        "select_slider",
        "text_input",
    ):
        for widget in at.get(kind):
            p = params.get(widget.key)
            if p is None:
                continue
            if kind in ("slider", "number_input"):
                assert (widget.min, widget.max) == (p.lo, p.hi), widget.key
            elif kind == "text_input":
                assert widget.max_chars == p.hi, widget.key
            else:  # AppTest lists the options by their labels: their number, and the value, tell
                chosen = widget.value if kind == "multiselect" else [widget.value]
                assert len(widget.options) <= len(p.options) and set(chosen) <= set(p.options), widget.key
            checked += 1
    bounded = [p for p in params.values() if p.options or p.hi is not None]
    assert checked >= min(4, len(bounded)), f"only {checked} widgets of {page} checked"


@pytest.mark.parametrize("page", [*LESSON_FORMS, "sampling_lab", "handouts", "tokenizers"])
def test_a_lesson_page_mirrors_exactly_the_url_keys_of_saved_links(page):
    at = open_page(page, timeout=180)  # tokenizers: both shipped tokenizers load
    assert [k for k in shared_link(at) if k not in ("lang", "quiz")] == SAVED_LINK_KEYS[page].split()


def test_the_class_answers_view_follows_and_mirrors_its_saved_link_key(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(tmp_path / "answers.sqlite"))
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_TEACHER_PASSCODE", "owl-42")
    at = open_page("answers", query={"answers_page": "cost"})
    at.text_input(key="answers_passcode").input("owl-42")
    at.button(key="answers_open").click()
    rerun(at)
    assert at.selectbox(key="answers_page").value == "cost"
    assert [k for k in shared_link(at) if k not in ("lang", "quiz")] == SAVED_LINK_KEYS["answers"].split()


def test_a_link_value_outside_the_widgets_bounds_is_refused_and_named():
    at = open_page("live", query={"live_topk": "1001", "live_max": "8"})
    assert any("live_topk" in w.value for w in at.warning)
    assert at.session_state["live_topk"] == 0 and at.session_state["live_max"] == 8


def test_restore_runs_once_per_script_run_a_start_press_included(monkeypatch):
    from pages.common import page

    runs: list[str] = []
    real_restore, real_start = urlstate.restore, page.start

    def counted_restore(params):
        runs.append("restore")
        return real_restore(params)

    def counted_start(name, **kw):
        runs.append("run")
        return real_start(name, **kw)

    monkeypatch.setattr(urlstate, "restore", counted_restore)
    monkeypatch.setattr(page, "restore", counted_restore)  # the page's start restores its form
    monkeypatch.setattr(page, "start", counted_start)
    at = open_page("live", state={"live_target": "toy", "live_draft": "toy_draft", "live_max": 16})
    assert runs == ["run", "restore"]
    runs.clear()
    at.button(key="live_generate").click()
    rerun(at)  # the press's on_click builds the job from the form; the page runs (again when it ends)
    assert runs and runs == ["run", "restore"] * (len(runs) // 2), runs
    assert at.session_state["live_trace"].settings.max_new_tokens == 16


def test_a_setting_is_declared_once_and_its_form_gives_key_options_default_and_value():
    from pages.common.form import Form, link_reader
    from pages.common.urlstate import choice_param, float_param, int_param

    offered = ["a", "b"]

    class Inner(Form):
        gamma = int_param(4, 1, 16)

    class Page(Form):
        prefix = "pg"
        kind = choice_param("a", lambda: tuple(offered))  # read when the form is built
        beta = float_param(0.0, 0.0, 0.5, step=0.005)
        inner = Inner
        odd = int_param(0, 0, 9, key="pg_odd_one")

    first = Page(beta=0.0123)
    assert [p.key for p in first.params()] == ["pg_kind", "pg_beta", "pg_gamma", "pg_odd_one"]
    assert first.kind.options == ("a", "b") and first.beta.default == 0.01  # on the slider's step
    assert Page(beta=0.9).beta.default == 0.5 and Page().beta.default == 0.0
    offered.append("c")
    assert Page().kind.options == ("a", "b", "c") and first.kind.options == ("a", "b")
    v = Page().read(link_reader({"pg_kind": "c", "pg_gamma": "7"}))
    assert (v.kind, v.beta, v.inner.gamma, v.odd) == ("c", 0.0, 7, 0)
    with pytest.raises(ValueError):
        Page().read(link_reader({"pg_gamma": "17"}))


def test_the_race_link_carries_its_prompt_and_drafts_and_a_link_without_them_gets_the_preset():
    at = open_page("race", query={"race_target": "toy", "race_prompt": "the cat", "race_drafts": "ngram"})
    assert not at.warning, [w.value for w in at.warning]
    assert at.text_area(key="race_prompt").value == "the cat"
    assert at.multiselect(key="race_drafts").value == ["ngram"]
    link = shared_link(at)
    assert (link["race_prompt"], link["race_drafts"]) == ("the cat", "ngram")
    plain = open_page("race", query={"race_target": "toy"})
    assert plain.text_area(key="race_prompt").value  # the preset's words, not an empty box
    assert plain.multiselect(key="race_drafts").value == ["toy_draft", "ngram"]
