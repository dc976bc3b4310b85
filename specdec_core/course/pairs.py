"""The editable (p, q) pair of the overlap and probability-tree lessons: examples, checks and a URL codec.

A *table* is a list of rows ``(token, p, q)``; while a learner edits it, p or q may be None.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from specdec_core.checks import SUM_TOL
from specdec_core.live.limits import MAX_PAIR_ROWS
from specdec_core.sampling import softmax

PRESETS_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets" / "pairs.json"

#: The largest vocabulary a table may have.
MAX_TOKENS = MAX_PAIR_ROWS
#: The preset drawn from a seed rather than read from the file.
RANDOM = "random"
#: Random pairs lie on a 10^-DECIMALS grid (every value shown is the value used) and sum to 1.
DECIMALS = 4
_WORDS = (
    "the", "a", "of", "to", "and", "in", "is", "it", "that", "was",
    "for", "on", "with", "as", "he", "she", "they", "we", "you", "at",
    "by", "this", "from", "or", "but", "not", "are", "be", "his", "her",
)  # fmt: skip

Row = tuple[str, float | None, float | None]


@dataclass(frozen=True)
class Problem:
    """Why a table is not a valid pair: a message ``code`` and the details it needs.

    Codes: "empty", "too_many", "blank_label", "missing", "negative", "zero", "sum".
    """

    code: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def normalisable(self) -> bool:
        """Whether :func:`normalise` fixes it (a column of valid weights not summing to 1)."""
        return self.code == "sum"


@dataclass(frozen=True)
class Pair:
    """Token labels with the target's p and the draft's q, from a table :func:`check` accepted."""

    tokens: tuple[str, ...]
    p: np.ndarray
    q: np.ndarray


@cache
def _examples() -> dict[str, list[Row]]:
    with PRESETS_FILE.open(encoding="utf-8") as f:
        data = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    return {name: list(zip(e["tokens"], e["p"], e["q"], strict=True)) for name, e in data.items()}


def preset_names() -> tuple[str, ...]:
    """The examples in the order of the file, then :data:`RANDOM`."""
    return (*_examples(), RANDOM)


def preset_rows(name: str, seed: int = 0, size: int = 20) -> list[Row]:
    """The rows of preset `name`; :data:`RANDOM` draws `size` tokens from `seed`."""
    if name == RANDOM:
        return random_rows(size, seed)
    examples = _examples()
    if name not in examples:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(preset_names())}.")
    return list(examples[name])


def _on_grid(probs: np.ndarray) -> np.ndarray:
    """Round a law to multiples of 10^-DECIMALS that still add up to 1 (largest remainder)."""
    unit = 10**DECIMALS
    scaled = probs * unit
    counts = np.floor(scaled)
    short = int(unit - counts.sum())
    counts[np.argsort(counts - scaled, kind="stable")[:short]] += 1
    return counts / unit


def random_rows(size: int, seed: int) -> list[Row]:
    """A seeded target p and a related but imperfect draft q over `size` words, sorted by p.

    Both laws are rounded to DECIMALS places and still sum to 1; small probabilities may round
    to 0, as in real models.
    """
    if not 1 <= size <= len(_WORDS):
        raise ValueError(f"a random pair has 1 to {len(_WORDS)} tokens, got {size}.")
    rng = np.random.default_rng(seed)
    z = np.sort(rng.normal(0.0, 1.1, size))[::-1]
    p = _on_grid(softmax(z))
    q = _on_grid(softmax(0.8 * z + rng.normal(0.0, 0.8, size)))
    return [(w, float(a), float(b)) for w, a, b in zip(_WORDS[:size], p, q, strict=True)]


def check(rows: Sequence[Row]) -> Problem | None:
    """The first reason `rows` is not a valid (p, q) pair, or None when it is one.

    A table that passes is accepted by every function of :mod:`specdec_core.verify`.
    """
    if not rows:
        return Problem("empty")
    if len(rows) > MAX_TOKENS:
        return Problem("too_many", {"n": len(rows), "max": MAX_TOKENS})
    for i, row in enumerate(rows, start=1):
        if not str(row[0] or "").strip():
            return Problem("blank_label", {"row": i})
    for col, name in ((1, "p"), (2, "q")):
        for i, row in enumerate(rows, start=1):
            value = row[col]
            if value is None or not math.isfinite(value):
                return Problem("missing", {"row": i, "column": name})
            if value < 0:
                return Problem("negative", {"row": i, "column": name, "value": value})
        total = float(np.array([row[col] for row in rows], dtype=np.float64).sum())
        if total == 0:
            return Problem("zero", {"column": name})
        if abs(total - 1.0) > SUM_TOL:  # the test of specdec_core.checks.as_distribution
            return Problem("sum", {"column": name, "total": total})
    return None


def to_pair(rows: Sequence[Row]) -> Pair:
    """The tokens, p and q of `rows`; raises ValueError unless :func:`check` accepts them."""
    problem = check(rows)
    if problem is not None:
        raise ValueError(f"not a valid pair: {problem.code} {problem.params}")
    tokens = tuple(str(r[0]) for r in rows)
    p, q = (np.array([r[col] for r in rows], dtype=np.float64) for col in (1, 2))
    return Pair(tokens, p, q)


def normalise(rows: Sequence[Row]) -> list[Row]:
    """Scale p and q to sum to 1; blanks become 0 and a column without positive mass stays."""
    p, q = (_scaled([r[col] or 0.0 for r in rows]) for col in (1, 2))
    return [(r[0], a, b) for r, a, b in zip(rows, p, q, strict=True)]


def _scaled(values: list[float]) -> list[float]:
    total = math.fsum(values)
    return [v / total for v in values] if 0 < total < math.inf else values


def clean_rows(records: Iterable[Sequence[Any]]) -> list[Row]:
    """Rows from a table editor's (token, p, q) records: blank or NaN numbers become None, a
    blank token ""."""
    return [
        ("" if _blank(token) else str(token), *(None if _blank(v) else float(v) for v in (p, q)))
        for token, p, q in records
    ]


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def to_json(rows: Sequence[Row]) -> str:
    """Compact JSON for a URL; floats keep their shortest exact form."""
    return json.dumps([list(r) for r in rows], separators=(",", ":"), ensure_ascii=False)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def from_json(text: str) -> list[Row]:
    """Rows from :func:`to_json`'s format; raises ValueError when the structure is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a table: {exc}") from None
    if not isinstance(data, list) or len(data) > MAX_TOKENS:
        raise ValueError(f"a table is a list of at most {MAX_TOKENS} rows")
    rows: list[Row] = []
    for row in data:
        if not isinstance(row, list) or len(row) != 3 or not isinstance(row[0], str):
            raise ValueError("each row is [token, p, q]")
        rows.append((row[0], _number(row[1]), _number(row[2])))
    return rows
