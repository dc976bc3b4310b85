"""``python -m train <stage>``: the stages that reproduce the shipped draft head.

    python -m train prompts                 # print the prompt set's size per kind and split
    python -m train generate --split train  # the target's answers (resumable shards)
    python -m train generate --split held_out
    python -m train corpus                  # local text framed as answers (prefill only)
    python -m train features                # target features + soft-label normalisers (prefill)
    python -m train vocab --size 8192       # rewrite the head vocabulary (features writes 4096)
    python -m train fit --minutes 50        # train the head (resumable checkpoints)
    python -m train evaluate                # greedy acceptance and α at T = 0.7, held-out prompts
    python -m train export                  # assets/head/ (safetensors + model card numbers)
    python -m train calibrate               # its confidence against acceptance; the chain's stop floor
    python -m train early-exit              # α of untrained exits per depth (for the lesson)
    python -m train card --bench LOG        # record bench/speedup.py's head figures in the card
    python -m train medusa-fit --steps 300  # Medusa heads on the same features (resumable)
    python -m train medusa-evaluate         # their held-out acceptance per head
    python -m train medusa-export           # assets/medusa/ (safetensors + model card numbers)

Every stage is seeded and resumes from what the previous run left. See train/README.md.
"""

from __future__ import annotations

from specdec_core.models.omp import prefer_passive_wait

prefer_passive_wait()  # first: libgomp reads its wait policy once, when torch loads (models/omp.py)

import argparse  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402

import torch  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    sub.add_parser("prompts")
    g = sub.add_parser("generate")
    g.add_argument("--split", default="train", choices=("train", "held_out"))
    g.add_argument("--batch", type=int, default=32)
    g.add_argument("--max-new-tokens", type=int, default=192)
    g.add_argument("--limit", type=int, default=None, help="only the first N prompts")
    g.add_argument("--minutes", type=float, default=None, help="stop (resumably) after this long")
    sub.add_parser("corpus")
    f = sub.add_parser("features")
    f.add_argument("--split", default="train", choices=("train", "held_out", "corpus"))
    f.add_argument("--shards", type=int, default=None, help="only the first N shards of the split")
    v = sub.add_parser("vocab")
    v.add_argument("--size", type=int, default=None, help="tokens in the head vocabulary (default 4096)")
    t = sub.add_parser("fit")
    t.add_argument("--minutes", type=float, default=50.0, help="wall-clock budget of this run")
    t.add_argument("--steps", type=int, default=None, help="stop at this total step count")
    t.add_argument("--schedule", type=int, default=None, help="cosine schedule length in steps (new runs)")
    t.add_argument("--lr", type=float, default=None, help="peak learning rate (new runs)")
    t.add_argument(
        "--init",
        default=None,
        help="a finished run's checkpoint (or an exported head) to start a new run from",
    )
    e = sub.add_parser("evaluate")
    e.add_argument("--prompts", type=int, default=24, help="held-out prompts to run")
    e.add_argument("--tokens", type=int, default=96, help="new tokens per prompt")
    e.add_argument("--weights", default=None, help="a head file (default: the latest checkpoint)")
    e.add_argument("--split", default="held_out", choices=("held_out", "corpus"))
    e.add_argument("--first-shard", type=int, default=0, help="skip the shards before this one")
    sub.add_parser("export")
    cal = sub.add_parser("calibrate")
    cal.add_argument("--prompts", type=int, default=32, help="held-out prompts to run")
    sub.add_parser("early-exit")
    m = sub.add_parser("medusa-fit")
    m.add_argument("--minutes", type=float, default=30.0, help="wall-clock budget of this run")
    m.add_argument("--steps", type=int, default=None, help="total steps of the run (new runs)")
    m.add_argument("--lr", type=float, default=None, help="peak learning rate (new runs)")
    m.add_argument("--train-shards", type=int, default=None, help="only the first N answer shards (new runs)")
    sub.add_parser("medusa-evaluate")
    sub.add_parser("medusa-export")
    c = sub.add_parser("card")
    c.add_argument("--bench", required=True, help="a saved output of bench/speedup.py")
    for p in sub.choices.values():
        p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.stage == "prompts":
        from train import prompts

        for split in ("train", "held_out"):
            items = prompts.build(split)
            print(split, len(items), dict(Counter(p.kind for p in items)))
    elif args.stage == "generate":
        from train import generate

        generate.run(args.split, args.batch, args.max_new_tokens, args.limit, args.minutes)
    elif args.stage == "corpus":
        from train import corpus

        corpus.run()
    elif args.stage == "features":
        from train import features

        features.run(args.split, args.shards)
    elif args.stage == "vocab":
        from specdec_core.models import load_bundled
        from train import features

        features.write_vocab(load_bundled().eos_token_id, args.size)
    elif args.stage == "fit":
        from train import fit

        fit.run(args.minutes, args.steps, args.schedule, args.lr, args.init)
    elif args.stage == "evaluate":
        from train import evaluate

        evaluate.run(args.prompts, args.tokens, args.weights, args.split, args.first_shard)
    elif args.stage == "calibrate":
        from train import calibrate

        calibrate.run(args.prompts)
    elif args.stage == "card":
        from train import bench_card

        bench_card.record_bench(args.bench)
    elif args.stage == "early-exit":
        from train import early_exit

        early_exit.run()
    elif args.stage.startswith("medusa-"):
        from train import medusa

        if args.stage == "medusa-fit":
            medusa.fit(args.minutes, args.steps or medusa.STEPS, args.lr or medusa.LR, args.train_shards)
        elif args.stage == "medusa-evaluate":
            medusa.evaluate()
        else:
            medusa.export()
    elif args.stage == "export":
        from train import export

        export.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
