"""The lab "Exact on a real model" (specdec_core.live.law, law_view) on the toy Markov pair:
the exact law is the target's own rows, the cells and the test follow the rules the page states,
and the numbers of the lab's check-yourself questions are recomputed here."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from specdec_core.live.law import (
    ETA_AFTER,
    MAX_SAMPLES,
    LawError,
    LawLab,
    LawSettings,
    Tally,
    check_settings,
    sample_seed,
)
from specdec_core.live.law_view import JointTest, joint_cells, joint_test, snapshot
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.stats import total_variation, tv_noise_band
from specdec_core.variants import emitted_law

TOY = LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=400)


def _lab(settings: LawSettings = TOY) -> tuple[LawLab, list[int]]:
    target = toy_target()
    ids = target.encode("the cat sat on the")
    return LawLab(target, toy_draft(), ids, settings), ids


def _run(lab: LawLab) -> LawLab:
    lab.prime()
    for rule in lab.order():
        lab.draw(rule)
    return lab


def test_the_exact_law_is_the_targets_own_rows_processed():
    cfg = SamplingConfig(temperature=0.7, top_k=3)
    lab, ids = _lab(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), temperature=0.7, top_k=3))
    target = toy_target()
    np.testing.assert_allclose(lab.law.first, apply(target.next_logits(ids[-1]), cfg).probs, atol=1e-15)
    for x1 in np.flatnonzero(lab.law.first):
        np.testing.assert_allclose(lab.law.second(x1), apply(target.next_logits(x1), cfg).probs, atol=1e-15)


def test_a_run_counts_n_pairs_per_rule_prefills_once_and_tells_the_rules_apart():
    lab = _run(_lab()[0])
    assert [t.n for t in lab.tallies.values()] == [400, 400]
    assert lab.held.prefills == 1 and lab.held.runs == 800
    snap = snapshot(lab, toy_target().token_text, finished=True)
    assert snap.tests["exact"].p_value > 1e-3 and snap.tests["exact"].verdict == "fits"
    assert snap.tests["accept_all"].p_value < 1e-6 and snap.takeaway == "shown"
    assert snap.tests["exact"].tv < snap.tests["exact"].tv_noise < snap.tests["accept_all"].tv
    assert snap.law_forwards == lab.law.forwards >= 2


def test_the_same_settings_give_the_same_counts_and_each_sample_its_own_seed():
    a = _run(_lab(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=50))[0])
    b = _run(_lab(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=50))[0])
    assert a.tallies["exact"].pairs == b.tallies["exact"].pairs
    seeds = {sample_seed(0, r, i) for r in (0, 1) for i in range(500)}
    assert len(seeds) == 1000


class _Law:
    """An exact law given by hand: p(x₁) and p(x₂ | x₁) over three tokens."""

    def __init__(self, first: tuple[float, ...] = (0.5, 0.5, 0.0), rows: dict | None = None) -> None:
        self.first = np.array(first)
        rows = rows or {0: (0.9, 0.1, 0.0), 1: (0.5, 0.5, 0.0), 2: (1 / 3, 1 / 3, 1 / 3)}
        self.rows = {x1: np.array(row) for x1, row in rows.items()}

    def second(self, x1: int) -> np.ndarray:
        return self.rows[int(x1)]

    def likely_first(self, n: int) -> list[int]:
        return [int(x) for x in np.flatnonzero(self.first * n >= 5)]

    def stand_in(self, given: int | None, token: int) -> int | None:
        return None  # no ties: every cut is clear


def test_cells_expected_under_five_are_pooled_and_forbidden_pairs_kept_apart():
    tally = Tally()
    for pair, count in {(0, 0): 9, (0, 1): 1, (1, 0): 4, (1, 1): 6}.items():
        for _ in range(count):
            tally.add(*pair)
    obs, probs = joint_cells(tally, _Law())  # n = 20: (0, 1) expects 1, pooled
    assert obs.tolist() == [9, 4, 6, 1] and probs.tolist() == pytest.approx([0.45, 0.25, 0.25, 0.05])
    test = joint_test(tally, _Law())
    assert test.cells == 4 and test.dof == 3 and 0 < test.p_value < 1
    assert test.tv == pytest.approx(total_variation(obs / 20, probs))
    tally.add(0, 2)  # p(x₂ = 2 | x₁ = 0) = 0: impossible under the law
    tally.add(2, 0)  # p(x₁ = 2) = 0
    assert joint_test(tally, _Law()).p_value == 0.0


def _tally(pairs: dict[tuple[int, int], int]) -> Tally:
    tally = Tally()
    for pair, count in pairs.items():
        for _ in range(count):
            tally.add(*pair)
    return tally


def test_a_law_the_cells_cover_whole_gets_no_pooled_cell():
    # one possible pair: one cell, nothing to compare, so no verdict either way
    one = _Law((1.0, 0.0, 0.0), {0: (1.0, 0.0, 0.0)})
    obs, probs = joint_cells(_tally({(0, 0): 20}), one)
    assert obs.tolist() == [20] and probs.tolist() == [1.0]
    test = joint_test(_tally({(0, 0): 20}), one)
    assert test.cells == 1 and test.verdict == "unclear"
    # four pairs whose products sum to 1 − 1.1e-16: four cells, the rounding makes no fifth
    four = _Law((0.3, 0.7, 0.0), {0: (0.5, 0.5, 0.0), 1: (0.5, 0.5, 0.0)})
    obs, probs = joint_cells(_tally({(0, 0): 14, (0, 1): 16, (1, 0): 36, (1, 1): 34}), four)
    assert obs.tolist() == [14, 16, 36, 34] and probs.tolist() == pytest.approx([0.15, 0.15, 0.35, 0.35])
    test = joint_test(_tally({(0, 0): 14, (0, 1): 16, (1, 0): 36, (1, 1): 34}), four)
    assert test.cells == 4 and test.dof == 3


def test_a_law_forward_that_fails_leaves_the_pair_uncounted():
    class Failed(Exception):
        pass

    def fail(continuation):
        raise Failed

    target = toy_target()
    lab = LawLab(target, toy_draft(), target.encode("the cat sat on the"), TOY)
    lab.held.scores = fail  # the law forward after the first sample ends the job
    with pytest.raises(Failed):
        lab.draw("exact")
    assert lab.done == 0 and not lab.tallies["exact"].pairs


@pytest.mark.parametrize(
    ("settings", "code"),
    [
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), temperature=0.0), "greedy"),
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), top_k=1), "top_k_one"),
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=MAX_SAMPLES + 1), "samples"),
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=0), "samples"),
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), gamma=5), "gamma"),
        (LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), broken="exact"), "rule"),
        (LawSettings(TargetSpec("custom", "x"), DraftSpec("ngram")), "target"),
        (LawSettings(TargetSpec("toy"), DraftSpec("head")), "draft"),
        (LawSettings(TargetSpec("bundled"), DraftSpec("custom", source="x")), "draft"),
    ],
)
def test_settings_the_lab_refuses(settings, code):
    with pytest.raises(LawError) as err:
        check_settings(settings)
    assert err.value.code == code


def test_the_classroom_cap_bounds_n():
    check_settings(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=300), cap=300)
    with pytest.raises(LawError) as err:
        check_settings(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=301), cap=300)
    assert err.value.code == "cap" and err.value.params == {"limit": 300, "n": 301}


def test_time_left_counts_each_rules_pace_and_the_law_forwards_to_come():
    lab, _ = _lab(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=20))
    lab.prime()
    for _ in range(ETA_AFTER - 1):
        lab.draw("exact")
    assert lab.eta_s() is None, "the first samples pay for warming up"
    lab.draw("exact")
    lab.sample_seconds = {"exact": 1.0, "accept_all": 0.0}  # 0.2 s an exact sample, none broken yet
    lab.draw_law = [0, 0.0]  # no forward after a sample yet: one costs a sample's time
    p1 = lab.law.first

    def forwards(to_go: int) -> float:
        return sum(1 - (1 - p1[x]) ** to_go for x in range(p1.size) if not lab.law.known(x))

    assert lab.eta_s() == pytest.approx(15 * 0.2 + 20 * 0.2 + forwards(35) * 0.2)
    lab.draw("accept_all")
    lab.sample_seconds = {"exact": 1.0, "accept_all": 0.1}
    lab.draw_law = [4, 2.0]  # 0.5 s a forward
    assert lab.eta_s() == pytest.approx(15 * 0.2 + 19 * 0.1 + forwards(34) * 0.5)


def test_time_left_rate_and_takeaways():
    fits = JointTest(10, 3, 1.0, 2, 0.5, 0.1, 0.2)
    fails = JointTest(10, 3, 90.0, 2, 1e-9, 0.5, 0.2)
    unclear = JointTest(10, 3, 11.0, 2, 0.004, 0.3, 0.2)
    lab = _run(_lab(LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"), samples=5))[0])
    snap = snapshot(lab, toy_target().token_text)
    from dataclasses import replace

    assert snap.rate == pytest.approx(5 / lab.seconds["exact"])
    assert replace(snap, seconds={"exact": 0.0, "accept_all": 1.0}).rate is None
    assert replace(snap, tests={"exact": fits, "accept_all": fails}).takeaway == "shown"
    assert replace(snap, tests={"exact": fits, "accept_all": fits}).takeaway == "exact_only"
    assert unclear.verdict == "unclear"
    assert replace(snap, tests={"exact": unclear, "accept_all": fails}).takeaway == "borderline"
    assert replace(snap, tests={"exact": unclear, "accept_all": fits}).takeaway == "borderline"
    assert replace(snap, tests={"exact": fails, "accept_all": fails}).takeaway == "unlucky"
    assert replace(snap, tests={"exact": None, "accept_all": None}).takeaway == "early"
    pooled = JointTest(10, 1, 0.0, 1, 1.0, 0.0, 0.0)  # every pair in the one pooled cell
    assert pooled.verdict == "unclear"
    assert replace(snap, tests={"exact": pooled, "accept_all": fails}).takeaway == "early"
    assert replace(snap, tests={"exact": fits, "accept_all": pooled}).takeaway == "early"
    impossible = JointTest(10, 1, math.inf, 1, 0.0, 0.4, 0.0)  # one cell, but a forbidden pair seen
    assert impossible.verdict == "fails"
    assert replace(snap, tests={"exact": fits, "accept_all": impossible}).takeaway == "shown"


# -- the quiz's numbers -------------------------------------------------------------------------
def _quiz(lang: str) -> list[dict]:
    return tomllib.loads((LESSONS / lang / "law_live.toml").read_text("utf-8"))["quiz"]


def test_every_question_is_marked_and_two_use_new_numbers():
    for lang in ("en", "zh"):
        kinds = [q["kind"] for q in _quiz(lang)]
        assert set(kinds) <= {"recall", "apply", "transfer"}
        assert kinds.count("apply") + kinds.count("transfer") >= 2


def test_the_noise_band_question():
    """A gap of 0.05 between two outcomes at 0.5: the band is 1.96·√(0.25/N), 0.05 at N ≈ 385."""
    n = math.ceil((1.96 * 0.5 / 0.05) ** 2)
    half_gap = round(math.ceil((1.96 * 0.5 / 0.025) ** 2), -1)  # halving the gap quadruples N
    band_at_100 = 1.96 * 0.5 / math.sqrt(100)
    for lang, about in (("en", "about {:,}"), ("zh", "约 {:,}")):
        q = _quiz(lang)[1]
        assert q["options"][q["answer"]] == about.format(n), lang
        assert about.format(half_gap) in q["options"] and about.format(100) in q["options"], lang
        assert f"≈ {band_at_100:.3f}" in q["feedback"][q["options"].index(about.format(100))], lang
    rng = np.random.default_rng(0)
    half = np.array([0.5, 0.5])
    assert tv_noise_band(half, 385, rng, 20_000) == pytest.approx(0.05, abs=0.004)
    assert tv_noise_band(half, 100, rng, 20_000) == pytest.approx(0.098, abs=0.006)


def test_the_distortion_question():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    keep_all = total_variation(emitted_law(p, q, "accept_all"), p)
    resample = total_variation(emitted_law(p, q, "resample_from_p"), p)
    r = 1 - np.minimum(p, q).sum()
    residual = np.maximum(p - q, 0) / r
    assert keep_all == pytest.approx(0.4) == pytest.approx(r)
    assert resample == pytest.approx(0.16) == pytest.approx(r * total_variation(p, residual))
    for lang, right in (("en", "0.4 and 0.16"), ("zh", "0.4 和 0.16")):
        item = _quiz(lang)[2]
        assert item["options"][item["answer"]] == right


class _TiedLaw(_Law):
    """Token 2 is cut from both rows but ties a kept token: token 1 at the first position, token 0
    after token 0."""

    def stand_in(self, given: int | None, token: int) -> int | None:
        if token != 2:
            return None
        return 1 if given is None else 0


def test_a_tie_at_a_cut_counts_as_the_kept_token_it_ties():
    law = _TiedLaw(rows={0: (0.9, 0.1, 0.0), 1: (0.5, 0.5, 0.0), 2: (0.5, 0.5, 0.0)})
    tally = _tally({(0, 0): 9, (0, 2): 1, (1, 0): 4, (1, 1): 5, (2, 1): 1})
    obs, probs = joint_cells(tally, law)  # n = 20
    # (0, 2) joins (0, 0); a first token 2 merges with first token 1 into one whole-row cell
    assert obs.tolist() == [10, 10, 0] and probs.tolist() == pytest.approx([0.45, 0.5, 0.05])
    assert joint_test(tally, law).p_value > 0
    assert joint_test(tally, _Law(rows=law.rows)).p_value == 0.0  # the same counts, ties not allowed


def test_the_text_states_the_tests_constants_as_the_code_has_them():
    from specdec_core.live.law import TIE_LOGITS
    from specdec_core.stats import MC_BAND, MC_DRAWS

    assert (MC_DRAWS, TIE_LOGITS, MC_BAND) == (2000, 1e-3, (1e-6, 0.02))
    for lang in ("en", "zh"):
        text = (LESSONS / lang / "law_live.md").read_text("utf-8")
        for shown in ("2,000", "10⁻³", "$10^{-6}$", "0.02", "M = 2{,}000"):
            assert shown in text, (lang, shown)
    assert MAX_SAMPLES == 2000
