"""The comparison workbench from the command line: drafts × targets × task categories.

    .venv/bin/python -m bench.compare --quick    # 2 targets, 4 drafts, 6 categories
    .venv/bin/python -m bench.compare            # the same on every category, 2 prompts each
    .venv/bin/python -m bench.compare --prompts FILE   # the file's prompts in place of the shipped

(from the repository root; figures go to bench/RESULTS.md.) Greedy decoding, γ adaptive,
32 new tokens. For every cell it prints τ (tokens per target pass), the measured acceptance
rate, the decode-time speedup over the same prompt's target-only run, and the projection
where verification is memory-bound (draft cost c = 0.05 and the draft's own forwards).

The last line is one JSON object: ``targets``, ``drafts``, ``categories`` (lists); ``tau``,
``acceptance`` and ``speedup`` (decode time), each keyed ``"<target>/<draft>/<category>"``;
``greedy_identical`` (every cell's greedy output equals its target's own); ``wall_s``.
"""

from __future__ import annotations

import argparse
import json
import time

from bench import prompts as prompt_sets
from specdec_core.live.compare import CATEGORIES, MAX_PER_CATEGORY, GridSpec, cells, ranking, summary
from specdec_core.live.compare_run import GridModels, GridRun
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.shelf import ModelShelf

TARGETS = ("bundled", "gemma")
DRAFTS = ("ngram", "bf16", "layerskip-6", "layerskip-12")
QUICK_CATEGORIES = CATEGORIES[:6]
#: A draft's cost in target steps for the memory-bound projection.
PROJECTION_C = 0.05


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Spec-Bench's six categories, one prompt each")
    parser.add_argument("--tokens", type=int, default=32, help="new tokens per run (default 32)")
    prompt_sets.add_argument(parser)
    args = parser.parse_args(argv)
    categories = QUICK_CATEGORIES if args.quick else CATEGORIES
    per_category = 1 if args.quick else 2
    own: dict[str, list[str]] = {}
    if args.prompts:  # the file's prompts in place of a category's; its new categories added
        own = prompt_sets.load(args.prompts)
        categories = (*categories, *(c for c in own if c not in categories))
        per_category = min(MAX_PER_CATEGORY, *(len(own[c]) for c in categories if c in own))
    spec = GridSpec(
        targets=TARGETS,
        drafts=DRAFTS,
        categories=categories,
        per_category=per_category,
        settings=DecodeSettings(gamma=4, adaptive=True, max_new_tokens=args.tokens),
        own_prompts=tuple((c, tuple(p)) for c, p in own.items()),
    )
    started = time.perf_counter()
    run = GridRun(spec, GridModels(ModelShelf()))
    for step in run:
        print(
            f"[{step.done}/{step.total}] {step.target} {step.draft} {step.category} #{step.prompt}",
            flush=True,
        )
    wall = time.perf_counter() - started
    grid = cells(spec, run.measured)
    for (t, d), why in run.skipped.items():
        print(f"skipped {t}/{d}: {why}")
    print(f"\n{'cell':<40} {'tau':>6} {'acc':>6} {'decode×':>8} {'wall×':>7} {'proj×':>7} same")
    for c in grid:
        acc = "—" if c.acceptance is None else f"{c.acceptance:.3f}"
        dec = "—" if c.decode_speedup is None else f"{c.decode_speedup:.2f}"
        wall_x = "—" if c.wall_speedup is None else f"{c.wall_speedup:.2f}"
        proj = f"{c.projected(PROJECTION_C):.2f}"
        print(f"{c.key:<40} {c.tau:6.2f} {acc:>6} {dec:>8} {wall_x:>7} {proj:>7} {c.greedy_identical}")
    print()
    for t in spec.targets:
        for cat in spec.categories:
            top = [p.draft for p in ranking(grid, t, cat, "decode_speedup") if p.tied_with_best]
            print(f"best on {t}/{cat} (decode time, ties within 10 %): {', '.join(top) or '—'}")
    print(json.dumps(summary(spec, grid, wall)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
