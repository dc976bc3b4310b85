"""Decision rules the lesson pages and the race page used to hold, now in specdec_core.course
and specdec_core.live.race (the pages call these and keep only widgets, text and figures)."""

import pytest

from specdec_core.course import block, cost, overlap
from specdec_core.course import pairs as examples
from specdec_core.course import sampling_lab as lab
from specdec_core.live import race
from specdec_core.live.model_choices import DraftSpec
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, speedup
from tests.test_block_demo import replay


@pytest.mark.parametrize(
    ("p_value", "verdict"),
    [
        (1.0, "fits"),
        (0.01, "fits"),
        (0.00999, "borderline"),
        (0.001, "borderline"),
        (0.000999, "fails"),
        (0.0, "fails"),
    ],
)
def test_monte_carlo_verdict_thresholds(p_value, verdict):
    assert overlap.mc_verdict(p_value) == verdict


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_monte_carlo_verdict_refuses_a_value_that_is_no_p_value(bad):
    with pytest.raises(ValueError, match="p-value"):
        overlap.mc_verdict(bad)


def test_a_real_run_fits_when_exact_and_fails_when_broken():
    pair = examples.to_pair(examples.preset_rows("abc"))
    exact = overlap.monte_carlo(pair.p, pair.q, 20_000, 3, "exact")
    broken = overlap.monte_carlo(pair.p, pair.q, 20_000, 3, "resample_from_p")
    assert exact.verdict == overlap.mc_verdict(exact.chi.p_value) == "fits"
    assert broken.verdict == "fails"


# ---------------------------------------------------------------- cost lesson

SEED = ((0.9, 4, 4.1), (0.9, 7, 6.5), (0.7, 4, 2.8), (0.7, 7, 3.6), (0.5, 4, 1.9))


def test_the_seed_table_has_exactly_two_wrong_rows():
    checks = cost.check_claims(SEED)
    assert [(c.alpha, c.gamma) for c in checks if not c.matches] == [(0.9, 7), (0.7, 7)]
    by_row = {(c.alpha, c.gamma): c.computed for c in checks}
    assert f"{by_row[(0.9, 7)]:.2f}" == "5.70" and f"{by_row[(0.7, 7)]:.2f}" == "3.14"
    # the text's "ideal speedup = expected tokens" is the case c = 0, verification = 1 step
    assert all(c.speedup == pytest.approx(c.computed) for c in checks)
    costly = cost.check_claims(SEED, 0.2, linear_verify_cost(0.1))
    assert all(c.speedup < c.computed for c in costly)


def test_a_claim_matches_only_within_rounding():
    assert cost.ClaimCheck(0.5, 4, 1.9, 1.9375, 1.0).matches  # 1.9375 rounds to 1.9
    assert not cost.ClaimCheck(0.5, 4, 1.8, 1.9375, 1.0).matches


@pytest.mark.parametrize(("c", "verify"), [(0.05, 1.0), (0.3, 1.0), (0.1, linear_verify_cost(0.075))])
def test_cost_summary_is_the_theory(c, verify):
    now = cost.cost_summary(0.8, 4, c, verify, 16)
    assert now.tokens == pytest.approx(expected_tokens(0.8, 4))
    assert now.speedup == pytest.approx(speedup(0.8, 4, c, verify))
    assert now.round_cost == pytest.approx(now.tokens / now.speedup)
    assert now.best_gamma == best_gamma(0.8, c, verify, 16)
    assert now.best_speedup == pytest.approx(speedup(0.8, now.best_gamma, c, verify))


def test_best_gamma_moves_with_the_draft_cost():
    cheap, costly = cost.cost_summary(0.8, 4, 0.05, 1.0, 16), cost.cost_summary(0.8, 4, 0.3, 1.0, 16)
    assert cheap.best_gamma > costly.best_gamma


@pytest.mark.parametrize(
    ("value", "best", "verdict"),
    [
        (1.2, 1.5, "faster"),
        (1.0, 1.0, "faster"),
        (0.9, 1.3, "slower"),
        (0.99, 1.0, "slower"),
        (0.5, 0.99, "never"),
    ],
)
def test_speedup_verdict_against_break_even(value, best, verdict):
    assert cost.speedup_verdict(value, best) == verdict


def test_cost_summary_says_whether_the_setting_pays_off():
    assert cost.cost_summary(0.8, 4, 0.05, 1.0, 16).verdict == "faster"
    slow = cost.cost_summary(0.6, 16, 0.3, 1.0, 16)  # too long a draft for its cost
    assert slow.verdict == "slower" and slow.best_speedup > 1 > slow.speedup
    never = cost.cost_summary(0.1, 4, 0.9, 1.0, 16)
    assert never.verdict == "never" and never.best_speedup < 1
    assert cost.cost_summary(0.999, 4, 0.0, 1.0, 16).best_at_limit
    assert not cost.cost_summary(0.8, 4, 0.05, 1.0, 16).best_at_limit


