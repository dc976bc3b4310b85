"""Gemma-3-270M as a target: its drafts, SmolLM2-135M drafting across tokenizers, and its loads.

    .venv/bin/python -m bench.cross --quick    # 32 tokens a run, 1 repeat, quick cold load
    .venv/bin/python -m bench.cross            # 64 tokens a run, 2 repeats
    .venv/bin/python -m bench.cross --prompts FILE   # the file's copy and chat prompts instead

(from the repository root; figures go to bench/RESULTS.md.) Greedy decoding throughout; every
speculative output is checked against Gemma's own greedy output (a difference is printed). A
case's time is the fastest of its repeats, its contenders run interleaved. Gemma is a base model:
its shipped copy prompt shows one worked copy first (``bench.prompts.BASE_COPY``), since an
instruction alone makes it write on about the paragraph instead of copying it.

The last line is one JSON object:

* ``gemma_copy_share`` / ``smollm2_copy_share``: the share of each target's own greedy
  continuation of the copy prompts found in the prompt (``bench.prompts.copy_share``; SmolLM2
  reads them as a chat model);
* ``cross_copy`` / ``cross_chat``: Gemma target-only time ÷ time with the best SmolLM2-135M form
  drafting across the tokenizers (float32, bfloat16, or its head cut to Gemma's 16,384 most
  frequent tokens; named in ``cross_*_draft``), each time summed over the category's prompts,
  our engine both sides with default settings (adaptive γ);
* ``cross_vs_hf``: our time ÷ transformers' ``assistant_model`` + ``assistant_tokenizer`` time,
  same pair, copy prompt, greedy, γ = 4 drafts a round on both sides (set on the assistant's
  generation config, where transformers reads it: constant schedule, no confidence stop);
  ``cross_vs_hf_defaults`` the same against transformers with its defaults (up to 20 drafts,
  stopping below confidence 0.4);
* ``gemma_best_chat``: the best Gemma draft's speedup on the chat prompts over the engine's
  target-only run (``gemma_best_chat_draft`` names it), reduced-vocabulary variants included;
  ``gemma_best_model_chat`` the same among drafts that are models (not the n-gram lookup);
* ``gemma_load_s`` (empty cache: join the chunks, de-quantise, save, load) and
  ``gemma_warm_load_s`` (from the cache), each in a fresh process;
* ``gemma_step_ms``: Gemma's target-only decode step, and ``gemma_floor_ms`` its memory floor:
  its weight bytes over this machine's copy bandwidth (``bandwidth_gbs``; ``bench.floor`` has
  the step and floor measured apart).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench import prompts as prompt_sets
from specdec_core.engine import autoregressive, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
from specdec_core.models import LayerSkipDraft, NGramDraft, precision_copy
from specdec_core.models.reduced import frequent_target_tokens, reduced_draft
from specdec_core.sampling import SamplingConfig

GREEDY = SamplingConfig(temperature=0)
REDUCED_N = 16384
_LOAD = "from specdec_core.models.bundled import load_gemma; import time; t=time.perf_counter(); load_gemma(); print(time.perf_counter()-t)"  # noqa: E501


def _child_load(cache: str | None) -> float:
    env = dict(os.environ)
    if cache is not None:
        env["SPECDEC_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", _LOAD], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _bandwidth_gbs() -> float:
    a = np.ones(64 * 2**20, dtype=np.float64)  # 512 MiB
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best / 1e9  # read + write


def _timed(run: Callable[[], list[int]]) -> tuple[float, list[int]]:
    t = time.perf_counter()
    out = run()
    return time.perf_counter() - t, out


def _ours(
    target: Any, draft: Any, ids: list[int], n: int, gamma: int = 4, adaptive: bool = True
) -> list[int]:
    if draft is None:
        return [t for e in autoregressive(target, ids, GREEDY, n) for t in e.committed]
    return [
        t
        for e in generate(target, draft, ids, GREEDY, gamma, n, 0, adaptive_gamma=adaptive)
        for t in e.committed
    ]


def _hf(target: Any, draft: Any, ids: list[int], n: int, gamma: int | None) -> list[int]:
    """transformers' universal assisted decoding of the same pair. It reads γ, its schedule and
    the confidence stop from the *assistant's* generation config: `gamma` sets them like ours
    (γ drafts a round, constant, no confidence stop); None leaves transformers' defaults."""
    import torch

    config = draft.module.generation_config
    saved = copy.deepcopy(config)
    if gamma is not None:
        config.num_assistant_tokens, config.num_assistant_tokens_schedule = gamma, "constant"
        config.assistant_confidence_threshold = 0.0
    else:
        config.num_assistant_tokens = config.num_assistant_tokens_schedule = None
        config.assistant_confidence_threshold = None
    try:
        with torch.inference_mode():
            out = target.module.generate(
                torch.tensor([ids]),
                assistant_model=draft.module,
                tokenizer=target.tokenizer,
                assistant_tokenizer=draft.tokenizer,
                do_sample=False,
                max_new_tokens=n,
                min_new_tokens=n,
            )
    finally:
        draft.module.generation_config = saved
    return [int(t) for t in out[0, len(ids) :]]


