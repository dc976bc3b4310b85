"""The routes of a class through the course: a 90-minute class in three sections and a
45-minute lecture, each step with its page, its minutes, the address that sets the page up
(its URL-state keys and values, as the page itself writes them) and, where one fits, the
printable handout to give out with it.

The class opens and closes with the same five-question concept check (:data:`CHECK_PAGES`:
the same concepts, other numbers), answered on the teach page's learner view
(``?check=before`` or ``after``); the Class answers view sets the two side by side per concept.

What to show and what to ask lives with the words, in lessons/<lang>/teach.toml under
``[steps.<key>]`` (with the misconception each step addresses) and ``[sections.<key>]`` (with
the section's learning objectives); the concept check's questions under ``[check]``. This
module holds the plan, so a test can open every link, and the numbers those words quote,
computed here from the same settings the links set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from specdec_core.course.exercises import story_problem
from specdec_core.course.sampling_lab import examples
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, round_costs, speedup

CLASS_MINUTES = 90
LECTURE_MINUTES = 45
#: The least spare time a route leaves for questions and the unexpected, per class length.
MIN_SLACK = {CLASS_MINUTES: 10, LECTURE_MINUTES: 5}
#: The memory-bound motivation must be over by this minute of the 90-minute class.
MOTIVATION_BY = 15
#: The largest γ the cost page's slider offers (its best γ is searched up to here).
COST_MAX_GAMMA = 16


@dataclass(frozen=True)
class Step:
    """One stop of a route: ``key`` names its texts, ``page`` the course page it opens,
    ``query`` the page's URL state that sets it up (empty: the page has no such controls),
    ``handout`` the printable sheet that goes with it (a key of course.handouts, or None)."""

    key: str
    page: str
    minutes: int
    query: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    handout: str | None = None


@dataclass(frozen=True)
class Section:
    """Steps taught together; ``key`` names its title, goal and objectives in teach.toml
    (``[sections.<key>]``). A section ends with the room's answers (the Class answers view)
    before the next one starts."""

    key: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Route:
    """A whole class: ``key`` names its texts (``[routes.<key>]``), ``minutes`` its length."""

    key: str
    minutes: int
    sections: tuple[Section, ...]

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(step for section in self.sections for step in section.steps)

    @property
    def planned(self) -> int:
        """Minutes the steps take together."""
        return sum(step.minutes for step in self.steps)

    @property
    def slack(self) -> int:
        """Minutes the class has beyond its steps: for questions, a slow model, a late start."""
        return self.minutes - self.planned


def _q(**values: str) -> Mapping[str, str]:
    return MappingProxyType(values)


# The settings the links set, shared by the steps that open the same example.
_COST = {"cost_alpha": "0.8", "cost_gamma": "4", "cost_c": "0.05"}
_BLOCK = {
    "block_chain": "story",
    "block_draft": "good",
    "block_k": "4",
    "block_seed": "7",
    "block_t": "1",
}
#: Rounds the proof step steps through, enough for the block page's histogram (it needs 30).
PROOF_ROUNDS = 30

#: The two runs of the concept check, as the class's answers name them (their "page").
CHECK_PAGES = {"before": "check_before", "after": "check_after"}
#: How many concepts the check asks about, one question each, before and after.
CHECK_CONCEPTS = 5
#: The teach page's learner view of the check (``?check=before``): its URL key and choices.
CHECK_KEY = "check"
CHECK_CHOICES = ("none", *CHECK_PAGES)

CHECK_BEFORE = Step("check_before", "teach", 3, _q(check="before"))
MOTIVATION = Step("motivation", "cost", 4, _q(**_COST, cost_verify="constant"))
NOTATION = Step("notation", "notation", 2)
GREEDY = Step(
    "greedy", "sampling_lab", 3, _q(preset="peaked", T="1", k="0", p="0.78", min_keep="1", order="tkp")
)
OVERLAP = Step("overlap", "overlap", 8, _q(ov_preset="abc", ov_T="1", ov_variant="resample_from_p"), "rule")
TREE = Step("tree", "tree", 3, _q(tree_preset="abc", tree_top_n="6", tree_seed="7"))
BLOCK = Step("block", "block", 5, _q(**_BLOCK, block_round="0"))
#: The whole-sequence proof, read with the handout: it takes 8 to 10 minutes in a room.
PROOF = Step("proof", "block", 8, _q(**_BLOCK, block_round=str(PROOF_ROUNDS)), "proof")
#: The law lab ("Exact on a real model") on its defaults: the bundled target and the trained
#: head, the models the Compare step's grid loads when the class is warmed, so the room's
#: Draw needs no model loading.
LAW_LIVE = Step(
    "law_live",
    "law_live",
    5,
    _q(law_target="bundled", law_draft="head", law_preset="copy", law_broken="accept_all"),
)

#: The notation page's worked example: verification priced by the linear model 1 + βγ, not the
#: memory-bound ideal of the motivation step. The link leaves β to the cost page, whose default
#: is this machine's profile's (else the memory-bound reference's), as the notation page's is.
COST = Step("cost", "cost", 5, _q(**_COST, cost_verify="linear"), "speedup")
LIVE = Step(
    "live",
    "live",
    3,
    _q(live_target="bundled", live_draft="ngram", live_preset="copy", live_gamma="4", live_t="0"),
)
#: The three apprentices: the page's default drafts, and adaptive γ (the third's trick) on.
RACE = Step(
    "race",
    "race",
    4,
    _q(race_target="bundled", race_preset="summarise", race_gamma="4", race_adaptive="1", race_t="0"),
)
TREE_DRAFTS = Step(
    "tree_drafts", "tree_drafts", 2, _q(trd_chain="story", trd_draft="poor", trd_shape="2-2", trd_seed="7")
)
SELF_SPEC = Step("self_spec", "self_spec", 6)
#: A sentence with Chinese in it: the families split it differently, and some pieces have no twin.
TOKENIZERS = Step(
    "tokenizers", "tokenizers", 2, _q(tok_text="Speculative decoding 投机解码 keeps p exactly.")
)
#: The page opens on the measured example grid (both targets, every draft kind, all eight
#: categories) shown as the memory-bound projection the motivation step started from, each
#: draft at its own cost; the controls hold a small grid a CPU runs in minutes, to measure live.
COMPARE = Step(
    "compare",
    "compare",
    2,
    _q(
        cmp_targets="bundled",
        cmp_drafts="ngram,bf16,head",
        cmp_cats="conversation,summarisation,copy",
        cmp_n="1",
        cmp_gamma="4",
        cmp_adaptive="0",
        cmp_temp="0",
        cmp_max="32",
        cmp_metric="projected",
        cmp_c="own",
    ),
)
#: The roofline on a data-centre GPU at batch 1, where speculation pays; the room raises the
#: batch until it stops paying.
ROOFLINE = Step(
    "roofline",
    "roofline",
    5,
    _q(roof_hw="h100", roof_target="llama_8b", roof_draft="llama_1b", roof_batch="1", roof_gamma="4"),
)
EXERCISES = Step(
    "exercises", "exercises", 1, _q(ex_seed="2026", ex_topics="decompose,tokens,block,story", ex_key="0")
)

CLASS = Route(
    "class",
    CLASS_MINUTES,
    (
        Section(
            "why",
            (
                CHECK_BEFORE,
                MOTIVATION,
                NOTATION,
                GREEDY,
                OVERLAP,
                TREE,
                Step("answers_why", "answers", 2, _q(answers_page="overlap")),
            ),
        ),
        Section(
            "rounds",
            (
                BLOCK,
                PROOF,
                LAW_LIVE,
                COST,
                ROOFLINE,
                Step("answers_rounds", "answers", 2, _q(answers_page="cost")),
            ),
        ),
        Section(
            "models",
            (
                LIVE,
                RACE,
                TREE_DRAFTS,
                SELF_SPEC,
                TOKENIZERS,
                COMPARE,
                EXERCISES,
                Step("check_after", "teach", 3, _q(check="after")),
                Step("answers_models", "answers", 2, _q(answers_page="check")),
            ),
        ),
    ),
)

#: One lecture: why it is fast, the rule, a round and its price, one real pair, one race, and
#: the handouts to take home. It links neither the sampling lab nor the exercise sheet, so the
#: class's links to those pages stay the only ones on the teach page.
LECTURE = Route(
    "lecture",
    LECTURE_MINUTES,
    (
        Section(
            "lecture",
            (
                replace(MOTIVATION, minutes=4),
                replace(NOTATION, minutes=2),
                replace(OVERLAP, minutes=8),
                replace(BLOCK, minutes=6),
                replace(COST, minutes=6),
                replace(LIVE, minutes=5),
                replace(RACE, minutes=4),
                Step("handouts", "handouts", 2, _q(handout="rule")),
                Step("answers_lecture", "answers", 3, _q(answers_page="cost")),
            ),
        ),
    ),
)

ROUTES: tuple[Route, ...] = (CLASS, LECTURE)
#: The 90-minute class's steps in order (the route most pages and tests mean).
ROUTE: tuple[Step, ...] = CLASS.steps


@dataclass(frozen=True)
class Slot:
    """A step with its place on the clock: it runs from minute ``start`` to ``end``."""

    step: Step
    start: int
    end: int


def schedule(route: Route = CLASS) -> list[Slot]:
    """The route on the clock, each step starting where the last one ended."""
    slots: list[Slot] = []
    clock = 0
    for step in route.steps:
        if step.minutes <= 0:
            raise ValueError(f"step {step.key!r} needs a positive number of minutes, got {step.minutes}.")
        slots.append(Slot(step, clock, clock + step.minutes))
        clock += step.minutes
    if clock > route.minutes:
        raise ValueError(f"route {route.key!r} plans {clock} minutes for a {route.minutes}-minute class.")
    return slots


#: The lower temperature the sampling step asks the room to try.
LOW_TEMPERATURE = 0.5


def _support_size(logits: list[float], temperature: float, top_p: float) -> int:
    return int(apply(logits, SamplingConfig(temperature=temperature, top_p=top_p)).support.size)


def _cost_points(beta: float) -> dict[str, Any]:
    """The cost step's numbers: the notation page's example (verification 1 + βγ), doubled γ,
    the best γ, and the memory-bound ideal (verification = 1 step) the motivation step shows."""
    alpha, short, c = (
        float(COST.query["cost_alpha"]),
        int(COST.query["cost_gamma"]),
        float(COST.query["cost_c"]),
    )
    verify = linear_verify_cost(beta)
    long = 2 * short
    best = best_gamma(alpha, c, verify, COST_MAX_GAMMA)
    return {
        "alpha": alpha,
        "c": c,
        "beta": beta,
        "gamma_short": short,
        "gamma_long": long,
        "extra_steps": long - short,
        "verify_short": verify(short),
        "verify_long": verify(long),
        "round_short": float(round_costs([short], c, verify)[0]),
        "round_long": float(round_costs([long], c, verify)[0]),
        "tokens_short": float(expected_tokens(alpha, short)),
        "tokens_long": float(expected_tokens(alpha, long)),
        "speedup_short": float(speedup(alpha, short, c, verify)),
        "speedup_long": float(speedup(alpha, long, c, verify)),
        "best": best,
        "speedup_best": float(speedup(alpha, best, c, verify)),
        "ideal_short": float(speedup(alpha, short, c)),
        "ideal_long": float(speedup(alpha, long, c)),
    }


def talking_points(beta: float) -> dict[str, dict[str, Any]]:
    """The numbers each step's words quote (``{name}`` in teach.toml), per step key; the cost
    step's verification is 1 + `beta`·γ (the page hands in its machine profile's β)."""
    greedy = GREEDY.query
    logits = examples()["presets"][greedy["preset"]]["logits"]
    top_p, t = float(greedy["p"]), float(greedy["T"])
    motivation = MOTIVATION.query
    alpha, gamma, c = (
        float(motivation["cost_alpha"]),
        int(motivation["cost_gamma"]),
        float(motivation["cost_c"]),
    )
    block_gamma = int(BLOCK.query["block_k"])
    story = story_problem(0, 0)
    own, given = story.answer["own"], story.given
    cost = _cost_points(beta)
    return {
        "motivation": {
            "alpha": alpha,
            "gamma": gamma,
            "c": c,
            "tokens": float(expected_tokens(alpha, gamma)),
            "round": float(round_costs([gamma], c)[0]),
            "speedup": float(speedup(alpha, gamma, c)),
        },
        "greedy": {
            "top_p": top_p,
            "kept_t1": _support_size(logits, t, top_p),
            "low_t": LOW_TEMPERATURE,
            "kept_low_t": _support_size(logits, LOW_TEMPERATURE, top_p),
        },
        "block": {"gamma": block_gamma, "most": block_gamma + 1},
        "proof": {"rounds": PROOF_ROUNDS},
        "cost": cost,
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