# ---------------------------------------------------------------- sampling lab


@pytest.mark.parametrize("language", ["en", "zh"])
def test_examples_load_in_each_language_and_random_ones_follow_their_seed(language):
    data = lab.examples()
    for name, preset in data["presets"].items():
        rows = lab.example_rows(name, language)
        assert [r[0] for r in rows] == preset["tokens"][language]
        assert [r[1] for r in rows] == preset["logits"]
    random = lab.example_rows("random", language, size=5, seed=7)
    assert [r[0] for r in random] == data["random_tokens"][language][:5]
    assert [r[1] for r in random] == lab.random_logits(5, 7).tolist()
    assert random != lab.example_rows("random", language, size=5, seed=8)
    with pytest.raises(ValueError, match="no example"):
        lab.example_rows("nonsense", language)


def test_rows_survive_the_url_and_out_of_range_tables_are_refused():
    rows = (("a,b", 1.5), ("\\", -2.0), ("c", 0.0))
    assert lab.rows_from_url(lab.rows_to_url(rows), 3, 12) == rows
    with pytest.raises(ValueError, match="3 to 12 rows"):
        lab.rows_from_url("a:1,b:2", 3, 12)
    with pytest.raises(ValueError, match="±100"):
        lab.rows_from_url("a:1,b:2,c:100.5", 3, 12)
    assert lab.rows_from_url("a:1,b:2,c:-100", 3, 12)[2] == ("c", -100.0)
    with pytest.raises(ValueError):
        lab.rows_from_url("a:1,b,c:2", 3, 12)


def test_an_edited_table_is_used_only_when_complete_and_within_the_limits():
    assert lab.edited_rows(["a", "b", "c"], [1, 2.5, 0], 3, 12) == (
        (("a", 1.0), ("b", 2.5), ("c", 0.0)),
        None,
    )
    assert lab.edited_rows(["a", "b"], [1, 2], 3, 12) == (None, "rows")
    assert lab.edited_rows(list("abcdefghijklm"), [0] * 13, 3, 12) == (None, "rows")
    assert lab.edited_rows(["a", None, "c"], [1, 2, 3], 3, 12) == (None, "missing")
    assert lab.edited_rows(["a", "b", "c"], [1, float("nan"), 3], 3, 12) == (None, "missing")


# ---------------------------------------------------------------- block lesson


def test_earlier_text_is_the_text_before_the_latest_round_with_each_tokens_kind():
    target = block.target_chain("story")
    draft = block.draft_chain(target, "poor")
    fresh = replay(target, draft, [0, 3], 3, seed=5, rounds=0)
    assert block.earlier_text(fresh) == ([0, 3], ["prompt", "prompt"])
    for n in (1, 2, 12):
        demo = replay(target, draft, [0, 3], 3, seed=5, rounds=n)
        tokens, kinds = block.earlier_text(demo)
        last = demo.rounds[-1]
        assert tokens + last.committed == demo.committed
        assert kinds == ["prompt", "prompt"] + [k for rnd in demo.rounds[:-1] for k in rnd.kinds]
        assert len(kinds) == len(tokens) and set(kinds) <= {"prompt", "accepted", "corrected", "bonus"}
    assert "corrected" in kinds  # a poor draft is rejected somewhere in twelve rounds


# ---------------------------------------------------------------- draft race


def test_depths_are_read_sorted_once_each_with_either_comma():
    assert race.parse_depths("27, 10,20") == [10, 20, 27]
    assert race.parse_depths("20，10, 10 ,") == [10, 20]
    for bad in ("", " , ", "10, x", "0, 5", "-3", "2.5"):
        with pytest.raises(ValueError, match="depths"):
            race.parse_depths(bad)


def test_race_entries_name_each_draft_and_round_trip_the_depth():
    entries = race.race_entries(["ngram", "layerskip", "custom", "bf16"], "20, 10", "  ./my-draft ")
    assert entries == [
        ("ngram", DraftSpec("ngram")),
        ("layerskip-10", DraftSpec("layerskip", 10)),
        ("layerskip-20", DraftSpec("layerskip", 20)),
        ("custom", DraftSpec("custom", source="./my-draft")),
        ("bf16", DraftSpec("bf16")),
    ]
    assert [race.key_depth(key) for key, _ in entries] == [None, 10, 20, None, None]
    assert race.key_depth(race.BASELINE) is None
    assert race.race_entries(["ngram"], "not read without layer-skip", "") == [("ngram", DraftSpec("ngram"))]
    with pytest.raises(ValueError, match="depths"):
        race.race_entries(["layerskip"], "ten", "")


def test_a_result_is_filed_under_its_preset_only_while_the_prompt_is_unchanged():
    assert race.race_task("Copy this: abc", "copy", "Copy this: abc") == "copy"
    assert race.race_task("Copy this: abd", "copy", "Copy this: abc") == "custom"
