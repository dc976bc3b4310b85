"""The comparison workbench's tables: one row per cell for CSV, a Markdown table to paste into
a paper, and the bench's JSON line.

A row holds what a researcher reads per cell (see :class:`~specdec_core.live.compare.Cell`): τ
pooled over the prompts with its spread, α̂, tokens per second with and without the draft, the
pooled speedups (wall clock and decode time) and Spec-Bench's mean-of-throughputs speedup, the
draft's cost c estimated from its weights and timed on the machine that ran it, the
memory-bound projection, and the greedy-identity verdict.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from specdec_core.live.compare import Cell, GridSpec

CSV_COLUMNS = (
    "target",
    "draft",
    "category",
    "prompts",
    "tau",
    "tau_min",
    "tau_max",
    "acceptance",
    "tokens_per_s",
    "baseline_tokens_per_s",
    "wall_speedup",
    "decode_speedup",
    "decode_speedup_min",
    "decode_speedup_max",
    "spec_bench_speedup",
    "c_estimate",
    "c_measured",
    "c_projection",
    "projected_speedup",
    "greedy_identical",
)
#: The Markdown table's columns (a subset of :data:`CSV_COLUMNS`), in order.
MARKDOWN_COLUMNS = (
    "target",
    "draft",
    "category",
    "tau",
    "acceptance",
    "tokens_per_s",
    "baseline_tokens_per_s",
    "wall_speedup",
    "spec_bench_speedup",
    "c_estimate",
    "c_measured",
    "greedy_identical",
)


_TEXT_COLUMNS = ("target", "draft", "category")


def _fmt(v: float | None, places: int = 4) -> str:
    return "" if v is None else f"{v:.{places}f}"


def cell_rows(cells_: Iterable[Cell], c: float | None = None) -> list[dict[str, str | int]]:
    """One row per cell in :data:`CSV_COLUMNS` order, figures to four places ("" where
    undefined), with the memory-bound projection at draft cost `c` (None: each draft's own
    estimated cost)."""
    out = []
    for cell in cells_:
        sp = cell.decode_speedups
        used = cell.c_estimate if c is None else c
        values = [
            cell.target,
            cell.draft,
            cell.category,
            len(cell.runs),
            _fmt(cell.tau),
            _fmt(min(cell.taus)),
            _fmt(max(cell.taus)),
            _fmt(cell.acceptance),
            _fmt(cell.tokens_per_s),
            _fmt(cell.baseline_tokens_per_s),
            _fmt(cell.wall_speedup),
            _fmt(cell.decode_speedup),
            _fmt(min(sp)) if sp else "",
            _fmt(max(sp)) if sp else "",
            _fmt(cell.spec_bench_speedup),
            _fmt(cell.c_estimate),
            _fmt(cell.c_measured),
            _fmt(used),
            _fmt(cell.projected(c)),
            "" if cell.greedy_identical is None else str(cell.greedy_identical).lower(),
        ]
        out.append(dict(zip(CSV_COLUMNS, values, strict=True)))
    return out


def cells_csv(cells_: Iterable[Cell], c: float | None = None) -> str:
    """The cells as CSV (:func:`cell_rows`)."""
    out = io.StringIO()
    w = csv.DictWriter(out, CSV_COLUMNS)
    w.writeheader()
    w.writerows(cell_rows(cells_, c))
    return out.getvalue()


def _md_cell(text: str) -> str:
    """A Markdown table cell: pipes and line breaks would end the cell or the row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(
    cells_: Iterable[Cell], headers: Mapping[str, str], names: Mapping[str, str] | None = None
) -> str:
    """The cells as a Markdown table of :data:`MARKDOWN_COLUMNS` headed by `headers` (one per
    column), figures to two places, ready to paste into a paper or a leaderboard row; `names`
    maps draft and category keys to shown names."""
    names = names or {}
    lines = [
        "| " + " | ".join(_md_cell(headers[k]) for k in MARKDOWN_COLUMNS) + " |",
        "|"
        + "|".join(":--" if k in ("target", "draft", "category") else "--:" for k in MARKDOWN_COLUMNS)
        + "|",
    ]
    for row in cell_rows(cells_):
        shown = []
        for k in MARKDOWN_COLUMNS:
            v = str(row[k])
            if k in _TEXT_COLUMNS:
                v = names.get(v, v)
            elif k != "greedy_identical" and v:
                v = f"{float(v):.2f}"
            shown.append(_md_cell(v) or "—")
        lines.append("| " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def summary(spec: GridSpec, cells_: Sequence[Cell], wall_s: float) -> dict[str, Any]:
    """The bench's JSON line: the grid's lists; τ, acceptance, decode-time speedup (pooled),
    Spec-Bench's speedup per cell key; each draft's estimated and measured c per
    ``"<target>/<draft>"``; identity."""
    identical = [c.greedy_identical for c in cells_]
    return {
        "targets": list(spec.targets),
        "drafts": list(spec.drafts),
        "categories": list(spec.categories),
        "tau": {c.key: round(c.tau, 4) for c in cells_},
        "acceptance": {c.key: _round(c.acceptance) for c in cells_},
        "speedup": {c.key: _round(c.decode_speedup) for c in cells_},
        "spec_bench_speedup": {c.key: _round(c.spec_bench_speedup) for c in cells_},
        "c_estimate": {f"{c.target}/{c.draft}": _round(c.c_estimate) for c in cells_},
        "c_measured": {f"{c.target}/{c.draft}": _round(c.c_measured) for c in cells_},
        "greedy_identical": bool(identical) and all(v is True for v in identical),
        "wall_s": round(wall_s, 1),
    }
