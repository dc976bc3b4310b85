"""Comparison grids saved and loaded: a :class:`GridResult` (a grid's spec, its finished runs,
what was skipped, and where it was measured) as JSON, and the measured example grid shipped in
assets/compare/example_grid.json, shown before anything runs."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from specdec_core.live.compare import ASSETS, Cell, GridError, GridSpec, Measured, cells
from specdec_core.live.settings import DecodeSettings

EXAMPLE_FILE = ASSETS / "example_grid.json"
FORMAT = "specdec-studio/compare-grid"


@dataclass(frozen=True)
class GridResult:
    """A grid as shown: its spec, the runs that finished, whether every run did, the (target,
    draft) pairs skipped with why, and a saved grid's label (machine, date, app version)."""

    spec: GridSpec
    runs: tuple[Measured, ...]
    complete: bool
    skipped: dict[tuple[str, str], str] = field(default_factory=dict)
    label: dict[str, str] = field(default_factory=dict)

    @property
    def cells(self) -> list[Cell]:
        return cells(self.spec, self.runs)


def grid_json(result: GridResult) -> str:
    """A grid and every run it measured, as JSON (load it with :func:`grid_from_json`)."""
    data = {
        "format": FORMAT,
        "version": 2,
        "complete": result.complete,
        "label": dict(result.label),
        "spec": {**asdict(result.spec), "settings": asdict(result.spec.settings)},
        "skipped": [[t, d, why] for (t, d), why in result.skipped.items()],
        "runs": [asdict(m) for m in result.runs],
    }
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def _spec_from(raw: dict[str, Any]) -> GridSpec:
    settings = DecodeSettings(**{**raw["settings"], "tree": tuple(raw["settings"].get("tree", ()))})
    return GridSpec(
        targets=tuple(raw["targets"]),
        drafts=tuple(raw["drafts"]),
        categories=tuple(raw["categories"]),
        per_category=int(raw["per_category"]),
        settings=settings,
        custom_source=str(raw.get("custom_source", "")),
        own_prompts=tuple((str(c), tuple(map(str, p))) for c, p in raw.get("own_prompts", ())),
        questions=tuple((str(c), tuple((q, str(k)) for q, k in ids)) for c, ids in raw.get("questions", ())),
    )


def _measured(raw: dict[str, Any]) -> Measured:
    lists = {k: tuple(raw.get(k, ())) for k in ("output", "accept_lengths")}
    return Measured(**{**raw, **lists})


def measured_json(run: Measured) -> str:
    """One grid run as JSON (how the class's database shares it between app processes)."""
    return json.dumps(asdict(run), ensure_ascii=False)


def measured_from_json(text: str) -> Measured:
    """The run :func:`measured_json` wrote; ValueError when the text is not one."""
    try:
        return _measured(json.loads(text))
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"not a grid run: {exc}") from None


def grid_from_json(text: str | bytes) -> GridResult:
    """The grid saved by :func:`grid_json`; GridError("file") when the text is not one."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise GridError("this file is not a saved comparison grid.", "file")
        spec = _spec_from(data["spec"])
        spec.check()
        runs = tuple(_measured(m) for m in data["runs"])
        skipped = {(str(t), str(d)): str(why) for t, d, why in data.get("skipped", ())}
        label = {str(k): str(v) for k, v in data.get("label", {}).items()}
        return GridResult(spec, runs, bool(data.get("complete", False)), skipped, label)
    except GridError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GridError(f"this file is not a saved comparison grid ({exc}).", "file") from None


def example() -> GridResult | None:
    """The measured grid shipped to show before anything runs (assets/compare/example_grid.json,
    labelled with its machine, date and app version); None when the file is absent."""
    return grid_from_json(EXAMPLE_FILE.read_bytes()) if EXAMPLE_FILE.is_file() else None
