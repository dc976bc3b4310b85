"""Example (p, q) pairs for the overlap lesson.

* presets from ``assets/presets/pairs.json`` and a seeded random pair;
* compact text codecs so a pair fits in a shareable URL, and edits from a table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np

from specdec_core.checks import as_vector
from specdec_core.sampling import softmax
from specdec_core.verify import Dist

PRESETS_FILE = Path(__file__).resolve().parents[1] / "assets" / "presets" / "pairs.json"

#: The largest vocabulary a hand-edited or linked pair may have.
MAX_TOKENS = 40


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
