"""Every number a transfer or "predict, then press" question states, recomputed by specdec_core.

Each check names the question by page and index, computes the number, and requires its
rounded form in the question or the right option in both languages, so an edit of either
side that breaks the agreement fails here.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from types import SimpleNamespace

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from specdec_core.course import block as block_demo
from specdec_core.course import cards, cost, pairs, sampling_lab
from specdec_core.course import tree_drafts as tree_demo
from specdec_core.engine.drafters import keeps_draft
from specdec_core.engine.gamma import HeuristicGamma
from specdec_core.live import compare
from specdec_core.sampling import SamplingConfig, apply, greedy, greedy_equivalence
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, measured_alpha, speedup
from specdec_core.token_tree import node_budget
from specdec_core.variants import emitted_law
from specdec_core.verify import (
    candidate_acceptance,
    coverage,
    decompose,
    output_distribution,
    project,
    rejection_flows,
    tree,
)

P = np.array([0.1, 0.6, 0.3])  # the fresh A, B, C pair of the overlap and tree questions
Q = np.array([0.6, 0.2, 0.2])


def _item(lang: str, page: str, index: int) -> dict:
    return tomllib.loads((LESSONS / lang / f"{page}.toml").read_text("utf-8"))["quiz"][index]


def _question(lang: str, page: str, index: int) -> tuple[str, str]:
    item = _item(lang, page, index)
    return item["question"], item["options"][item["answer"]]


def _stated(page: str, index: int, *numbers: str, where: str = "answer") -> None:
    """Each number is in the right option (where="answer"), the question, or some option."""
    for lang in ("en", "zh"):
        question, right = _question(lang, page, index)
        text = {
            "answer": right,
            "question": question,
            "options": " ".join(_item(lang, page, index)["options"]),
        }[where]
        for number in numbers:
            assert number in text, f"{lang}/{page} Q{index + 1}: {number!r} not in {text!r}"


def test_block_three_tokens_with_acceptance_by_position():
    a = np.array([0.8, 0.6, 0.3])
    _stated("block", 3, "0.8", "0.6", "0.3", where="question")
    _stated("block", 3, f"{a[0] * a[1] * (1 - a[2]):.3f}")


def test_block_repetition_penalty_of_a_drafted_token():
    _stated("block", 5, "1.3", "3.9", where="question")
    _stated("block", 5, f"{3.9 / 1.3:.1f}")


def test_block_identical_draft_commits_gamma_plus_one():
    target = block_demo.target_chain("story")
    demo = block_demo.BlockDemo(
        target, block_demo.draft_chain(target, "identical"), [0], 5, 7, SamplingConfig(temperature=0.5)
    )
    for _ in range(20):
        demo.step()
    assert {len(r.committed) for r in demo.rounds} == {6}
    _stated("block", 7, "6")


def test_block_cache_lengths_after_draft_three_falls():
    target = block_demo.target_chain("story")
    draft = block_demo.draft_chain(target, "good")
    prompt = [i % len(block_demo.WORDS) for i in range(40)]
    for seed in range(200):
        first = block_demo.BlockDemo(target, draft, prompt, 4, seed).step()
        if first.accepted == 2:
            break
    assert first.accepted == 2 and first.length_after == 43
    assert first.target_cache == block_demo.CacheLengths(39, 44, 42)
    assert first.draft_cache == block_demo.CacheLengths(39, 43, 42)
    _stated("block", 0, "40", "39", "γ = 4", where="question")
    _stated("block", 0, "44 → 42", "43 → 42")


def test_block_mamba_checkpoints_of_one_round():
    layers, width, state, conv, gamma = 48, 2048, 16, 4, 3
    per_checkpoint = layers * width * (state + conv)
    _stated("block", 6, "48", "2048", "16", "γ = 3", where="question")
    _stated("block", 6, f"{(gamma + 1) * per_checkpoint * 4 / 1e6:.1f} MB")


def _cell(*runs: tuple[int, int, int]) -> compare.Cell:
    """A compare cell over prompts given as (tokens, target passes, draft forwards)."""
    measured = tuple(
        compare.Measured("t", "d", "c", i, tokens, passes, forwards, 0, 0, 1.0, 1.0, ())
        for i, (tokens, passes, forwards) in enumerate(runs)
    )
    return compare.Cell("t", "d", "c", measured, measured, True)


def test_compare_tau_pools_the_prompts():
    cell = _cell((30, 12, 0), (30, 6, 0))
    pooled = cell.tau  # the page's τ: all committed tokens ÷ all target passes
    assert pooled == pytest.approx(60 / 18) == pytest.approx(cell.projected(0.0))
    _stated("compare", 0, f"{sum(cell.taus) / 2:.2f}", where="options")  # the prompts' mean, a wrong option
    _stated("compare", 0, "30", "12", "6", where="question")
    _stated("compare", 0, f"{pooled:.2f}")


def test_compare_projections():
    _stated("compare", 1, f"{_cell((48, 16, 0)).projected(0.05):.1f}")
    model = _cell((60, 20, 80))
    _stated("compare", 2, f"{model.projected(0.1):.1f}", f"{model.projected(0.0):.1f}")


def test_cost_expected_tokens_and_speedup():
    _stated("cost", 0, f"{expected_tokens(0.7, 3):.2f}")
    beta = 0.1  # the question states its β, so its key does not follow a new measurement
    now = cost.cost_summary(0.7, 3, 0.05, linear_verify_cost(beta), 16)
    _stated("cost", 5, "0.70", "γ = 3", "c = 0.05", f"β = {beta:g}", where="question")
    _stated("cost", 5, f"{now.speedup:.2f}×")
    ideal, no_draft = speedup(0.7, 3, 0.05), expected_tokens(0.7, 3) / (1 + 3 * beta)
    _stated("cost", 5, f"{ideal:.2f}×", f"{no_draft:.2f}×", where="options")  # the wrong prices
    assert len({f"{x:.2f}" for x in (now.speedup, ideal, no_draft)}) == 3


def test_cost_best_gamma_of_a_barely_paying_draft():
    assert best_gamma(0.45, 0.35) == 1
    assert all(speedup(0.45, g, 0.35) < 1 for g in range(2, 33))
    _stated("cost", 2, "α = 0.45", "c = 0.35", where="question")
    _stated("cost", 2, "γ = 1", f"{speedup(0.45, 1, 0.35):.2f}×")


def test_cost_heuristic_schedule_after_three_rounds():
    schedule = HeuristicGamma(5)
    for accepted_all in (True, False, True):
        gamma = schedule.next_gamma()
        schedule.update(gamma, gamma if accepted_all else 1, rejected=not accepted_all)
    _stated("cost", 4, "γ = 5", where="question")
    for lang in ("en", "zh"):
        assert _question(lang, "cost", 4)[1].startswith(f"{schedule.next_gamma()}"), lang


def test_cost_top1_rule_output():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.5, 0.2])
    law = emitted_law(p, q, "argmax_match")
    assert law.sum() == pytest.approx(1.0)
    _stated("cost", 6, "(0.5, 0.3, 0.2)", "(0.3, 0.5, 0.2)", where="question")
    _stated("cost", 6, f"{law[0]:.2f}")


def test_cost_batch_of_48_stays_under_the_ridge():
    compute_ms = 48 * 5 * 2 * 70e9 / 989e12 * 1e3
    read_ms = 140e9 / 3.35e12 * 1e3
    assert compute_ms < read_ms
    _stated("cost", 3, "240", f"{compute_ms:.0f} ms", f"{read_ms:.0f} ms")


def test_live_measured_acceptance_from_round_sizes():
    gamma, sizes = 4, (5, 2, 1, 3, 5)
    rounds = [
        SimpleNamespace(accepted=min(n - 1, gamma), rejected=None if n == gamma + 1 else 0) for n in sizes
    ]
    examined = sum(r.accepted + (r.rejected is not None) for r in rounds)
    alpha = block_demo.measured_alpha(rounds)
    _stated("live", 0, "γ = 4", where="question")
    for lang in ("en", "zh"):
        assert "".join(map(str, sizes)) in "".join(re.findall(r"\d+", _question(lang, "live", 0)[0])), lang
    _stated("live", 0, f"{sum(r.accepted for r in rounds)}/{examined}", f"{alpha:.2f}")


def test_live_one_hot_draft_stands_with_p_and_falls_to_the_residual():
    p = np.array([0.7, 0.2, 0.1])
    d = decompose(p, np.array([1.0, 0.0, 0.0]))
    _stated("live", 2, "(0.7, 0.2, 0.1)", where="question")
    _stated("live", 2, f"{d.acceptance_rate:.1f}", f"Lyon {d.residual[1]:.2f}", f"Rome {d.residual[2]:.2f}")


def test_notation_counts_and_the_greedy_position():
    accepted, examined, rounds = 39, 60, 25
    alpha_hat = measured_alpha(accepted, examined)
    _stated("notation", 0, str(accepted), str(examined), str(rounds), where="question")
    _stated("notation", 0, f"{alpha_hat:.2f}", where="question")
    for lang in ("en", "zh"):
        feedback = " ".join(_item(lang, "notation", 0)["feedback"])
        assert f"{(accepted + rounds) / rounds:.2f}" in feedback, lang
    p, q = np.array([0.4, 0.45, 0.15]), np.array([0.5, 0.3, 0.2])
    greedy = SamplingConfig(temperature=0.0)
    tempered = decompose(apply(np.log(p), greedy).probs, apply(np.log(q), greedy).probs)
    assert tempered.acceptance_rate == 0.0
    _stated("notation", 2, "(0.4, 0.45, 0.15)", "(0.5, 0.3, 0.2)", where="question")
    _stated("notation", 2, f"{tempered.acceptance_rate:.0f}")
    for lang in ("en", "zh"):
        assert f"{decompose(p, q).acceptance_rate:.2f}" in _item(lang, "notation", 2)["options"][0], lang


def test_notation_a_papers_k_of_six_gives_seven_rows():
    target = block_demo.target_chain("story")
    round_ = block_demo.BlockDemo(target, block_demo.draft_chain(target, "good"), [0], 6, 7).step()
    assert len(round_.q_rows) == 6
    _stated("notation", 1, "K = 6", where="question")
    _stated("notation", 1, f"{len(round_.p_rows)}")


def test_self_spec_floor_stops_the_third_draft():
    a, b, third, floor = 0.8, 0.5, 0.4, 0.2
    assert keeps_draft(a * b, 1, floor) and not keeps_draft(a * b * third, 2, floor)
    _stated("self_spec", 6, "0.8", "0.5", "0.4", "0.2", where="question")
    _stated("self_spec", 6, f"{a * b * third:.2f}")


def test_overlap_residual_keep_rule_and_gaussians():
    d = decompose(P, Q)
    assert d.rejection_mass == pytest.approx(0.5)
    _stated("overlap", 0, f"{d.residual[1]:.1f}", f"{d.residual[2]:.1f}")
    _stated("overlap", 6, f"{float(P @ Q):.2f}", f"{d.acceptance_rate:.1f}")
    both_tails = 2 * 0.5 * (1 + math.erf(-1 / math.sqrt(2)))  # N(0, 1) against N(2, 1)
    _stated("overlap", 7, f"{both_tails:.3f}")


def test_overlap_acceptance_and_resampling_from_p():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.45, 0.2, 0.35])
    _stated("overlap", 1, "(0.5, 0.5, 0)", "(0.45, 0.2, 0.35)", where="question")
    _stated("overlap", 1, f"{decompose(p, q).acceptance_rate:.2f}")
    law = emitted_law(P, Q, "resample_from_p")
    _stated("overlap", 3, "(0.1, 0.6, 0.3)", "(0.6, 0.2, 0.2)", where="question")
    _stated("overlap", 3, "(" + ", ".join(f"{x:.2f}" for x in law) + ")")
    for lang in ("en", "zh"):
        assert f"{0.5 * np.abs(law - P).sum():.1f}" in _item(lang, "overlap", 3)["feedback"][1], lang


def test_overlap_q_zero_preset():
    pair = pairs.to_pair(pairs.preset_rows("q_zero"))
    d = decompose(pair.p, pair.q)
    r = ", ".join(f"{x:g}" for x in d.residual)
    _stated("overlap", 4, f"R = {d.rejection_mass:.1f}", f"r = ({r})")


def test_race_free_draft_on_chat_and_bf16_on_a_gpu():
    beta = 0.1  # stated in the question: the key holds whatever this machine measures
    cpu = linear_verify_cost(beta)
    at4, at1 = speedup(0.35, 4, 0.0, cpu), speedup(0.35, 1, 0.0, cpu)
    assert at1 > at4 > 1
    _stated("race", 0, "α = 0.35", f"1 + {beta:g}γ", where="question")
    _stated("race", 0, f"{at4:.2f}", f"{at1:.2f}")
    _stated("race", 0, f"{expected_tokens(0.35, 4):.2f}", f"{expected_tokens(0.35, 1):.2f}", where="options")
    _stated("race", 1, "α = 0.99", "c = 0.1", "γ = 6", where="question")
    _stated("race", 1, f"{speedup(0.99, 6, 0.1):.2f}")
    _stated("race", 1, f"{expected_tokens(0.99, 6):.2f}", where="options")


def test_race_quantised_copies_on_a_memory_bound_gpu():
    int8, int4 = speedup(0.99, 4, 0.5), speedup(0.95, 4, 0.25)
    assert int4 > int8 > 1
    _stated("race", 5, "c = 0.5", "α = 0.99", "c = 0.25", "α = 0.95", "γ = 4", where="question")
    _stated("race", 5, "int4", f"{int4:.2f}×", f"{int8:.2f}×")
    _stated("race", 5, f"{expected_tokens(0.99, 4):.2f}", f"{expected_tokens(0.95, 4):.2f}", where="options")


def test_cost_a_phone_prices_its_draft_by_bytes():
    c = 0.25 / 1.5  # memory-bound: a step's time is its bytes over the bandwidth
    right = speedup(0.7, 3, c)
    _stated("cost", 8, "1.5 GB", "0.25 GB", "α = 0.7", "γ = 3", where="question")
    _stated("cost", 8, f"{right:.2f}×")
    wrong = (expected_tokens(0.7, 3), expected_tokens(0.7, 3) / (3 * c + 4), speedup(0.7, 3, 0.25))
    _stated("cost", 8, *(f"{x:.2f}×" for x in wrong), where="options")
    assert len({f"{x:.2f}" for x in (right, *wrong)}) == 4


def test_cost_a_compute_bound_batch_slows_down():
    right = speedup(0.8, 4, 0.0, linear_verify_cost(1.0))  # verifying γ + 1 tokens costs γ + 1 steps
    assert right < 1
    _stated("cost", 9, "α = 0.8", "γ = 4", where="question")
    _stated("cost", 9, f"{right:.2f}×")
    wrong = (speedup(0.8, 4, 0.0), expected_tokens(0.8, 4) / 4, 1.0)
    _stated("cost", 9, *(f"{x:.2f}×" for x in wrong), where="options")


def test_overlap_two_drafts_chosen_by_a_coin():
    p = np.array([0.5, 0.3, 0.2])
    q1, q2 = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.2, 0.2])
    alphas = [decompose(p, q).acceptance_rate for q in (q1, q2)]
    for q in (q1, q2):
        np.testing.assert_allclose(output_distribution(p, q), p, atol=1e-12)  # p, whichever side
    mixture = 0.5 * (q1 + q2)
    _stated("overlap", 8, "(0.5, 0.3, 0.2)", "(0.2, 0.3, 0.5)", "(0.6, 0.2, 0.2)", where="question")
    _stated("overlap", 8, f"{sum(alphas) / 2:.1f}")
    _stated(
        "overlap", 8, f"{decompose(p, mixture).acceptance_rate:.2f}", f"{min(alphas):.1f}", where="options"
    )


def test_race_two_drafts():
    a, b = speedup(0.6, 4, 0.02, 1.0), speedup(0.85, 4, 0.1, 1.0)
    _stated("race", 3, f"{b:.2f}×", f"{a:.2f}×")


def test_sampling_lab_flat_top_k():
    flat = np.array([v for _, v in sampling_lab.example_rows("flat", "en")])
    probs = apply(flat, SamplingConfig(top_k=3)).probs
    _stated("sampling_lab", 5, f"{probs.max():.3f}")
    shown = [f"{x:.3f}" for x in apply(flat, SamplingConfig()).probs]
    _stated("sampling_lab", 5, *shown, where="question")


def test_tokenizers_reduced_head_and_coverage():
    p, q = np.array([0.35, 0.45, 0.2]), np.array([0.3, 0.2, 0.5])
    cut = project(q, np.array([0, 1, -1]), 3)
    before, after = decompose(p, q).acceptance_rate, decompose(p, cut).acceptance_rate
    assert after > before and np.allclose(output_distribution(p, cut), p)
    _stated("tokenizers", 0, "(0.35, 0.45, 0.2)", "(0.3, 0.2, 0.5)", where="question")
    _stated("tokenizers", 0, f"{before:.1f}", f"{after:.2f}")
    p = np.array([0.3, 0.5, 0.2])
    q, twins = np.array([0.45, 0.3, 0.25]), np.array([0, 1, -1])  # z has no twin
    alpha = decompose(p, project(q, twins, 3)).acceptance_rate
    _stated("tokenizers", 1, "(0.3, 0.5, 0.2)", "(0.45, 0.3, 0.25)", where="question")
    _stated("tokenizers", 1, f"{coverage(q, twins):.2f}", f"α = {alpha:.2f}")
    _stated(
        "tokenizers",
        1,
        f"α = {decompose(p, q).acceptance_rate:.2f}",
        f"α = {p[:2].sum():.2f}",
        where="options",
    )


def test_tree_leaves_of_b_and_the_q_zero_tally():
    t = tree(P, Q, labels=["A", "B", "C"])
    _stated("tree", 0, f"{t.leaf_totals[1]:.1f}")
    pair = pairs.to_pair(pairs.preset_rows("q_zero"))
    flows = rejection_flows(pair.p, pair.q)
    assert flows[:, 2].sum() == pytest.approx(pair.p[2])  # all of C's mass arrives by rejection
    _stated("tree", 3, f"{pair.p[2]:.1f}")


def test_tree_flow_from_one_surplus_token_to_one_deficit_token():
    p, q = np.array([0.4, 0.1, 0.2, 0.3]), np.array([0.1, 0.3, 0.4, 0.2])
    flows = rejection_flows(p, q)
    _stated("tree", 1, "(0.4, 0.1, 0.2, 0.3)", "(0.1, 0.3, 0.4, 0.2)", where="question")
    _stated("tree", 1, f"{flows[2, 3]:.2f}")
    _stated(
        "tree", 1, f"{flows[2].sum():.2f}", f"{flows[2, 0]:.2f}", f"{flows[:, 3].sum():.2f}", where="options"
    )


def test_tree_drafts_nodes_and_depth():
    target, draft = tree_demo.lesson_pair("story", "identical")
    wide = tree_demo.TreeDemo(target, draft, [0], (2, 2, 1), 7)
    wide.step()
    _stated("tree_drafts", 0, f"{wide.rounds[0].nodes}", where="question")
    _stated("tree_drafts", 0, "4")
    narrow = tree_demo.TreeDemo(target, draft, [0], (2, 1, 1), 7)
    for _ in range(20):
        narrow.step()
    assert {len(r.committed) for r in narrow.rounds} == {4}
    _stated("tree_drafts", 4, "4")


def test_self_spec_medusa_tree_size_and_reach():
    target, draft = tree_demo.lesson_pair("random", "identical")  # dense rows: every node gets its children
    medusa = tree_demo.TreeDemo(target, draft, [0], (3, 2), 7)
    for _ in range(10):
        medusa.step()
    assert {r.nodes for r in medusa.rounds} == {node_budget((3, 2))} == {9}
    assert {len(r.committed) for r in medusa.rounds} == {3}  # a full path and its bonus, at most
    _stated("self_spec", 2, "9", "3")


def test_self_spec_reduced_vocabulary_keeps_p():
    p = np.array([0.45, 0.27, 0.18, 0.1])  # the last token lies outside the head's vocabulary
    kept = np.array([0, 1, 2])
    q = project(p[kept] / p[kept].sum(), kept, len(p))
    assert coverage(p, np.array([0, 1, 2, -1])) == pytest.approx(0.9)
    alpha = decompose(p, q).acceptance_rate
    outside = output_distribution(p, q)[3]
    _stated("self_spec", 4, "0.1", "0.9", where="question")
    _stated("self_spec", 4, f"α = {alpha:.1f}", f"{outside:.1f}")


def test_self_spec_calibrated_chain_commits_on_average():
    confidences = np.array([0.9, 0.7, 0.4])
    chain = np.cumprod(confidences)
    assert all(keeps_draft(float(c), i, 0.2) for i, c in enumerate(chain))  # the engine drafts all three
    _stated("self_spec", 5, "0.9", "0.7", "0.4", where="question")
    _stated("self_spec", 5, f"{1 + chain.sum():.2f}")
    _stated("self_spec", 5, f"{1 + confidences.sum():.2f}", f"{1 + chain[-1]:.2f}", where="options")


def test_tree_drafts_two_distinct_candidates():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.3, 0.1, 0.6])
    _stated("tree_drafts", 2, "(0.6, 0.3, 0.1)", "(0.3, 0.1, 0.6)", where="question")
    _stated("tree_drafts", 2, f"{candidate_acceptance(p, q, 2, replacement=False):.3f}")
    with_replacement, one = candidate_acceptance(p, q, 2), candidate_acceptance(p, q, 1)
    _stated(
        "tree_drafts",
        2,
        f"{with_replacement:.3f}",
        f"{one:.3f}",
        f"{1 - (1 - one) ** 2:.3f}",
        where="options",
    )


def test_the_heads_curves_fall_with_depth():
    card = cards.head_card()  # the shipped assets/head/card.json the figure reads
    assert card is not None
    for curve in (card.greedy_by_depth, card.alpha_by_depth):
        assert all(later < earlier for earlier, later in itertools.pairwise(curve))


def test_sampling_lab_top_p_after_temperature_and_at_a_tie():
    z = np.array([2.0, 1.0, 0.0])
    top = apply(z, SamplingConfig(temperature=2.0)).probs.max()
    assert greedy_equivalence(z, SamplingConfig(temperature=2.0, top_p=round(top, 3)))[0]
    assert not greedy_equivalence(z, SamplingConfig(temperature=2.0, top_p=round(top, 3) + 0.001))[0]
    _stated("sampling_lab", 1, "(2, 1, 0)", "T = 2", where="question")
    _stated("sampling_lab", 1, f"ρ ≤ {top:.3f}")
    _stated("sampling_lab", 1, f"ρ ≤ {apply(z, SamplingConfig()).probs.max():.3f}", where="options")
    tied = np.array([1.0, 3.0, 3.0, 0.0])
    assert apply(tied, SamplingConfig(top_p=0.2)).support == (2,) and greedy(tied) == 1
    _stated("sampling_lab", 3, "(1, 3, 3, 0)", "top-p = 0.2", where="question")
    _stated("sampling_lab", 3, "#2", "#1")


def test_sampling_lab_floor_keeps_four():
    flat = np.array([v for _, v in sampling_lab.example_rows("flat", "en")])
    probs = apply(flat, SamplingConfig(top_k=1, top_p=0.5, min_tokens_to_keep=4)).probs
    assert np.count_nonzero(probs) == 4
    _stated("sampling_lab", 4, "4", f"{_kept_mass(flat, 4):.3f}", f"{probs[0]:.3f}")


def _kept_mass(logits: np.ndarray, k: int) -> float:
    return float(np.sort(apply(logits, SamplingConfig()).probs)[::-1][:k].sum())
