"""Helpers for exploring sampling settings: a temperature scale, random logits, sweeps, and
the lab's examples and logit tables (loaded, read from the URL, checked after an edit).

Everything here calls :mod:`specdec_core.sampling` for the maths; it only arranges inputs
(a round-number temperature scale, seeded random logits) and summarises outputs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from specdec_core.sampling import (
    SamplingConfig,
    SamplingTrace,
    greedy,
    softmax,
    temperature_scaled,
    top_k_removed,
    top_p_removed,
    validate_logits,
)

#: Round numbers spaced roughly evenly on a log scale within one decade.
_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def temperature_scale(lo_exp: int = -4, hi_exp: int = 1) -> tuple[float, ...]:
    """Temperatures 10**lo_exp … 10**hi_exp in round steps, evenly spread on a log axis."""
    if lo_exp >= hi_exp:
        raise ValueError(f"the scale needs lo_exp < hi_exp, got {lo_exp} and {hi_exp}.")
    values = [round(m * 10.0**e, 12) for e in range(lo_exp, hi_exp) for m in _MANTISSAS]
    return (*values, round(10.0**hi_exp, 12))


def snap_temperature(t: float, scale: Sequence[float]) -> float:
    """The value of `scale` nearest to `t` on a log axis; ValueError outside the scale."""
    t = float(t)
    lo, hi = min(scale), max(scale)
    if not np.isfinite(t) or not lo <= t <= hi:
        raise ValueError(f"temperature {t!r} is outside the scale {lo:g} … {hi:g}.")
    logs = np.log(np.asarray(scale, dtype=np.float64))
    return float(scale[int(np.argmin(np.abs(logs - np.log(t))))])


def random_logits(size: int, seed: int, spread: float = 2.0) -> np.ndarray:
    """`size` logits drawn from N(0, spread²) with a fixed seed, rounded to 2 decimals."""
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"size must be a positive whole number, got {size!r}.")
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(0.0, spread, int(size)), 2)


@dataclass(frozen=True)
class Outcome:
    """What the final distribution allows: how many tokens, the extremes, greedy's pick."""

    support_size: int
    p_max: float
    p_min_sampleable: float
    greedy_token: int


def outcome(logits: Sequence[float] | np.ndarray, trace: SamplingTrace) -> Outcome:
    """Summarise `trace` (computed from `logits`) for display."""
    probs = trace.probs
    sampleable = probs[probs > 0]
    return Outcome(
        support_size=int(sampleable.size),
        p_max=float(sampleable.max()),
        p_min_sampleable=float(sampleable.min()),
        greedy_token=greedy(logits),
    )


@dataclass(frozen=True)
class TemperatureSweep:
    """The final distribution at each temperature, other settings held fixed.

    ``probs[i]`` is the distribution at ``temperatures[i]``; ``support_size[i]`` counts its
    tokens with probability above 0.
    """

    temperatures: np.ndarray
    probs: np.ndarray
    support_size: np.ndarray


def temperature_sweep(
    logits: Sequence[float] | np.ndarray,
    config: SamplingConfig,
    temperatures: Sequence[float] | np.ndarray | None = None,
) -> TemperatureSweep:
    """Apply `config` at every positive temperature in `temperatures` (its T is replaced);
    by default 161 temperatures evenly spaced on a log axis from 10⁻⁴ to 10."""
    z = validate_logits(logits)
    temps = np.logspace(-4, 1, 161) if temperatures is None else np.asarray(temperatures, dtype=np.float64)
    if temps.ndim != 1 or temps.size == 0 or np.any(~np.isfinite(temps)) or np.any(temps <= 0):
        raise ValueError("temperatures must be a non-empty list of positive finite numbers.")
    return _sweep(tuple(z.tolist()), config, tuple(temps.tolist()))


@lru_cache(maxsize=128)
def _sweep(z: tuple[float, ...], config: SamplingConfig, temps: tuple[float, ...]) -> TemperatureSweep:
    """The sweep for exact inputs, kept: a learner turning other controls asks for it again.
    Its arrays are read-only, as every caller shares them."""
    probs = _final_rows(np.array(z), config, np.array(temps))
    sweep = TemperatureSweep(np.array(temps), probs, np.count_nonzero(probs > 0, axis=1))
    for array in (sweep.temperatures, sweep.probs, sweep.support_size):
        array.flags.writeable = False
    return sweep


