"""The draft race: runs, measured rows, the theory prediction and the JSON export."""

import json
import time

import numpy as np
import pytest

from specdec_core.engine import summarize
from specdec_core.live.race import (
    BASELINE,
    Race,
    RaceResult,
    RaceSettings,
    best,
    predicted_speedup,
    result_json,
)
from specdec_core.models import NGramDraft
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.theory import speedup

TARGET = toy_target()
PROMPT = TARGET.encode("the cat sat on the mat . the dog ran home . the cat")


@pytest.fixture(scope="module")
def greedy_race():
    race = Race(
        TARGET,
        [("toy_draft", toy_draft()), ("ngram", NGramDraft.for_model(TARGET))],
        PROMPT,
        RaceSettings(gamma=3, temperature=0.0, max_new_tokens=40),
    )
    seen = [key for key, _ in race]
    return race, seen


def test_race_runs_baseline_then_each_draft(greedy_race):
    race, seen = greedy_race
    assert race.keys == [BASELINE, "toy_draft", "ngram"]
    assert list(dict.fromkeys(seen)) == race.keys
    assert all(len(r.tokens) == 40 for r in race.records.values())
    assert all(r.wall_s > 0 for r in race.records.values())


def test_rows_are_measured_from_the_runs(greedy_race):
    race, _ = greedy_race
    result = RaceResult(
        "copy", "…", TARGET.name, "toy", {"toy_draft": "toy", "ngram": "n-gram"}, race.settings, race.records
    )
    rows = result.rows
    assert [r.key for r in rows] == ["toy_draft", "ngram"]
    base = summarize(race.records[BASELINE].events)
    step = (base.seconds - base.prefill_s) / base.tokens  # seconds a target token, prefill excluded
    for row in rows:
        s = summarize(race.records[row.key].events)
        assert row.same_text, "greedy: every draft gives the target's own text"
        assert row.alpha == pytest.approx(s.accepted / (s.accepted + s.rejections))
        assert row.tokens_per_round == pytest.approx(s.tokens / s.rounds)
        assert row.decode_speedup == pytest.approx((s.tokens / (s.seconds - s.prefill_s)) * step)
        assert row.verify_cost == pytest.approx((s.verify_s + s.overhead_s) / s.rounds / step)
    assert best(rows).decode_speedup == max(r.decode_speedup for r in rows)
    data = json.loads(result_json(result))
    assert data["format"] == "specdec-studio/draft-race" and len(data["rows"]) == 2
    assert set(data["runs"]) == {BASELINE, "toy_draft", "ngram"}


def test_prediction_is_the_theory_speedup_for_a_fixed_gamma():
    for alpha in (0.0, 0.4, 0.9, 1.0):
        assert predicted_speedup(alpha, [4] * 7, 0.3, 1.2) == pytest.approx(speedup(alpha, 4, 0.3, 1.2))
    curve = predicted_speedup(np.linspace(0, 1, 11), [2, 4], 0.1, 1.0)
    assert curve.shape == (11,) and np.all(np.diff(curve) > 0)
    with pytest.raises(ValueError):
        predicted_speedup(0.5, [], 0.1, 1.0)


def test_stopping_a_race_keeps_finished_runs():
    draft = toy_draft()
    race = Race(TARGET, [("toy_draft", draft)], PROMPT, RaceSettings(temperature=1.0, max_new_tokens=30))
    runs = iter(race)
    for key, _ in runs:
        if key == "toy_draft":
            break
    runs.close()
    assert list(race.records) == [BASELINE]


def test_repeats_run_each_draft_again_and_keep_the_fastest():
    race = Race(
        TARGET,
        [("toy_draft", toy_draft())],
        PROMPT,
        RaceSettings(temperature=1.0, max_new_tokens=20, repeats=2),
    )
    seen = {}
    shares = []
    for key, event in race:
        seen.setdefault(key, []).append(event)
        shares.append(race.progress(key, event.position + len(event.committed)))
    assert shares == sorted(shares) and shares[0] > 0 and shares[-1] == 1.0, "progress only grows, to 1"
    assert race.repeat == 1  # the second repetition ran last
    assert race.progress(BASELINE, 10) == pytest.approx((0 * 2 + 1 + 10 / 20) / (2 * 2))
    for key, events in seen.items():
        kept = race.records[key].events
        assert len(events) == 2 * len(kept), "every run happened twice"
        assert [e.committed for e in events[: len(kept)]] == [e.committed for e in events[len(kept) :]]
        decode = [
            sum(e.total_s - e.prefill_s for e in part) for part in (events[: len(kept)], events[len(kept) :])
        ]
        assert sum(e.total_s - e.prefill_s for e in kept) == pytest.approx(min(decode))


def test_a_race_job_in_the_run_service_names_its_progress_and_keeps_finished_runs_on_cancel():
    from specdec_core.live.access import Access
    from specdec_core.live.model_choices import DraftSpec, TargetSpec
    from specdec_core.live.race_job import RaceJob, RaceProgress, RaceRequest
    from specdec_core.live.run_service import CANCELLED, DONE, RunService
    from specdec_core.live.shelf import ModelShelf

    request = RaceRequest(
        TargetSpec("toy"),
        (("toy_draft", DraftSpec("toy_draft")), ("ngram", DraftSpec("ngram"))),
        "the cat sat on the mat",
        False,
        RaceSettings(max_new_tokens=400, temperature=0.0),
        "copy",
        {BASELINE: "alone", "toy_draft": "toy", "ngram": "n-gram", "ngram~tree": "unused"},
    )
    service = RunService()
    try:
        done = service.submit(RaceJob(request, ModelShelf(), Access()))
        while not service.snapshot(done).ended_already:
            time.sleep(0.01)
        snap = service.snapshot(done)
        assert snap.state == DONE and set(snap.result.records) == {BASELINE, "toy_draft", "ngram"}
        assert snap.result.names == {BASELINE: "alone", "toy_draft": "toy", "ngram": "n-gram"}
        assert not snap.result.stopped
        ticket = service.submit(RaceJob(request, ModelShelf(), Access()))
        while (service.snapshot(ticket).result is None) and not service.snapshot(ticket).ended_already:
            time.sleep(0.001)
        seen = service.snapshot(ticket).progress
        assert isinstance(seen, RaceProgress) and seen.name in request.names.values()
        view = service.cancel(ticket)
        assert view.state == CANCELLED and view.result is not None and BASELINE in view.result.records
    finally:
        service.close()
