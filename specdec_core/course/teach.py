"""The route of a 90-minute class through the course: each step's page, its minutes and the
address that sets the page up (its URL-state keys and values, as the page itself writes them).

What to show and what to ask lives with the words, in lessons/<lang>/teach.toml under
``[steps.<key>]``; this module holds the plan, so a test can open every link, and the numbers
those words quote, computed here from the same settings the links set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from specdec_core.course.exercises import story_problem
from specdec_core.course.sampling_lab import examples
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import expected_tokens, speedup

CLASS_MINUTES = 90


@dataclass(frozen=True)
class Step:
    """One stop of the route: ``key`` names its texts, ``page`` the course page it opens,
    ``query`` the page's URL state that sets it up (empty: the page has no controls)."""

    key: str
    page: str
    minutes: int
    query: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _q(**values: str) -> Mapping[str, str]:
    return MappingProxyType(values)


ROUTE: tuple[Step, ...] = (
    Step(
        "greedy", "sampling_lab", 10, _q(preset="peaked", T="1", k="0", p="0.78", min_keep="1", order="tkp")
    ),
    Step("overlap", "overlap", 12, _q(ov_preset="abc", ov_T="1", ov_variant="resample_from_p")),
    Step("tree", "tree", 8, _q(tree_preset="abc", tree_top_n="6", tree_seed="7")),
    Step(
        "block",
        "block",
        12,
        _q(
            block_chain="story", block_draft="good", block_k="4", block_seed="7", block_t="1", block_round="0"
        ),
    ),
    Step("notation", "notation", 3),
    Step("cost", "cost", 10, _q(cost_alpha="0.8", cost_gamma="4", cost_c="0.05", cost_verify="constant")),
    Step(
        "live",
        "live",
        10,
        _q(live_target="bundled", live_draft="ngram", live_preset="copy", live_gamma="4", live_t="0"),
    ),
    Step("race", "race", 8, _q(race_target="bundled", race_preset="summarise", race_gamma="4", race_t="0")),
    Step(
        "tree_drafts",
        "tree_drafts",
        7,
        _q(trd_chain="story", trd_draft="poor", trd_shape="2-2", trd_seed="7"),
    ),
    Step("self_spec", "self_spec", 5),
    Step(
        "exercises", "exercises", 5, _q(ex_seed="2026", ex_topics="decompose,tokens,block,story", ex_key="0")
    ),
)


@dataclass(frozen=True)
class Slot:
    """A step with its place on the clock: it runs from minute ``start`` to ``end``."""

    step: Step
    start: int
    end: int


def schedule(route: tuple[Step, ...] = ROUTE) -> list[Slot]:
    """The route on the clock, each step starting where the last one ended."""
    slots: list[Slot] = []
    clock = 0
    for step in route:
        if step.minutes <= 0:
            raise ValueError(f"step {step.key!r} needs a positive number of minutes, got {step.minutes}.")
        slots.append(Slot(step, clock, clock + step.minutes))
        clock += step.minutes
    return slots


#: The lower temperature the sampling step asks the room to try.
LOW_TEMPERATURE = 0.5


def _step(key: str) -> Step:
    return next(step for step in ROUTE if step.key == key)


def _support_size(logits: list[float], temperature: float, top_p: float) -> int:
    return int(apply(logits, SamplingConfig(temperature=temperature, top_p=top_p)).support.size)


def talking_points() -> dict[str, dict[str, Any]]:
    """The numbers each step's words quote (``{name}`` in teach.toml), per step key."""
    greedy = _step("greedy").query
    logits = examples()["presets"][greedy["preset"]]["logits"]
    top_p, t = float(greedy["p"]), float(greedy["T"])
    cost = _step("cost").query
    alpha, short, c = float(cost["cost_alpha"]), int(cost["cost_gamma"]), float(cost["cost_c"])
    long = 2 * short
    gamma = int(_step("block").query["block_k"])
    story = story_problem(0, 0)
    own, given = story.answer["own"], story.given
    return {
        "greedy": {
            "top_p": top_p,
            "kept_t1": _support_size(logits, t, top_p),
            "low_t": LOW_TEMPERATURE,
            "kept_low_t": _support_size(logits, LOW_TEMPERATURE, top_p),
        },
        "block": {"gamma": gamma, "most": gamma + 1},
        "cost": {
            "alpha": alpha,
            "c": c,
            "gamma_short": short,
            "gamma_long": long,
            "extra_steps": long - short,
            "tokens_short": float(expected_tokens(alpha, short)),
            "tokens_long": float(expected_tokens(alpha, long)),
            "speedup_short": float(speedup(alpha, short, c)),
            "speedup_long": float(speedup(alpha, long, c)),
        },
        "exercises": {
            "draft": given["draft_minutes"],
            "check": given["check_minutes"],
            "together": own["speedup"],
            "check_only": own["check_only"],
            "claimed": given["claimed_speedup"],
            "right": given["right"],
            "of": given["of"],
            "corrections": given["corrections"],
            "lines": own["lines_if_rate"],
        },
    }
