"""Gemma-3-270M as a target: its drafts, SmolLM2-135M drafting across tokenizers, and its loads.

    .venv/bin/python -m bench.cross --quick    # 32 tokens a run, 1 repeat, quick cold load
    .venv/bin/python -m bench.cross            # 64 tokens a run, 2 repeats

(from the repository root; figures go to bench/RESULTS.md.) Greedy decoding throughout; every
speculative output is checked against Gemma's own greedy output (a difference is printed). A
case's time is the fastest of its repeats, its contenders run interleaved.

The last line is one JSON object:

* ``cross_copy`` / ``cross_chat``: Gemma target-only time ÷ time with SmolLM2-135M drafting
  across the tokenizers (our engine both sides, default settings: adaptive γ);
* ``cross_vs_hf``: our time ÷ transformers' ``assistant_model`` + ``assistant_tokenizer`` time,
  same pair, copy prompt, fixed γ = 4, greedy;
* ``gemma_best_chat``: the best Gemma draft's speedup on the chat prompt over the engine's
  target-only run (``gemma_best_chat_draft`` names it), reduced-vocabulary variants included;
* ``gemma_load_s`` (empty cache: join the chunks, de-quantise, save, load) and
  ``gemma_warm_load_s`` (from the cache), each in a fresh process;
* ``gemma_step_ms``: Gemma's target-only decode step, and ``gemma_floor_ms`` its memory floor:
  its weight bytes over this machine's copy bandwidth (``bandwidth_gbs``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from specdec_core.engine import autoregressive, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
from specdec_core.live.presets import preset_prompt
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


def _hf(target: Any, draft: Any, ids: list[int], n: int, gamma: int) -> list[int]:
    import torch

    g = target.module.generation_config
    g.num_assistant_tokens, g.num_assistant_tokens_schedule = gamma, "constant"
    g.assistant_confidence_threshold = 0.0
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="32 tokens, 1 repeat")
    args = parser.parse_args(argv)
    n, repeats = (32, 1) if args.quick else (64, 2)
    with tempfile.TemporaryDirectory() as empty:
        cold = _child_load(empty)
    warm = _child_load(None)
    print(f"Gemma load: {cold:.1f} s with no cache, {warm:.1f} s from the cache", flush=True)
    gemma = load_target(TargetSpec("gemma"))
    smol = load_draft(gemma, DraftSpec("smollm2"))
    prompts = {k: gemma.encode(preset_prompt(k, "en")) for k in ("copy", "chat")}
    expected = {k: _ours(gemma, None, ids, n) for k, ids in prompts.items()}

    # SmolLM2 across tokenizers, on both prompts; and against transformers on the copy prompt
    result: dict[str, Any] = {}
    for task in ("copy", "chat"):
        ids = prompts[task]
        pair = {
            "target only": lambda ids=ids: _ours(gemma, None, ids, n),
            "smollm2": lambda ids=ids: _ours(gemma, smol, ids, n),
        }
        t = _race(pair, repeats, expected[task])
        result[f"cross_{task}"] = round(t["target only"] / t["smollm2"], 3)
        print(
            f"{task}: target only {t['target only']:.2f} s, SmolLM2 drafting {t['smollm2']:.2f} s", flush=True
        )
    ids = prompts["copy"]
    pair = {
        "ours γ=4": lambda: _ours(gemma, smol, ids, n, 4, False),
        "transformers γ=4": lambda: _hf(gemma, smol.draft, ids, n, 4),
    }
    t = _race(pair, repeats, expected["copy"])
    result["cross_vs_hf"] = round(t["ours γ=4"] / t["transformers γ=4"], 3)
    print(
        f"copy, fixed γ=4: ours {t['ours γ=4']:.2f} s, transformers {t['transformers γ=4']:.2f} s", flush=True
    )

    # every Gemma draft on the chat prompt, reduced-vocabulary heads included
    kept = frequent_target_tokens(gemma, REDUCED_N)
    bf16 = precision_copy(gemma, "bfloat16")
    drafts: dict[str, Any] = {
        "n-gram": NGramDraft.for_model(gemma),
        "bf16 copy": bf16,
        "layer skip k=6": LayerSkipDraft(gemma, 6),
        "SmolLM2-135M": smol,
        f"bf16 copy · {REDUCED_N} tokens": reduced_draft(bf16, kept, gemma.vocab_size),
        f"layer skip k=6 · {REDUCED_N} tokens": reduced_draft(
            LayerSkipDraft(gemma, 6), kept, gemma.vocab_size
        ),
        f"SmolLM2-135M · {REDUCED_N} tokens": reduced_draft(smol, kept, gemma.vocab_size),
    }
    ids = prompts["chat"]
    cases = {"target only": lambda: _ours(gemma, None, ids, n)}
    cases |= {name: (lambda d=d: _ours(gemma, d, ids, n)) for name, d in drafts.items()}
    t = _race(cases, repeats, expected["chat"])
    base = t.pop("target only")
    print(f"\nchat prompt, {n} tokens, target only {base:.2f} s:")
    for name, seconds in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"  {name:<34} {seconds:6.2f} s  {base / seconds:5.2f}×")
    best = min(t, key=t.__getitem__)
    result["gemma_best_chat"] = round(base / t[best], 3)
    result["gemma_best_chat_draft"] = best

    bytes_ = sum(p.numel() * p.element_size() for p in gemma.module.parameters())
    bw = _bandwidth_gbs()
    step_ms = 1000 * base / n
    result |= {
        "gemma_load_s": round(cold, 1),
        "gemma_warm_load_s": round(warm, 2),
        "gemma_step_ms": round(step_ms, 1),
        "gemma_floor_ms": round(1000 * bytes_ / (bw * 1e9), 1),
        "bandwidth_gbs": round(bw, 1),
    }
    floor = result["gemma_floor_ms"]
    print(f"Gemma step {step_ms:.1f} ms; memory floor {floor} ms ({bytes_ / 1e9:.2f} GB at {bw:.1f} GB/s)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
