"""One round inside the real bundled model (SmolLM2-135M, slow): the recorded u, draft steps and
KV cache lengths of seeded runs, and the round page drawing a run of the live page from exactly
those events, in both languages."""

from __future__ import annotations

import tomllib

import pytest

from pages.common.i18n import LESSONS
from specdec_core.engine import generate
from specdec_core.live.round_view import round_view
from specdec_core.models import LayerSkipDraft
from specdec_core.sampling import SamplingConfig
from support.apptest import open_page, rerun

pytestmark = pytest.mark.slow

#: No target-only baseline (live_compare off): the round page reads the speculative run's events alone.
LIVE = {
    "live_target": "bundled",
    "live_draft": "layerskip",
    "live_k": 20,
    "live_max": 24,
    "live_seed": 7,
    "live_compare": False,
}


def test_seeded_runs_record_the_same_inside_of_every_round(bundled_model):
    prompt = bundled_model.encode("The three primary colours are")
    runs = [
        list(
            generate(
                bundled_model,
                LayerSkipDraft(bundled_model, 12),
                prompt,
                SamplingConfig(temperature=1.0),
                gamma=4,
                max_new_tokens=24,
                seed=11,
            )
        )
        for _ in range(2)
    ]
    assert [e.to_dict(timings=False) for e in runs[0]] == [e.to_dict(timings=False) for e in runs[1]]
    events = runs[0]
    assert any(e.rejected for e in events)
    produced = 0
    for e in events:
        before = len(prompt) + produced
        assert e.cache["target"] == [before - 1, before + len(e.draft_tokens), before + e.accepted_count]
        assert e.cache["draft"][2] <= e.cache["target"][2]
        assert [u < a for u, a in zip(e.draft_u, e.acceptance_probs, strict=True)] == [
            k == "accepted" for k in e.kinds[: len(e.draft_u)]
        ]
        assert len(e.draft_step_s) == len(e.draft_tokens) and sum(e.draft_step_s) <= e.draft_s
        produced += len(e.committed)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_round_page_draws_a_live_run_from_its_events(lang):
    at = open_page("live", lang=lang, state=LIVE, timeout=300)
    at.button(key="live_generate").click()
    rerun(at)
    trace = at.session_state["live_trace"]
    events = trace.speculative.events
    at.switch_page("pages/round.py")
    rerun(at)
    picked = at.session_state["round_pick"]
    event = events[picked]
    view = round_view(trace.prompt_ids, events, picked)
    at.session_state["round_stage"] = 2
    rerun(at)
    table = at.dataframe[0].value
    assert len(table) == len(event.draft_tokens) + 1
    emitted = [x for x in table.iloc[:, 8].tolist() if x != "—"]
    assert len(emitted) == len(event.committed)
    shown_u = [float(u) for u in table.iloc[:, 6].tolist() if u != "—"]
    assert shown_u == pytest.approx(event.draft_u, rel=1e-3)
    at.session_state["round_stage"] = 3
    rerun(at)
    strings = tomllib.loads((LESSONS / lang / "round.toml").read_text("utf-8"))
    heads = [strings[f"cache_line_{model}"].split("{")[0] for model in ("target", "draft")]
    lines = [next(m.value for m in at.markdown if m.value.startswith(head)) for head in heads]
    target, draft = view.caches
    assert tuple(event.cache["target"]) == (target.before, target.peak, target.after)
    assert tuple(event.cache["draft"]) == (draft.before, draft.peak, draft.after)
    for cache, line in zip(view.caches, lines, strict=True):
        for number in (cache.before, cache.peak, cache.after, cache.cut):
            assert str(number) in line
    assert target.cut == len(event.draft_tokens) - event.accepted_count
    assert [c.token for c in target.waiting] == [event.committed[-1]]
    assert not at.info  # a real model keeps a KV cache: the stage draws it
