"""The lab "Exact on a real model" from the command line: its default run, timed.

    .venv/bin/python -m bench.law_live --quick    # M = 300 per rule, the lab's default
    .venv/bin/python -m bench.law_live            # M = 1,000 per rule

(from the repository root; figures go to bench/RESULTS.md.) The lab's defaults: the bundled
SmolLM2-135M-Instruct as target, the shipped trained head as draft, the copy preset (English,
chat template), T = 1, γ = 2 (3 new tokens a sample), seed 0, broken rule "keep every draft
token". The two rules' M samples each run in turn, as the page's job runs them, counted and
tested with the lab's own code (``specdec_core.live.law``, ``law_view``).

``samples_per_s`` is exact samples ÷ the exact rule's seconds, which include the prompt's
prefill and every forward of the exact law. ``estimate_ratio`` is the time left the page shows
first (``LawLab.eta_s`` once a publication interval has passed) ÷ the time the run then took.
The last line is one JSON object: ``samples``, ``broken_samples``, ``samples_per_s``,
``chi2_p_exact``, ``chi2_p_broken``, ``tv_exact``, ``tv_noise`` (the noise band of the exact
rule's TV), ``tv_broken``, ``law_forwards``, ``exact_wall_s``, ``run_wall_s``,
``estimate_ratio``, ``draft``, ``broken_rule``, ``target``.
"""

from __future__ import annotations

import argparse
import json
import time

from specdec_core.engine.rules import BROKEN_RULES
from specdec_core.live.law import LawLab, LawSettings, law_drafts, law_targets
from specdec_core.live.law_job import PUBLISH_EVERY
from specdec_core.live.law_view import joint_test
from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
from specdec_core.live.presets import preset_prompt
from specdec_core.live.runs import encode_prompt
from specdec_core.models import catalog

#: The lab's default draft, where it fits the target (else the target's first).
LAB_DRAFT = "head"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 300 per rule (the lab's default)")
    parser.add_argument("--samples", type=int, default=None, help="M per rule (overrides --quick)")
    parser.add_argument("--target", choices=law_targets(), default=law_targets()[0])
    parser.add_argument("--draft", default=None, help="a draft kind of the live pages (default: the lab's)")
    parser.add_argument("--broken", choices=BROKEN_RULES, default="accept_all")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n = args.samples or (300 if args.quick else 1000)
    offered = law_drafts(args.target)
    draft_kind = args.draft or (LAB_DRAFT if LAB_DRAFT in offered else offered[0])
    settings = LawSettings(
        TargetSpec(args.target), DraftSpec(draft_kind), samples=n, broken=args.broken, seed=args.seed
    )
    loading = time.perf_counter()
    target = load_target(settings.target)
    draft = load_draft(target, settings.draft)
    text = preset_prompt("copy", "en", toy=bool(catalog.about(args.target).words))
    ids = encode_prompt(target, text, catalog.chat_for(args.target, True), settings.max_new_tokens)
    print(f"models ready in {time.perf_counter() - loading:.1f} s; prompt {len(ids)} tokens", flush=True)

    lab = LawLab(target, draft, ids, settings)
    started = time.perf_counter()
    lab.prime()
    first_eta: tuple[float, float] | None = None  # (when, seconds left) as the page first shows it
    for rule in lab.order():  # the job's order: the two rules in turn
        lab.draw(rule)
        now = time.perf_counter()
        if first_eta is None and now - started >= PUBLISH_EVERY:
            left = lab.eta_s()
            if left is not None:
                first_eta = (now, left)
        if lab.done % 200 == 0:
            print(f"{lab.done}/{lab.total} samples, {lab.done / (now - started):.2f} samples/s", flush=True)
    ended = time.perf_counter()
    exact = joint_test(lab.tallies["exact"], lab.law, args.seed)
    broken = joint_test(lab.tallies[args.broken], lab.law, args.seed + 1)
    assert exact is not None and broken is not None
    exact_wall = lab.seconds["exact"]
    exact_forwards = lab.law.forwards
    ratio = None if first_eta is None else first_eta[1] / max(ended - first_eta[0], 1e-9)

    print(f"\n{'rule':<18} {'N':>6} {'cells':>6} {'chi2':>9} {'p':>10} {'TV':>7} {'noise':>7}")
    for name, t in (("exact", exact), (args.broken, broken)):
        figures = f"{t.statistic:>9.1f} {t.p_value:>10.3g} {t.tv:>7.3f} {t.tv_noise:>7.3f}"
        print(f"{name:<18} {t.n:>6} {t.cells:>6} {figures}")
    print(f"exact rule: {exact_wall:.1f} s, {n / exact_wall:.2f} samples/s, {exact_forwards} law forwards")
    if first_eta is not None:
        shown = first_eta[0] - started
        print(
            f"time left shown at {shown:.1f} s: {first_eta[1]:.1f} s; took {ended - first_eta[0]:.1f} s more"
        )
    print(
        json.dumps(
            {
                "target": args.target,
                "draft": draft_kind,
                "broken_rule": args.broken,
                "samples": exact.n,
                "broken_samples": broken.n,
                "samples_per_s": round(n / exact_wall, 3),
                "chi2_p_exact": exact.p_value,
                "chi2_p_broken": broken.p_value,
                "tv_exact": round(exact.tv, 4),
                "tv_noise": round(exact.tv_noise, 4),
                "tv_broken": round(broken.tv, 4),
                "law_forwards": exact_forwards,
                "exact_wall_s": round(exact_wall, 2),
                "run_wall_s": round(ended - started, 2),
                "estimate_ratio": None if ratio is None else round(ratio, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