def _race(cases: dict[str, Callable[[], list[int]]], repeats: int, expected: list[int]) -> dict[str, float]:
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeats):
        for name, run in cases.items():
            seconds, out = _timed(run)
            best[name] = min(best[name], seconds)
            if out[: len(expected)] != expected[: len(out)]:
                print(f"  {name}: output differs from Gemma's own greedy output", flush=True)
    return best


def _sum_race(
    cases: dict[str, Callable[[list[int]], list[int]]],
    prompts: list[list[int]],
    expected: list[list[int]],
    repeats: int,
) -> dict[str, float]:
    """Each case's best time summed over `prompts` (contenders interleaved per prompt)."""
    total = dict.fromkeys(cases, 0.0)
    for ids, want in zip(prompts, expected, strict=True):
        best = _race({name: (lambda f=f, ids=ids: f(ids)) for name, f in cases.items()}, repeats, want)
        for name, seconds in best.items():
            total[name] += seconds
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="32 tokens, 1 repeat")
    prompt_sets.add_argument(parser)
    args = parser.parse_args(argv)
    n, repeats = (32, 1) if args.quick else (64, 2)
    texts = prompt_sets.merged({"copy": [prompt_sets.BASE_COPY], "chat": [prompt_sets.CHAT]}, args.prompts)
    from_file = prompt_sets.load(args.prompts) if args.prompts else {}
    with tempfile.TemporaryDirectory() as empty:
        cold = _child_load(empty)
    warm = _child_load(None)
    print(f"Gemma load: {cold:.1f} s with no cache, {warm:.1f} s from the cache", flush=True)
    gemma = load_target(TargetSpec("gemma"))
    smol = load_draft(gemma, DraftSpec("smollm2"))
    prompts = {k: [gemma.encode(t) for t in texts[k]] for k in ("copy", "chat")}
    expected = {k: [_ours(gemma, None, ids, n) for ids in v] for k, v in prompts.items()}

    # does each target copy its copy prompts? (SmolLM2 as a chat model reads the instruction)
    result: dict[str, Any] = {}
    smol_texts = from_file.get("copy", [prompt_sets.CHAT_COPY])
    smol_ids = [smol.draft.encode(t, chat=True) for t in smol_texts]
    shares = {
        "gemma": [
            prompt_sets.copy_share(i, e) for i, e in zip(prompts["copy"], expected["copy"], strict=True)
        ],
        "smollm2": [prompt_sets.copy_share(i, _ours(smol.draft, None, i, n)) for i in smol_ids],
    }
    for name, got in shares.items():
        result[f"{name}_copy_share"] = round(float(np.mean(got)), 3)
    print(f"greedy copying on the copy prompts: Gemma {result['gemma_copy_share']}, "
          f"SmolLM2 {result['smollm2_copy_share']}", flush=True)  # fmt: skip

    # SmolLM2 across tokenizers, in three forms, on every copy and chat prompt
    kept = frequent_target_tokens(gemma, REDUCED_N)
    smol_drafts = {
        "SmolLM2 fp32": smol,
        "SmolLM2 bf16": precision_copy(smol.draft, "bfloat16"),
        f"SmolLM2 · {REDUCED_N} tokens": reduced_draft(smol, kept, gemma.vocab_size),
    }
    for task in ("copy", "chat"):
        cases = {"target only": lambda ids: _ours(gemma, None, ids, n)}
        cases |= {name: (lambda ids, d=d: _ours(gemma, d, ids, n)) for name, d in smol_drafts.items()}
        t = _sum_race(cases, prompts[task], expected[task], repeats)
        base = t.pop("target only")
        best = min(t, key=t.__getitem__)
        result[f"cross_{task}"] = round(base / t[best], 3)
        result[f"cross_{task}_draft"] = best
        print(f"{task} ({len(prompts[task])} prompts): target only {base:.2f} s; "
              + ", ".join(f"{k} {v:.2f} s ({base / v:.2f}×)" for k, v in t.items()), flush=True)  # fmt: skip

    ids = prompts["copy"][0]
    want = expected["copy"][0]
    cases = {
        "ours γ=4": lambda: _ours(gemma, smol, ids, n, 4, False),
        "transformers γ=4": lambda: _hf(gemma, smol.draft, ids, n, 4),
        "transformers, its defaults": lambda: _hf(gemma, smol.draft, ids, n, None),
    }
    t = _race(cases, repeats, want)
    result["cross_vs_hf"] = round(t["ours γ=4"] / t["transformers γ=4"], 3)
    result["cross_vs_hf_defaults"] = round(t["ours γ=4"] / t["transformers, its defaults"], 3)
    print(f"copy, SmolLM2 drafting: ours γ=4 {t['ours γ=4']:.2f} s, transformers like for like "
          f"{t['transformers γ=4']:.2f} s, with its defaults {t['transformers, its defaults']:.2f} s",
          flush=True)  # fmt: skip

    # every Gemma draft on the chat prompts, reduced-vocabulary heads included
    bf16 = precision_copy(gemma, "bfloat16")
    drafts: dict[str, Any] = {
        "n-gram": NGramDraft.for_model(gemma),
        "bf16 copy": bf16,
        "layer skip ℓ=6": LayerSkipDraft(gemma, 6),
        "SmolLM2-135M": smol,
        f"bf16 copy · {REDUCED_N} tokens": reduced_draft(bf16, kept, gemma.vocab_size),
        f"layer skip ℓ=6 · {REDUCED_N} tokens": reduced_draft(
            LayerSkipDraft(gemma, 6), kept, gemma.vocab_size
        ),
        f"SmolLM2-135M · {REDUCED_N} tokens": smol_drafts[f"SmolLM2 · {REDUCED_N} tokens"],
    }
    cases = {"target only": lambda ids: _ours(gemma, None, ids, n)}
    cases |= {name: (lambda ids, d=d: _ours(gemma, d, ids, n)) for name, d in drafts.items()}
    t = _sum_race(cases, prompts["chat"], expected["chat"], repeats)
    base = t.pop("target only")
    print(f"\nchat prompts, {n} tokens each, target only {base:.2f} s:")
    for name, seconds in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"  {name:<34} {seconds:6.2f} s  {base / seconds:5.2f}×")
    best = min(t, key=t.__getitem__)
    models = {k: v for k, v in t.items() if k != "n-gram"}
    best_model = min(models, key=models.__getitem__)
    result |= {
        "gemma_best_chat": round(base / t[best], 3),
        "gemma_best_chat_draft": best,
        "gemma_best_model_chat": round(base / models[best_model], 3),
        "gemma_best_model_chat_draft": best_model,
    }

    bytes_ = sum(p.numel() * p.element_size() for p in gemma.module.parameters())
    bw = _bandwidth_gbs()
    step_ms = 1000 * base / (n * len(prompts["chat"]))
    result |= {
        "gemma_load_s": round(cold, 1),
        "gemma_warm_load_s": round(warm, 2),
        "gemma_step_ms": round(step_ms, 1),
        "gemma_floor_ms": round(1000 * bytes_ / (bw * 1e9), 1),
        "bandwidth_gbs": round(bw, 1),
        "prompts": str(args.prompts) if args.prompts else "shipped",
    }
    floor = result["gemma_floor_ms"]
    print(f"Gemma step {step_ms:.1f} ms; memory floor {floor} ms ({bytes_ / 1e9:.2f} GB at {bw:.1f} GB/s)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
