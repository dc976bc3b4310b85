"""Exercise sheets: seeded, reproducible, free of NaN, and every key recomputed independently
here with exact fractions (or plain floats where an exponential is involved)."""

from __future__ import annotations

import math
import re
import tomllib
from fractions import Fraction

import pytest

from specdec_core.course.exercise_sheet import fill, render
from specdec_core.course.exercises import MARGIN, STORY, TOPICS, GivenUniforms, Sheet, make_sheet
from support.apptest import ROOT

SEEDS = range(40)
F = Fraction


def _text(lang: str) -> dict:
    return tomllib.loads((ROOT / "lessons" / lang / "exercises.toml").read_text("utf-8"))


def _problems(topic: str, per_topic: int = 3):
    for seed in SEEDS:
        yield from make_sheet(seed, [topic], per_topic).problems


def _exact(values) -> list[Fraction]:
    return [F(str(v)) for v in values]


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield obj


def test_the_same_seed_gives_the_same_sheet_and_other_seeds_differ():
    assert make_sheet(7, per_topic=2) == make_sheet(7, per_topic=2)
    sheets = [make_sheet(seed) for seed in range(12)]
    for topic in TOPICS:
        givens = [repr(pr.given) for sh in sheets for pr in sh.problems if pr.topic == topic]
        assert len(set(givens)) >= 10, topic  # fresh numbers, seed after seed


def test_a_topic_keeps_its_numbers_whatever_else_the_sheet_holds():
    full = {(pr.topic, pr.number): pr for pr in make_sheet(5, per_topic=2).problems}
    for pr in make_sheet(5, ["block", "tokens"], per_topic=2).problems:
        assert full[(pr.topic, pr.number)] == pr


def test_no_number_on_any_sheet_is_nan_or_infinite():
    for seed in SEEDS:
        for pr in make_sheet(seed, per_topic=3).problems:
            assert all(math.isfinite(x) for x in _numbers([pr.given, pr.answer])), (seed, pr.topic)


def test_bad_requests_are_refused():
    for args in ((-1,), (100_000,), (1, ["nope"]), (1, TOPICS, 0), (1, TOPICS, 4)):
        with pytest.raises(ValueError):
            make_sheet(*args)


def test_decompose_keys_match_exact_fractions():
    for pr in _problems("decompose"):
        p, q, a = _exact(pr.given["p"]), _exact(pr.given["q"]), pr.answer
        assert sum(p) == 1 and sum(q) == 1 and p != q
        deficit = [max(x - y, 0) for x, y in zip(p, q, strict=True)]
        r = sum(deficit)
        assert a["R"] == pytest.approx(float(r), abs=1e-12)
        assert a["alpha"] == pytest.approx(
            float(sum(min(x, y) for x, y in zip(p, q, strict=True))), abs=1e-12
        )
        assert a["alpha"] == pytest.approx(1 - a["R"], abs=1e-12)
        assert a["residual"] == pytest.approx([float(d / r) for d in deficit], abs=1e-12)
        assert a["accept"] == pytest.approx(
            [float(min(1, x / y)) for x, y in zip(p, q, strict=True)], abs=1e-12
        )
        assert a["surplus"] == pytest.approx(
            [float(max(y - x, 0)) for x, y in zip(p, q, strict=True)], abs=1e-12
        )


def test_tokens_keys_match_the_geometric_series():
    for pr in _problems("tokens"):
        alpha, gamma = F(str(pr.given["alpha"])), pr.given["gamma"]
        assert pr.answer["expected"] == pytest.approx(
            float(sum(alpha**i for i in range(gamma + 1))), rel=1e-12
        )
        assert pr.answer["one"] == pytest.approx(float(1 - alpha), abs=1e-12)
        assert pr.answer["all"] == pytest.approx(float(alpha**gamma), abs=1e-12)
        assert pr.answer["most"] == gamma + 1


