"""Example (p, q) pairs for the overlap lesson and everything shown about one pair.

* presets from ``assets/presets/pairs.json`` and a seeded random pair;
* compact text codecs so a pair fits in a shareable URL, and edits from a table;
* :func:`breakdown` — every number of one speculative step, token by token;
* :func:`draft_law` — what a buggy draft really samples while it reports q;
* :func:`monte_carlo` — a seeded simulation of any variant, tested against p.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np

from specdec_core.checks import as_distribution, as_vector
from specdec_core.sampling import SamplingConfig, apply, softmax
from specdec_core.stats import ChiSquare, chisquare, total_variation
from specdec_core.variants import VARIANTS, emitted_law, simulate
from specdec_core.verify import Decomposition, Dist, acceptance_probs, decompose, output_distribution

PRESETS_FILE = Path(__file__).resolve().parents[1] / "assets" / "presets" / "pairs.json"

#: The largest vocabulary a hand-edited or linked pair may have.
MAX_TOKENS = 40

#: What a mismatched draft may really sample while it reports q (see :func:`draft_law`).
DRAFT_LAWS: dict[str, SamplingConfig] = {
    "greedy": SamplingConfig(temperature=0.0),
    "sharpened": SamplingConfig(temperature=0.5),
    "top_k": SamplingConfig(top_k=2),
}


@dataclass(frozen=True)
class Pair:
    """Token labels with the target's p and the draft's q (not yet checked to sum to 1)."""

    tokens: tuple[str, ...]
    p: np.ndarray
    q: np.ndarray


def make_pair(tokens: Sequence[str], p: Sequence[float], q: Sequence[float]) -> Pair:
    """A pair whose three columns have one entry per token (1 … MAX_TOKENS of them)."""
    p_arr, q_arr = as_vector(p, "p (target)"), as_vector(q, "q (draft)")
    n = len(tokens)
    if not 1 <= n <= MAX_TOKENS:
        raise ValueError(f"a pair needs 1 to {MAX_TOKENS} tokens, got {n}.")
    if p_arr.size != n or q_arr.size != n:
        raise ValueError(
            f"tokens, p and q must have one entry per token, got {n}, {p_arr.size} and {q_arr.size}."
        )
    return Pair(tuple(str(t) for t in tokens), p_arr, q_arr)


@cache
def _preset_data() -> dict[str, Any]:
    with PRESETS_FILE.open(encoding="utf-8") as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


def preset_names() -> tuple[str, ...]:
    """The presets in the order of the file."""
    return tuple(_preset_data())


def preset(name: str, seed: int = 0) -> Pair:
    """The named preset; ``"random"`` is generated from `seed`."""
    data = _preset_data()
    if name not in data:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(data)}.")
    entry = data[name]
    if "size" in entry:
        return random_pair(int(entry["size"]), seed)
    return make_pair(entry["tokens"], entry["p"], entry["q"])


def _on_grid(probs: np.ndarray, decimals: int) -> np.ndarray:
    """Round a law to multiples of 10^-decimals that still add up to 1 (largest remainder)."""
    unit = 10**decimals
    scaled = probs * unit
    counts = np.floor(scaled)
    short = int(unit - counts.sum())
    counts[np.argsort(counts - scaled, kind="stable")[:short]] += 1
    return counts / unit


def random_pair(size: int = 20, seed: int = 0, decimals: int = 3) -> Pair:
    """A target and a related but imperfect draft over `size` tokens, sorted by p.

    Both laws are rounded to `decimals` places (still summing to 1), so every value on
    screen is the exact value used; small probabilities may round to 0, as in real models.
    """
    if not 2 <= size <= MAX_TOKENS:
        raise ValueError(f"a random pair needs 2 to {MAX_TOKENS} tokens, got {size}.")
    rng = np.random.default_rng(seed)
    z = np.sort(rng.normal(0.0, 1.1, size))[::-1]
    p = _on_grid(softmax(z), decimals)
    q = _on_grid(softmax(0.8 * z + rng.normal(0.0, 0.8, size)), decimals)
    return Pair(tuple(f"t{i + 1}" for i in range(size)), p, q)


def normalise(values: Dist, name: str = "column") -> np.ndarray:
    """`values` divided by their sum; they must be 0 or more with a positive sum."""
    arr = as_vector(values, name)
    if np.any(arr < 0):
        raise ValueError(f"{name} has a negative entry; probabilities must be 0 or more.")
    total = float(arr.sum())
    if not total > 0:
        raise ValueError(f"{name} adds up to 0: at least one token needs a positive probability.")
    return arr / total


def format_floats(values: Dist) -> str:
    """A compact, exact comma list (shortest repr of each float64)."""
    return ",".join(repr(float(v)) for v in np.asarray(values, dtype=np.float64))


def parse_floats(text: str) -> tuple[float, ...]:
    """Read a comma list written by :func:`format_floats` (finite numbers only)."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"not a comma-separated list of numbers: {text[:40]!r}") from None
    if not 1 <= len(values) <= MAX_TOKENS or not all(np.isfinite(values)):
        raise ValueError(f"expected 1 to {MAX_TOKENS} finite numbers")
    return values


def format_tokens(tokens: Sequence[str]) -> str:
    """Token labels as one comma list; a comma or % inside a label is percent-escaped."""
    return ",".join(t.replace("%", "%25").replace(",", "%2C") for t in tokens)


