"""The int8 draft of the cost lesson, remeasured with its scheme named.

    .venv/bin/python -m bench.int8_draft            # full run (chat and summarise, 64 new tokens each)
    .venv/bin/python -m bench.int8_draft --quick    # the chat prompt, 48 new tokens

(from the repository root; figures go to bench/RESULTS.md.)

Draft: PyTorch dynamic quantisation of the bundled SmolLM2-135M-Instruct
(``torch.ao.quantization.quantize_dynamic`` on every ``nn.Linear`` of the decoder layers: int8
weights with per-tensor scales, activations quantised on the fly; the embeddings, the norms and
the output layer, which shares the embedding matrix, stay float32).
Target: the model itself in float32. Greedy decoding, fixed γ = 4.

Printed per prompt and pooled: α (accepted drafts / drafted), c (draft seconds per draft
forward / target seconds per token of a target-only greedy run on the same prompt) and the
end-to-end speedup. On a loaded machine those two runs see different loads, so c is also
measured as ``c_step``: one-token steps of the draft and the target on the same context,
interleaved, the fastest of each (``--steps`` repeats). The last line is one JSON object with
the keys ``alpha``, ``c``, ``c_step``, ``speedup``, ``prompts``, ``new_tokens``.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import torch

from specdec_core.engine import autoregressive, generate, summarize
from specdec_core.models import load_bundled
from specdec_core.models.hf import HFCausalLM
from specdec_core.sampling import SamplingConfig

ROOT = Path(__file__).resolve().parents[1]

GREEDY = SamplingConfig(temperature=0)
PROMPTS = json.loads((ROOT / "assets/presets/prompts.json").read_text("utf-8"))


def int8_copy(target: HFCausalLM) -> HFCausalLM:
    """Dynamic int8 quantisation of every nn.Linear in the decoder layers of a copy of the target."""
    module = copy.deepcopy(target.module)
    module.model.layers = torch.ao.quantization.quantize_dynamic(
        module.model.layers, {torch.nn.Linear}, dtype=torch.qint8
    )
    return HFCausalLM(
        module, target.tokenizer, name=f"{target.name} (int8 dynamic)", source=target.source, fast=False
    )


def step_cost(target: HFCausalLM, draft: HFCausalLM, ids: list[int], repeats: int) -> float:
    """Fastest one-token draft step / fastest one-token target step, interleaved, same context."""
    best = {"target": float("inf"), "draft": float("inf")}
    sessions = {"target": target.session(ids), "draft": draft.session(ids)}
    for s in sessions.values():
        s.extend([ids[-1]])
    length = len(ids) + 1
    for _ in range(repeats):
        for name, s in sessions.items():
            t0 = time.perf_counter()
            s.extend([ids[-1]])
            best[name] = min(best[name], time.perf_counter() - t0)
            s.truncate(length)
    return best["draft"] / best["target"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--steps", type=int, default=30, help="repeats of the interleaved one-token steps")
    args = parser.parse_args()
    tasks, new = (["chat"], 48) if args.quick else (["chat", "summarise"], 64)
    torch.set_num_threads(2)
    target = load_bundled()
    draft = int8_copy(target)
    drafted = accepted = draft_forwards = 0
    draft_s = base_s = base_tokens = spec_s = spec_tokens = 0.0
    for task in tasks:
        ids = target.encode(PROMPTS[task]["en"], chat=True)
        t0 = time.perf_counter()
        base = list(autoregressive(target, ids, GREEDY, new, seed=0))
        b_s = time.perf_counter() - t0
        b_tokens = sum(len(e.committed) for e in base)
        t0 = time.perf_counter()
        run = summarize(generate(target, draft, ids, GREEDY, gamma=4, max_new_tokens=new, seed=0))
        s_s = time.perf_counter() - t0
        alpha = run.accepted / max(run.drafted, 1)
        c = (run.draft_s / max(run.draft_forwards, 1)) / (b_s / b_tokens)
        gain = (b_s / b_tokens) / (s_s / run.tokens)
        print(
            f"{task:10s} α = {alpha:.3f} ({run.accepted}/{run.drafted})  c = {c:.3f}  speedup = {gain:.2f}×"
        )
        drafted += run.drafted
        accepted += run.accepted
        draft_forwards += run.draft_forwards
        draft_s += run.draft_s
        base_s += b_s
        base_tokens += b_tokens
        spec_s += s_s
        spec_tokens += run.tokens
    alpha = accepted / max(drafted, 1)
    c = (draft_s / max(draft_forwards, 1)) / (base_s / base_tokens)
    speed = (base_s / base_tokens) / (spec_s / spec_tokens)
    c_step = step_cost(target, draft, target.encode(PROMPTS["chat"]["en"], chat=True), args.steps)
    print(f"pooled     α = {alpha:.3f}  c = {c:.3f}  c_step = {c_step:.3f}  speedup = {speed:.2f}×")
    print(
        json.dumps(
            {
                "alpha": round(alpha, 3),
                "c": round(c, 3),
                "c_step": round(c_step, 3),
                "speedup": round(speed, 3),
                "prompts": len(tasks),
                "new_tokens": new,
            }
        )
    )


if __name__ == "__main__":
    main()