def test_speedup_keys_match_a_search_over_gamma():
    for pr in _problems("speedup"):
        alpha, c = F(str(pr.given["alpha"])), F(str(pr.given["c"]))

        def value(g, alpha=alpha, c=c):
            return sum(alpha**i for i in range(g + 1)) / (g * c + 1)

        gamma, a = pr.given["gamma"], pr.answer
        assert a["cost"] == pytest.approx(float(gamma * c + 1), abs=1e-12)
        assert a["speedup"] == pytest.approx(float(value(gamma)), rel=1e-12)
        assert a["faster"] == (value(gamma) > 1)
        values = [value(g) for g in range(1, pr.given["max_gamma"] + 1)]
        assert a["best_gamma"] == 1 + values.index(max(values))
        assert a["best_speedup"] == pytest.approx(float(max(values)), rel=1e-12)


def _draw(law: list[Fraction], u: Fraction) -> int:
    """The first token whose cumulative probability exceeds u."""
    total = F(0)
    for i, w in enumerate(law):
        total += w
        if total > u:
            return i
    raise AssertionError("u ≥ 1")


def _hand_verify(p_rows, q_rows, drafts, uniforms):
    """The round as a student computes it, in exact fractions."""
    us = iter(uniforms)
    tokens, kinds = [], []
    for p, q, x in zip(p_rows, q_rows, drafts, strict=False):  # the last p row is the bonus row
        if next(us) < min(1, p[x] / q[x]):
            tokens.append(x)
            kinds.append("accepted")
            continue
        deficit = [max(a - b, 0) for a, b in zip(p, q, strict=True)]
        r = sum(deficit)
        tokens.append(_draw([d / r for d in deficit], next(us)))
        kinds.append("corrected")
        return tokens, kinds
    tokens.append(_draw(p_rows[-1], next(us)))
    kinds.append("bonus")
    return tokens, kinds


def test_block_keys_match_a_hand_simulation_in_fractions():
    outcomes = set()
    for pr in _problems("block"):
        g, a = pr.given, pr.answer
        labels = g["labels"]
        p_rows = [_exact(row) for row in g["p_rows"]]
        q_rows = [_exact(row) for row in g["q_rows"]]
        drafts = [labels.index(x) for x in g["drafts"]]
        assert all(q[x] > 0 for q, x in zip(q_rows, drafts, strict=True))  # the draft could propose it
        tokens, kinds = _hand_verify(p_rows, q_rows, drafts, _exact(g["uniforms"]))
        assert a["tokens"] == [labels[t] for t in tokens] and a["kinds"] == kinds
        assert a["accepted"] == kinds.count("accepted") and a["used"] == len(kinds) + (
            kinds[-1] == "corrected"
        )
        for u in g["uniforms"]:
            for x, alpha in zip(drafts, a["accept_probs"], strict=False):
                assert abs(u - alpha) >= MARGIN - 1e-12, (u, alpha, x)
        outcomes.add(tuple(kinds))
    assert ("accepted", "accepted", "bonus") in outcomes and ("corrected",) in outcomes
    assert ("accepted", "corrected") in outcomes


def test_given_uniforms_run_out_loudly():
    source = GivenUniforms([0.5])
    assert source.random() == 0.5
    with pytest.raises(ValueError):
        source.random()


def _softmax(logits, t=1.0):
    m = max(logits)
    e = [math.exp((x - m) / t) for x in logits]
    return [v / sum(e) for v in e]


def test_sampling_keys_match_a_direct_filter():
    for pr in _problems("sampling"):
        g, a = pr.given, pr.answer
        logits, rule, setting = g["logits"], g["rule"], g["setting"]
        base = _softmax(logits)
        order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))
        if rule == "top_k":
            kept = set(order[:setting])
            probs = base
        elif rule == "top_p":
            kept, mass = set(), 0.0
            for i in order:
                kept.add(i)
                mass += base[i]
                if mass >= setting:
                    break
            probs = base
        else:
            kept, probs = set(range(len(logits))), _softmax(logits, setting)
        total = sum(probs[i] for i in kept)
        expected = [probs[i] / total if i in kept else 0.0 for i in range(len(logits))]
        assert a["softmax"] == pytest.approx(base, abs=1e-12)
        assert a["probs"] == pytest.approx(expected, abs=1e-12)
        assert a["support"] == [g["labels"][i] for i in sorted(kept)]
        assert a["collapsed"] == (len(kept) == 1) and a["greedy"] == g["labels"][order[0]]