def parse_tokens(text: str) -> tuple[str, ...]:
    """The inverse of :func:`format_tokens`."""
    tokens = tuple(unquote(part) for part in text.split(","))
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"more than {MAX_TOKENS} tokens")
    return tokens


def apply_edits(pair: Pair, edits: Mapping[str, Any]) -> Pair:
    """Apply a table editor's changes to `pair`.

    `edits` has ``edited_rows`` ({row: {column: value}}), ``added_rows`` ([{column: value}])
    and ``deleted_rows`` ([row]), columns being "token", "p" and "q"; an emptied cell reads
    as "" for a token and 0 for a probability.
    """
    columns = zip(pair.tokens, pair.p, pair.q, strict=True)
    rows = [{"token": t, "p": float(a), "q": float(b)} for t, a, b in columns]
    for index, change in edits.get("edited_rows", {}).items():
        rows[int(index)].update(change)
    rows += [{"token": "", "p": 0.0, "q": 0.0, **row} for row in edits.get("added_rows", [])]
    gone = {int(i) for i in edits.get("deleted_rows", [])}
    kept = [row for i, row in enumerate(rows) if i not in gone]

    def number(value: Any) -> float:
        return 0.0 if value is None else float(value)

    return make_pair(
        ["" if r["token"] is None else str(r["token"]) for r in kept],
        [number(r["p"]) for r in kept],
        [number(r["q"]) for r in kept],
    )


def draft_law(q: Dist, kind: str) -> np.ndarray:
    """What a draft reporting `q` really samples in a known bug (see DRAFT_LAWS).

    ``greedy`` — it always takes q's argmax (lowest index on ties); ``sharpened`` — it
    samples q at temperature 0.5; ``top_k`` — it samples q's top 2 but reports q before
    that filter.
    """
    if kind not in DRAFT_LAWS:
        raise ValueError(f"unknown draft law {kind!r}; choose one of {', '.join(DRAFT_LAWS)}.")
    q_arr = as_distribution(q, "q (draft)")
    log_q = np.full(q_arr.size, -np.inf)
    np.log(q_arr, out=log_q, where=q_arr > 0)
    return apply(log_q, DRAFT_LAWS[kind]).probs


@dataclass(frozen=True)
class Breakdown:
    """One speculative step on (p, q), token by token.

    ``direct`` = q·min(1, p/q) (equal to ``overlap`` = min(p, q)); ``via_residual`` =
    R·residual (equal to the deficit; zeros when R = 0, where no residual exists);
    ``emitted`` = direct + via_residual, the exact law of the output; ``proposed`` marks
    q > 0 (elsewhere the ratio p/q is never formed).
    """

    decomposition: Decomposition
    alpha: np.ndarray
    proposed: np.ndarray
    direct: np.ndarray
    via_residual: np.ndarray
    emitted: np.ndarray
    never_proposed: np.ndarray
    always_rejected: np.ndarray

    @property
    def max_error(self) -> float:
        """The largest |emitted − p| over the tokens (float64 rounding only)."""
        return float(np.max(np.abs(self.emitted - self.decomposition.p)))


def breakdown(p: Dist, q: Dist) -> Breakdown:
    """Every number of the bar-chart proof; raises ValueError on an invalid pair."""
    d = decompose(p, q)
    alpha = acceptance_probs(d.p, d.q)
    via = d.rejection_mass * d.residual if d.residual is not None else np.zeros_like(d.p)
    return Breakdown(
        decomposition=d,
        alpha=alpha,
        proposed=d.q > 0,
        direct=d.q * alpha,
        via_residual=via,
        emitted=output_distribution(d.p, d.q),
        never_proposed=np.flatnonzero((d.q == 0) & (d.p > 0)),
        always_rejected=np.flatnonzero((d.p == 0) & (d.q > 0)),
    )


def variant_laws(p: Dist, q: Dist, q_actual: Dist) -> dict[str, tuple[np.ndarray, float]]:
    """Each variant's exact emitted law and its total-variation distance from p."""
    d = decompose(p, q)
    out = {}
    for name in VARIANTS:
        law = emitted_law(d.p, d.q, name, q_actual if name == "draft_mismatch" else None)
        out[name] = (law, total_variation(law, d.p))
    return out


@dataclass(frozen=True)
class MonteCarlo:
    """A seeded simulation of one variant, compared with the target p.

    ``spread`` is two standard errors of each frequency if the output really followed p;
    ``acceptance`` the share of trials whose draft stood; ``chi`` tests the counts against p.
    """

    variant: str
    trials: int
    seed: int
    counts: np.ndarray
    frequencies: np.ndarray
    acceptance: float
    spread: np.ndarray
    chi: ChiSquare
    tv: float
    seconds: float


def monte_carlo(
    p: Dist, q: Dist, trials: int, seed: int, variant: str = "exact", q_actual: Dist | None = None
) -> MonteCarlo:
    """Run `trials` independent steps of `variant` with `seed` and test the output against p."""
    d = decompose(p, q)
    start = time.perf_counter()
    sim = simulate(d.p, d.q, trials, np.random.default_rng(seed), variant, q_actual)
    seconds = time.perf_counter() - start
    freq = sim.frequencies
    return MonteCarlo(
        variant=variant,
        trials=sim.trials,
        seed=seed,
        counts=sim.counts,
        frequencies=freq,
        acceptance=sim.accepted / sim.trials,
        spread=2.0 * np.sqrt(d.p * (1.0 - d.p) / sim.trials),
        chi=chisquare(sim.counts, d.p),
        tv=total_variation(freq, d.p),
        seconds=seconds,
    )