def _final_rows(z: np.ndarray, config: SamplingConfig, temps: np.ndarray) -> np.ndarray:
    """``apply(z, config with T = t).probs`` for every t at once, one row per temperature:
    the same transforms as :func:`specdec_core.sampling.apply` (they work row by row), so a
    first visit of the sampling lab does not pay 161 separate calls; tests compare the two
    value for value.
    """
    scores = np.repeat(z[None, :], temps.size, axis=0)
    probs = softmax(scores)
    for name in config.order:
        cut = np.zeros(scores.shape, dtype=bool)
        if name == "temperature":
            scores = temperature_scaled(scores, temps[:, None])
        elif name == "top_k" and config.top_k > 0:
            cut = top_k_removed(probs, config.top_k, config.min_tokens_to_keep)
        elif name == "top_p" and config.top_p < 1.0:
            cut = top_p_removed(probs, config.top_p, config.min_tokens_to_keep)
        cut &= probs > 0
        scores = np.where(cut, -np.inf, scores)
        probs = softmax(scores)
    return probs


def format_logit_table(labels: Sequence[str], logits: Sequence[float]) -> str:
    """Write a table of tokens as ``label:logit,label:logit`` (``\\`` escapes ``,`` and ``\\``).

    Logits are written in the shortest form that reads back to the same float64.
    """
    if len(labels) != len(logits):
        raise ValueError(f"{len(labels)} labels for {len(logits)} logits: give one label per logit.")
    cells = []
    for label, value in zip(labels, validate_logits(logits), strict=True):
        escaped = str(label).replace("\\", "\\\\").replace(",", "\\,")
        cells.append(f"{escaped}:{np.format_float_positional(value, trim='-')}")
    return ",".join(cells)


def parse_logit_table(text: str) -> tuple[list[str], np.ndarray]:
    """Read what :func:`format_logit_table` wrote; ValueError with the reason otherwise."""
    cells, cell, escaped = [], [], False
    for char in text:
        if escaped:
            cell.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            cells.append("".join(cell))
            cell = []
        else:
            cell.append(char)
    if escaped:
        raise ValueError("the table ends with a lone backslash.")
    cells.append("".join(cell))
    labels, values = [], []
    for cell_text in cells:
        label, sep, value = cell_text.rpartition(":")
        if not sep:
            raise ValueError(f"{cell_text!r} is not of the form label:logit.")
        try:
            values.append(float(value))
        except ValueError:
            raise ValueError(f"{value!r} is not a number.") from None
        labels.append(label)
    return labels, validate_logits(values)


EXAMPLES_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets" / "logits.json"
#: Largest |logit| a table may hold.
MAX_LOGIT = 100.0
#: A logit table: (token label, logit) rows.
Rows = tuple[tuple[str, float], ...]


@cache
def examples() -> dict[str, Any]:
    """The lab's examples (assets/presets/logits.json): ``presets`` (name → logits and tokens
    per language), ``random_tokens`` (per language) and ``experiments``; read once."""
    with EXAMPLES_FILE.open(encoding="utf-8") as f:
        return json.load(f)


def example_rows(name: str, language: str, size: int = 6, seed: int = 0) -> Rows:
    """The rows of example `name` with its `language` labels; ``"random"`` is `size` seeded logits."""
    data = examples()
    if name == "random":
        values, labels = random_logits(size, seed), data["random_tokens"][language][:size]
    elif name in data["presets"]:
        values, labels = data["presets"][name]["logits"], data["presets"][name]["tokens"][language]
    else:
        raise ValueError(f"no example named {name!r}.")
    return tuple((str(a), float(b)) for a, b in zip(labels, values, strict=True))


def _checked(labels: Sequence[str], values: Sequence[float], min_rows: int, max_rows: int) -> Rows:
    if not min_rows <= len(labels) <= max_rows:
        raise ValueError(f"a table needs {min_rows} to {max_rows} rows, got {len(labels)}.")
    if any(abs(v) > MAX_LOGIT for v in values):
        raise ValueError(f"logits lie within ±{MAX_LOGIT:g}.")
    return tuple(zip(labels, (float(v) for v in values), strict=True))


def rows_from_url(raw: str, min_rows: int, max_rows: int) -> Rows:
    """The rows a URL carries (:func:`format_logit_table`'s form); ValueError when they cannot
    be read or fall outside the row limits or ±:data:`MAX_LOGIT`."""
    labels, values = parse_logit_table(raw)
    return _checked(labels, values.tolist(), min_rows, max_rows)


def rows_to_url(rows: Rows) -> str:
    """`rows` in the URL's form."""
    return format_logit_table([r[0] for r in rows], [r[1] for r in rows])


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def edited_rows(
    tokens: Sequence[object], logits: Sequence[object], min_rows: int, max_rows: int
) -> tuple[Rows | None, str | None]:
    """The rows of an edited table, or ``(None, why)``: ``"rows"`` when it has too few or too
    many rows, ``"missing"`` when a cell is empty (None or NaN)."""
    if len(tokens) != len(logits):
        raise ValueError(f"{len(tokens)} tokens for {len(logits)} logits.")
    if not min_rows <= len(tokens) <= max_rows:
        return None, "rows"
    if any(_missing(v) for v in (*tokens, *logits)):
        return None, "missing"
    return tuple((str(a), float(b)) for a, b in zip(tokens, logits, strict=True)), None