def test_the_story_key_finds_the_seeds_contradictions():
    own = make_sheet(0, ["story"]).problems[0].answer["own"]
    assert own["together"] == 22.5 and round(own["speedup"], 1) == 10.7  # not 16×
    assert own["check_only"] == 32.0 and own["speedup"] != STORY["claimed_speedup"]
    assert own["lines_if_rate"] == 7 * 17  # "16 of 17" with 7 corrections: 119 lines on four pages
    assert own["lines_per_round"] == pytest.approx(sum((16 / 17) ** i for i in range(8)), rel=1e-12)
    for pr in _problems("story", 1):
        g, fresh = pr.given, pr.answer["fresh"]
        assert fresh["speedup"] == pytest.approx(60 * g["hours_new"] / (g["draft_new"] + g["check_new"]))
        assert fresh["kept"] == pytest.approx((g["lines"] - g["corrections_new"]) / g["lines"])


_FIELD = re.compile(r"\{(\w+)(:[^{}]*)?\}")


def _fields(table: dict) -> set[str]:
    out = set()
    for value in table.values():
        if isinstance(value, dict):
            out |= _fields(value)
        elif isinstance(value, str):
            out |= {m.group(1) for m in _FIELD.finditer(value)}
    return out


def test_both_languages_fill_the_same_values():
    en, zh = _text("en")["sheet"], _text("zh")["sheet"]
    for topic in TOPICS:
        assert _fields(en[topic]) == _fields(zh[topic]), topic


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rendered_sheets_leave_no_placeholder_and_show_the_key_numbers(lang):
    text = _text(lang)
    for seed in range(8):
        sheet = make_sheet(seed, per_topic=2)
        both = render(sheet, text["sheet"], text["topic_names"], "both")
        leftovers = [m.group(0) for m in _FIELD.finditer(both) if not m.group(1).isdigit()]
        assert not leftovers, leftovers
        assert "nan" not in both.lower() and "inf" not in both.lower()
        assert both == render(sheet, text["sheet"], text["topic_names"], "sheet") + "\n" + render(
            sheet, text["sheet"], text["topic_names"], "key"
        )
        key = render(sheet, text["sheet"], text["topic_names"], "key")
        for pr in sheet.problems:
            if pr.topic == "speedup":
                assert f"{pr.answer['speedup']:.3f}" in key and f"= {pr.answer['best_gamma']}$" in key
            if pr.topic == "decompose":
                assert f"{pr.answer['R']:.3f}" in key
            if pr.topic == "block":
                assert " ".join(pr.answer["tokens"]) in key


def test_fill_leaves_katex_braces_alone():
    filled = fill(r"$\alpha^{\gamma} = {a:.2f}$, {b}, p_{i}", {"a": 0.5, "i": 2})
    assert filled == r"$\alpha^{\gamma} = 0.50$, {b}, p_2"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_key_prints_each_uniform_as_the_problem_does(lang):
    """u_2 = 0.6 in the key beside u_2 = 0.60 in the problem read as two numbers."""
    text = _text(lang)
    seen = 0
    for seed in range(12):
        sheet = make_sheet(seed, ["block"], per_topic=3)
        for pr in sheet.problems:
            both = render(Sheet(seed, (pr,)), text["sheet"], text["topic_names"], "both")
            printed = re.findall(r"u_(\d) = (\d\.\d+)", both)
            assert printed and all(len(v.split(".")[1]) == 2 for _, v in printed), printed
            assert all(v == f"{pr.given['uniforms'][int(k) - 1]:.2f}" for k, v in printed), printed
            seen += len(printed)
    assert seen > 100


@pytest.mark.parametrize(
    ("lang", "both", "wrong"),
    [("en", "Both drafts stand", "All 2 drafts"), ("zh", "两个草稿都通过", "2 个草稿全部通过")],
)
def test_two_drafts_are_both_not_all_two(lang, both, wrong):
    text = _text(lang)
    counts = {2: 0, 3: 0}
    for seed in range(40):
        sheet = make_sheet(seed, ["tokens"], per_topic=3)
        key = render(sheet, text["sheet"], text["topic_names"], "key")
        assert wrong not in key
        gammas = [pr.given["gamma"] for pr in sheet.problems]
        assert key.count(both) == gammas.count(2)
        counts[2] += gammas.count(2)
        counts[3] += sum(g > 2 for g in gammas)
    assert counts[2] and counts[3]
