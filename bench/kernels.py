"""The fast forward's pieces on the bundled SmolLM2-135M, side by side: steps, verification, kernels.

    .venv/bin/python -m bench.kernels            # 60 interleaved repeats per figure
    .venv/bin/python -m bench.kernels --quick    # 15 repeats, the same keys

Prints, with medians of interleaved repeats (so machine noise hits both sides alike):

* decode step (one token, KV cache of the prompt) in ms on the lean body and on the model's
  own forward (transformers' body and head), float32 and bfloat16; the ratio;
* a verification forward of 5 and 17 tokens (every logit row computed) in decode steps;
* ``F.linear`` against ``row_linear`` on SmolLM2's shapes, µs, and their ratio.

The last line is one JSON object with every figure. Results go into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import torch
import torch.nn.functional as F

from specdec_core.models import load_bundled, precision_copy
from specdec_core.models.hf import HFCausalLM, row_linear
from specdec_core.models.hf.kernel_choice import medians

PROMPT = "Explain in three sentences why the sky is blue, for a curious child."


def own_forward(model: HFCausalLM) -> HFCausalLM:
    """The same weights on the model's own forward."""
    return HFCausalLM(model.module, model.tokenizer, name=f"{model.name} (own forward)", fast=False)


def step_and_verify(model: HFCausalLM, ids: list[int]) -> dict[str, Callable[[], object]]:
    """Callables for one decode step and 5- and 17-token verifications, each rolled back."""
    session = model.session(ids)
    base = session.length

    def step() -> None:
        session.logits([ids[-1]], last_only=True)
        session.truncate(base)

    def verify(n: int) -> Callable[[], None]:
        def run() -> None:
            session.lazy_logits(ids[-n:]).all()
            session.truncate(base)

        return run

    return {"step": step, "verify5": verify(5), "verify17": verify(17)}


def kernels(shapes: dict[str, tuple[int, int]], repeats: int) -> dict[str, float]:
    """µs of F.linear and row_linear per (shape, dtype, rows), and their ratio."""
    out: dict[str, float] = {}
    cases = [(torch.float32, rows) for rows in (1, 2, 5, 8)] + [(torch.bfloat16, rows) for rows in (1, 2, 3)]
    with torch.inference_mode():
        for shape_name, (n_out, n_in) in shapes.items():
            for dtype, rows in cases:
                w = torch.randn(n_out, n_in).to(dtype)
                x = torch.randn(rows, n_in).to(dtype)
                pair = {
                    "F.linear": lambda x=x, w=w: F.linear(x, w),
                    "row_linear": lambda x=x, w=w: row_linear(x, w),
                }
                got = medians(pair, repeats)
                key = f"{shape_name}_{str(dtype).removeprefix('torch.')}_{rows}"
                out[f"{key}_flinear_us"] = round(got["F.linear"] * 1e6, 1)
                out[f"{key}_row_us"] = round(got["row_linear"] * 1e6, 1)
                out[f"{key}_ratio"] = round(got["F.linear"] / got["row_linear"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 repeats instead of 60 (same keys)")
    args = parser.parse_args()
    repeats = 15 if args.quick else 60
    target = load_bundled()
    ids = target.encode(PROMPT, chat=True)
    results: dict[str, float] = {"threads": torch.get_num_threads(), "repeats": repeats}
    for label, model in (("f32", target), ("bf16", precision_copy(target, "bfloat16"))):
        assert model.fast is not None and model.fast.lean is not None, "SmolLM2 runs the lean body"
        lean, plain = step_and_verify(model, ids), step_and_verify(own_forward(model), ids)
        got = medians(
            {**{f"lean_{k}": f for k, f in lean.items()}, **{f"hf_{k}": f for k, f in plain.items()}}, repeats
        )
        results[f"{label}_step_lean_ms"] = round(got["lean_step"] * 1e3, 2)
        results[f"{label}_step_own_ms"] = round(got["hf_step"] * 1e3, 2)
        results[f"{label}_step_ratio"] = round(got["hf_step"] / got["lean_step"], 2)
        for n in (5, 17):
            results[f"{label}_verify{n}_steps"] = round(got[f"lean_verify{n}"] / got["lean_step"], 2)
        print(
            f"{label}: decode step lean {got['lean_step'] * 1e3:.1f} ms, own forward "
            f"{got['hf_step'] * 1e3:.1f} ms ({got['hf_step'] / got['lean_step']:.2f}×); verification "
            f"5 tokens {results[f'{label}_verify5_steps']} steps, "
            f"17 tokens {results[f'{label}_verify17_steps']}",
            flush=True,
        )
    config = target.module.config
    hidden, inter, vocab = config.hidden_size, config.intermediate_size, target.vocab_size
    rows = kernels({"mlp": (inter, hidden), "gate_up": (2 * inter, hidden), "head": (vocab, hidden)}, repeats)
    for key in sorted(k for k in rows if k.endswith("_ratio")):
        base = key.removesuffix("_ratio")
        print(
            f"{base}: F.linear {rows[base + '_flinear_us']} µs, "
            f"row_linear {rows[base + '_row_us']} µs ({rows[key]}×)"
        )
    results.update(rows)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
