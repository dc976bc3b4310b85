"""This machine's costs as lesson text: each hardware-dependent figure formatted (with the
memory-bound reference beside it where the two differ by more than 15 %) and the line that
names where the figures come from (``specdec_core.live.profile_quotes``)."""

from __future__ import annotations

from pages.common.i18n import Strings
from specdec_core.course.cost import cost_summary, draft_presets
from specdec_core.course.handouts import COST_RATIO, EXAMPLE_ALPHA
from specdec_core.live.profile_quotes import CourseCosts, Figure
from specdec_core.theory import linear_verify_cost

#: The longest draft the lessons' best γ is searched up to (the cost page's slider).
MAX_GAMMA = 16


def number(s: Strings, fig: Figure, digits: int = 2) -> str:
    """`fig` as text: its value, or both values where the reference differs from it."""
    value = f"{fig.value:.{digits}f}"
    if fig.reference is None:
        return value
    return s("profile.beside", value=value, reference=f"{fig.reference:.{digits}f}")


def source(s: Strings, costs: CourseCosts) -> str:
    """Where the figures come from: this machine (CPU and cores) or the memory-bound reference."""
    m = costs.measured
    return s["profile.reference"] if m is None else s("profile.measured", cpu=m.cpu, cores=m.cores)


def why(s: Strings, *figures: Figure) -> str:
    """The sentence why two figures are shown, when any of `figures` shows both; else ""."""
    return s["profile.why"] if any(f.reference is not None for f in figures) else ""


def round_values(key: str, alpha: float, c: float, beta: float) -> dict[str, str]:
    """One draft's round at γ = 4 priced with the verification 1 + β·γ, as lesson text:
    ``<key>_tokens`` (E[tokens]), ``_round`` (its cost in target steps), ``_gamma4`` (its
    speedup), and the best γ up to :data:`MAX_GAMMA` with its speedup (``_best_gamma``, ``_best``)."""
    now = cost_summary(alpha, 4, c, linear_verify_cost(beta), MAX_GAMMA)
    return {
        f"{key}_tokens": f"{now.tokens:.2f}",
        f"{key}_round": f"{now.round_cost:.2f}",
        f"{key}_gamma4": f"{now.speedup:.2f}",
        f"{key}_best_gamma": str(now.best_gamma),
        f"{key}_best": f"{now.best_speedup:.2f}",
    }


def course_values(s: Strings, costs: CourseCosts) -> dict[str, str]:
    """The figures lesson text fills in (``{{name}}``), from `costs`: where they come from
    (``source``, and ``why`` two are shown), each draft's c (``c_bf16``, ``c_layers24``,
    ``c_layers8``; ``…_value`` the number alone), the 5-row verification (``v5``), its ``beta``
    and the linear model's verification at γ = 4 (``v4``), and each of these drafts' round at
    γ = 4 priced with that verification (:func:`round_values`: ``bf16_tokens``, ``layers24_round``,
    …), as is the Notation page's worked example, α = 0.8 and c = 0.05 (``example_…``)."""
    verify, beta = costs.verify(5), costs.beta().value
    drafts = {"bf16": "bf16", "layers24": "layerskip:24", "layers8": "layerskip:8"}
    figures = {k: costs.draft_c(d) for k, d in drafts.items()}
    out = {"source": source(s, costs), "why": why(s, verify, *figures.values())}
    out |= {"v5": number(s, verify), "v5_value": f"{verify.value:.2f}", "beta": f"{beta:g}"}
    out["v4"] = f"{linear_verify_cost(beta)(4):.2f}"
    for key, fig in figures.items():
        out[f"c_{key}"], out[f"c_{key}_value"] = number(s, fig), f"{fig.value:.2f}"
    presets = draft_presets(lambda d: costs.draft_c(d).value)
    for key in drafts:
        out |= round_values(key, *presets[key], beta)
    return out | round_values("example", EXAMPLE_ALPHA, COST_RATIO, beta)
