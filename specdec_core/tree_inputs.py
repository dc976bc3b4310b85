"""The (p, q) examples of the probability-tree lesson and the editable table that holds them.

A table is a list of rows ``[label, p, q]``; it travels in the page URL as compact JSON
(:func:`to_json` / :func:`from_json`). :func:`check` names the first problem in a table
as a message key plus its details, so a page can explain it in the learner's language.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specdec_core.checks import SUM_TOL

PRESETS = ("abc", "equal", "disjoint", "edge", "random")
MAX_TOKENS = 60
RANDOM_SIZE = 30
_DECIMALS = 4  # random pairs are rounded to this many decimals, yet sum to 1 exactly
_WORDS = (
    "the", "a", "of", "to", "and", "in", "is", "it", "that", "was",
    "for", "on", "with", "as", "he", "she", "they", "we", "you", "at",
    "by", "this", "from", "or", "but", "not", "are", "be", "his", "her",
)  # fmt: skip

Row = list[Any]  # [label, p, q]; p and q may be None while a learner edits


@dataclass(frozen=True)
class Problem:
    """Why a table is not a valid pair: a message ``code`` and the details it needs."""

    code: str  # "empty", "too_many", "blank_label", "missing", "negative", "sum"
    params: dict[str, Any] = field(default_factory=dict)


def _rounded(weights: np.ndarray) -> np.ndarray:
    """Weights → a distribution on a 10^-DECIMALS grid that sums to 1 (largest remainders)."""
    unit = 10**_DECIMALS
    scaled = weights / weights.sum() * unit
    counts = np.floor(scaled).astype(np.int64)
    short = unit - int(counts.sum())
    counts[np.argsort(-(scaled - counts), kind="stable")[:short]] += 1
    return counts / unit


def random_rows(seed: int, size: int = RANDOM_SIZE) -> list[Row]:
    """A seeded target p and a noisy draft q of it over `size` word tokens (≤ 30)."""
    if not 1 <= size <= len(_WORDS):
        raise ValueError(f"a random example has 1 to {len(_WORDS)} tokens, got {size}.")
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 1.6, size)
    p = _rounded(np.exp(logits - logits.max()))
    noisy = logits + rng.normal(0.0, 1.0, size)
    q = _rounded(np.exp(noisy - noisy.max()))
    return [[w, float(a), float(b)] for w, a, b in zip(_WORDS[:size], p, q, strict=True)]


_FIXED: dict[str, list[Row]] = {
    # the lecture's example: A and B under-proposed, C over-proposed
    "abc": [["A", 0.2, 0.1], ["B", 0.4, 0.1], ["C", 0.4, 0.8]],
    # a perfect draft: nothing is ever rejected
    "equal": [["A", 0.2, 0.2], ["B", 0.4, 0.4], ["C", 0.4, 0.4]],
    # the draft only proposes what the target never says: everything is rejected
    "disjoint": [["cat", 0.6, 0.0], ["dog", 0.4, 0.0], ["car", 0.0, 0.7], ["bus", 0.0, 0.3]],
    # q(C) = 0: C only comes from the residual; p(D) = 0 < q(D): D is always rejected
    "edge": [["A", 0.3, 0.5], ["B", 0.3, 0.3], ["C", 0.4, 0.0], ["D", 0.0, 0.2]],
}


def preset_rows(name: str, seed: int = 0) -> list[Row]:
    """The rows of preset `name`; ``"random"`` is drawn from `seed`."""
    if name == "random":
        return random_rows(seed)
    if name not in _FIXED:
        raise ValueError(f"unknown example {name!r}; choose one of {', '.join(PRESETS)}.")
    return [list(row) for row in _FIXED[name]]


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
            raise ValueError("each row is [label, p, q]")
        rows.append([row[0], _number(row[1]), _number(row[2])])
    return rows


def clean_rows(records: Iterable[Sequence[Any]]) -> list[Row]:
    """Rows from an edited table: blank or NaN numbers become None, a blank label ""."""
    rows: list[Row] = []
    for label, *numbers in records:
        values = [None if _blank(v) else float(v) for v in numbers]
        rows.append(["" if _blank(label) else str(label), *values])
    return rows


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def check(rows: Sequence[Row]) -> Problem | None:
    """The first reason `rows` is not a valid (p, q) pair, or None when it is one."""
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
        total = math.fsum(row[col] for row in rows)
        if abs(total - 1.0) > SUM_TOL:
            return Problem("sum", {"column": name, "total": total})
    return None


def normalise(rows: Sequence[Row]) -> list[Row]:
    """Scale the p and q columns to sum to 1; blanks become 0, a column of zeros stays as is."""
    out = [[r[0], r[1] or 0.0, r[2] or 0.0] for r in rows]
    for col in (1, 2):
        total = math.fsum(r[col] for r in out)
        if total > 0 and math.isfinite(total):
            for r in out:
                r[col] = r[col] / total
    return out


def columns(rows: Sequence[Row]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(labels, p, q) of a table that :func:`check` accepted."""
    labels = [str(r[0]).strip() for r in rows]
    return (
        labels,
        np.array([r[1] for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.float64),
    )
