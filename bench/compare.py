"""The comparison workbench from the command line: drafts × targets × task categories.

    .venv/bin/python -m bench.compare --quick    # 2 targets, 4 drafts, 6 categories
    .venv/bin/python -m bench.compare            # the same on every category, 2 prompts each
    .venv/bin/python -m bench.compare --prompts FILE   # the file's prompts in place of the shipped
    .venv/bin/python -m bench.compare --quick --spec-bench question.jsonl --answers DIR

(from the repository root; figures go to bench/RESULTS.md.) Greedy decoding, γ fixed at 4
(``--adaptive``: chosen each round from the costs timed on this machine), 32 new tokens. For
every cell it prints τ (tokens per target pass, pooled over the prompts), the measured
acceptance rate, the decode-time and wall-clock speedups over the target alone (pooled: all
tokens ÷ all seconds), Spec-Bench's speedup (mean over prompts of tokens per second ÷ the same
for the target alone), the draft's cost c (from its weights, and timed on this machine) and the
projection where verification is memory-bound at that estimated c.

``--spec-bench PATH`` runs Spec-Bench's own questions (its ``data/spec_bench/question.jsonl``):
``--per-category`` of each of its six tasks, sampled with ``--seed``, first turns only.
``--answers DIR`` then writes Spec-Bench answer files, ``DIR/<target>/<method>.jsonl`` with the
target alone as ``target-only.jsonl``, and the target's tokenizer in ``DIR/<target>/tokenizer/``,
for Spec-Bench's ``evaluation/speed.py``. ``--save FILE`` writes the grid as the Compare page
loads it, labelled with this machine, the date and the app's version.

The last line is one JSON object: ``targets``, ``drafts``, ``categories`` (lists); ``tau``,
``acceptance``, ``speedup`` (decode time) and ``spec_bench_speedup``, each keyed
``"<target>/<draft>/<category>"``; ``c_estimate`` and ``c_measured`` keyed
``"<target>/<draft>"``; ``greedy_identical`` (every cell's greedy output equals its target's
own); ``wall_s``; with ``--spec-bench``, ``spec_bench``: {target: {method: {task: {"tau",
"speedup"}}}} under Spec-Bench's task names.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
import tomllib
from datetime import date
from pathlib import Path

from bench import prompts as prompt_sets
from specdec_core.live import spec_bench
from specdec_core.live.compare import (
    CATEGORIES,
    MAX_PER_CATEGORY,
    GridSpec,
    cells,
    draft_keys,
    ranking,
    target_keys,
)
from specdec_core.live.compare_run import GridModels, GridRun
from specdec_core.live.compare_saved import GridResult, grid_json
from specdec_core.live.compare_tables import summary
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.shelf import ModelShelf
from specdec_core.models import catalog

ROOT = Path(__file__).resolve().parents[1]
TARGETS = tuple(k for k in target_keys() if not catalog.about(k).needs_source)
DRAFTS = ("ngram", "bf16", "layerskip-6", "layerskip-12")
QUICK_CATEGORIES = CATEGORIES[:6]


def _keys(allowed: tuple[str, ...]):
    def parse(raw: str) -> tuple[str, ...]:
        chosen = tuple(k for k in raw.split(",") if k)
        unknown = [
            k for k in chosen if k not in allowed and catalog.parse_draft_key(k)[0].kind not in allowed
        ]
        if not chosen or unknown:
            raise argparse.ArgumentTypeError(f"choose from {', '.join(allowed)} (got {raw!r})")
        return chosen

    return parse


def label() -> dict[str, str]:
    """What a saved grid says about where it was measured: machine, date and app version."""
    from specdec_core.models.hf.kernel_choice import cpu_model

    with (ROOT / "pyproject.toml").open("rb") as f:
        version = tomllib.load(f)["project"]["version"]
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        version += f" ({rev.stdout.strip()})" if rev.returncode == 0 else ""
    except OSError:  # no git: the version alone
        pass
    return {
        "machine": f"{cpu_model()}, {os.cpu_count()} cores",
        "date": date.today().isoformat(),
        "app_version": version,
    }


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Spec-Bench's six categories, one prompt each")
    parser.add_argument("--tokens", type=int, default=32, help="new tokens per run (default 32)")
    parser.add_argument(
        "--adaptive", action="store_true", help="γ chosen from this machine's timed costs (default: γ = 4)"
    )
    parser.add_argument("--targets", type=_keys(target_keys()), default=TARGETS, help="comma-separated")
    kinds = tuple(dict.fromkeys(draft_keys() + tuple(d.key for d in catalog.drafts())))
    parser.add_argument("--drafts", type=_keys(kinds), default=DRAFTS, help="comma-separated")
    parser.add_argument("--categories", type=_keys(CATEGORIES), help="comma-separated (default: all)")
    parser.add_argument("--per-category", type=int, help="prompts (or questions) per category")
    parser.add_argument("--spec-bench", type=Path, metavar="PATH", help="Spec-Bench's question.jsonl")
    parser.add_argument("--seed", type=int, default=0, help="which questions --spec-bench samples")
    parser.add_argument("--answers", type=Path, metavar="DIR", help="write Spec-Bench answer files here")
    parser.add_argument(
        "--save", type=Path, metavar="FILE", help="write the grid as the Compare page loads it"
    )
    prompt_sets.add_argument(parser)
    args = parser.parse_args(argv)
    if args.answers and not args.spec_bench:
        parser.error("--answers needs --spec-bench: answer files name Spec-Bench's questions.")
    if args.spec_bench and args.prompts:
        parser.error("choose --spec-bench or --prompts, not both.")
    return args


def grid(args: argparse.Namespace) -> GridSpec:
    """The grid the command line asks for (SystemExit with a plain message for a bad file)."""
    categories = args.categories or (QUICK_CATEGORIES if args.quick else CATEGORIES)
    per_category = args.per_category or (1 if args.quick else 2)
    own: dict[str, list[str]] = {}
    questions: tuple = ()
    if args.spec_bench:
        try:
            picked = spec_bench.sample(
                spec_bench.read_questions(args.spec_bench.read_bytes()), per_category, args.seed
            )
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{args.spec_bench}: {exc}") from None
        categories = tuple(c for c in picked.categories if args.categories is None or c in args.categories)
        own = {c: list(p) for c, p in picked.own_prompts}
        questions = picked.questions
        per_category = min(per_category, *(picked.counts[c] for c in categories))
    elif args.prompts:  # the file's prompts in place of a category's; its new categories added
        try:
            own = prompt_sets.load(args.prompts)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        categories = (*categories, *(c for c in own if c not in categories))
        per_category = min(MAX_PER_CATEGORY, *(len(own[c]) for c in categories if c in own))
    return GridSpec(
        targets=args.targets,
        drafts=args.drafts,
        categories=tuple(categories),
        per_category=per_category,
        settings=DecodeSettings(gamma=4, adaptive=args.adaptive, max_new_tokens=args.tokens),
        own_prompts=tuple((c, tuple(p)) for c, p in own.items()),
        questions=questions,
    )


def write_answers(spec: GridSpec, run: GridRun, folder: Path) -> None:
    """Spec-Bench answer files and each target's tokenizer under `folder`."""
    for name, text in spec_bench.answer_files(spec, run.measured).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for t in spec.targets:
        run.models.target(t).tokenizer.save_pretrained(folder / t / "tokenizer")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    spec = grid(args)
    measured_by = label()  # the code that measures, read before the run
    started = time.perf_counter()
    run = GridRun(spec, GridModels(ModelShelf()))
    for step in run:
        print(
            f"[{step.done}/{step.total}] {step.target} {step.draft} {step.category} #{step.prompt}",
            flush=True,
        )
    wall = time.perf_counter() - started
    table = cells(spec, run.measured)
    for (t, d), why in run.skipped.items():
        print(f"skipped {t}/{d}: {why}")
    heads = ("tau", "acc", "decode×", "wall×", "SB×", "c", "proj×")
    print("\n" + f"{'cell':<40}" + "".join(f"{h:>9}" for h in heads) + " same")
    for c in table:
        figs = [c.tau, c.acceptance, c.decode_speedup, c.wall_speedup, c.spec_bench_speedup]
        figs += [c.c_estimate, c.projected()]
        shown = "".join(f"{'—' if v is None else f'{v:.3f}':>9}" for v in figs)
        print(f"{c.key:<40}{shown} {c.greedy_identical}")
    print()
    for t in spec.targets:
        for cat in spec.categories:
            top = [p.draft for p in ranking(table, t, cat, "decode_speedup") if p.tied_with_best]
            print(f"best on {t}/{cat} (decode time, ties within 10 %): {', '.join(top) or '—'}")
    if args.answers:
        write_answers(spec, run, args.answers)
        print(f"Spec-Bench answer files in {args.answers}/<target>/ (tokenizer in <target>/tokenizer/)")
    if args.save:
        complete = len(run.measured) + _skipped_runs(spec, run) == spec.runs
        result = GridResult(spec, tuple(run.measured), complete, dict(run.skipped), measured_by)
        args.save.write_text(grid_json(result), encoding="utf-8")
        print(f"grid saved to {args.save}")
    out = summary(spec, table, wall)
    if args.spec_bench:
        out["spec_bench"] = spec_bench.figures(table)
    print(json.dumps(out))
    return 0


def _skipped_runs(spec: GridSpec, run: GridRun) -> int:
    """Runs a grid never made because their draft did not fit the target."""
    return len(run.skipped) * len(spec.categories) * spec.per_category


if __name__ == "__main__":
    raise SystemExit(main())
