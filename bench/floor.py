"""How far a decode step is from the memory floor, for SmolLM2-135M and Gemma-3-270M.

    .venv/bin/python -m bench.floor            # 31 tokens, 15 interleaved repeats
    .venv/bin/python -m bench.floor --quick    # 15 tokens, 7 repeats, the same keys

A decode step of a small model on a CPU is bound by memory: it reads every weight once, so
weight bytes ÷ read bandwidth is a floor no kernel can beat. Printed in one run:

* ``bandwidth_gbs``: 1 GiB ÷ the best of 5 ``torch.sum`` over a 1 GiB float32 tensor, at the
  engine's thread count;
* ``<model>_step_ms``: decode time per token through ``engine.autoregressive`` (greedy,
  prefill excluded), the median over the run's tokens;
* ``<model>_floor_ms``: the weight bytes one decode step reads ÷ ``bandwidth_gbs``;
* ``<model>_floor_ratio``: step ÷ floor;
* ``<model>_verify5_ratio``: one 5-token forward with all 5 logit rows ÷ a 1-row step
  (medians of interleaved repeats);
* ``<model>_step_ms_spin`` and ``<model>_floor_ratio_spin``: the same step in a child process
  whose OpenMP threads spin briefly (``GOMP_SPINCOUNT`` = :data:`SPIN`) instead of sleeping
  between parallel regions as the app's do (``specdec_core.models.omp``: sleeping threads
  leave shared cores to the browser and the server, and pay a wake-up per region);
* ``<model>_calibration_s`` and ``<model>_kernels``: the seconds the kernel choice took at load
  (the bench removes this machine's cached choice first, so it is measured afresh) and the
  kernel chosen per weight and row count;
  ``smollm2_bf16_kernels`` and ``smollm2_bf16_step_ms`` the same choice and the step timed at
  load for SmolLM2's bfloat16 copy (a draft).

The last line is one JSON object with every figure. Results go into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

from bench.kernels import medians, step_and_verify
from specdec_core.engine import RunOptions, autoregressive
from specdec_core.models import load_bundled, precision_copy
from specdec_core.models.bundled import load_gemma
from specdec_core.models.hf import HFCausalLM, kernel_choice, machine
from specdec_core.sampling import SamplingConfig

PROMPT = "Explain in three sentences why the sky is blue, for a curious child."
#: libgomp's spin count for the spinning child (bounded: an idle pool still goes to sleep).
SPIN = "30000"
_CHILD = (
    "import sys, torch\n"  # torch first: the environment, not the app, sets the OpenMP wait
    "from bench.floor import PROMPT, decode_ms\n"
    "from specdec_core.models import load_bundled\n"
    "from specdec_core.models.bundled import load_gemma\n"
    "model = load_gemma() if sys.argv[1] == 'gemma' else load_bundled()\n"
    "ids = model.encode(PROMPT, chat=model.has_chat_template)\n"
    "decode_ms(model, ids, 4)\n"
    "print(decode_ms(model, ids, int(sys.argv[2])))\n"
)


def spinning_step_ms(name: str, tokens: int) -> float:
    """`name`'s decode step (ms) in a child process whose OpenMP threads spin briefly."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | {"GOMP_SPINCOUNT": SPIN}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, name, str(tokens)],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def bandwidth_gbs() -> float:
    """Read bandwidth in GB/s over 1 GiB of float32 (the profile's own measure, on a larger tensor)."""
    return machine.bandwidth_gbs(mib=1024)


def step_bytes(model: HFCausalLM) -> int:
    """Bytes of weights one decode step reads: every parameter once (a tied embedding is the
    head's weight), except an untied input embedding, of which a step reads one row."""
    seen: dict[int, int] = {}
    for p in model.module.parameters():
        seen[p.data_ptr()] = p.numel() * p.element_size()
    embed = model.module.get_input_embeddings().weight
    head = model.module.get_output_embeddings()
    if head is None or head.weight.data_ptr() != embed.data_ptr():
        seen.pop(embed.data_ptr(), None)
    return sum(seen.values())


def decode_ms(model: HFCausalLM, ids: list[int], tokens: int) -> float:
    """Median ms per generated token of greedy ``autoregressive``, prefill excluded."""
    greedy = SamplingConfig(temperature=0)
    events = list(
        autoregressive(
            model, ids, greedy, max_new_tokens=tokens, seed=0, options=RunOptions(stop_at_eos=False)
        )
    )
    return statistics.median((e.total_s - e.prefill_s) * 1e3 for e in events)


def figures(name: str, model: HFCausalLM, bandwidth: float, tokens: int, repeats: int) -> dict[str, object]:
    ids = model.encode(PROMPT, chat=model.has_chat_template)
    decode_ms(model, ids, 4)  # warm-up
    step = decode_ms(model, ids, tokens)
    floor = step_bytes(model) / (bandwidth * 1e9) * 1e3
    got = medians({k: f for k, f in step_and_verify(model, ids).items() if k != "verify17"}, repeats)
    fast = model.fast
    return {
        f"{name}_step_ms": round(step, 2),
        f"{name}_floor_ms": round(floor, 2),
        f"{name}_floor_ratio": round(step / floor, 3),
        f"{name}_verify5_ratio": round(got["verify5"] / got["step"], 3),
        f"{name}_calibration_s": round(fast.calibration_s, 2) if fast is not None else None,
        f"{name}_kernels": {f"{w}/{d}": k for w, d, k in _kernels(model)},
    }


def _kernels(model: HFCausalLM) -> list[tuple[str, str, str]]:
    fast = model.fast
    if fast is None:
        return []
    out = []
    for key, by_rows in sorted(fast.kernels.items()):
        shape, dtype = key.split("/")
        out.append((shape, dtype, kernel_choice.runs(by_rows)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 tokens and 7 repeats (the same keys)")
    args = parser.parse_args(argv)
    tokens, repeats = (15, 7) if args.quick else (31, 15)
    # measured afresh, so the choice and its cost are this run's (and a stale one is replaced)
    kernel_choice.cache_file().unlink(missing_ok=True)
    results: dict[str, object] = {"threads": torch.get_num_threads(), "machine": kernel_choice.machine_key()}
    bandwidth = bandwidth_gbs()
    results["bandwidth_gbs"] = round(bandwidth, 2)
    print(f"read bandwidth {bandwidth:.1f} GB/s at {torch.get_num_threads()} threads", flush=True)
    for name, load in (("smollm2", load_bundled), ("gemma", load_gemma)):
        model = load()
        got = figures(name, model, bandwidth, tokens, repeats)
        spin = spinning_step_ms(name, tokens)
        got[f"{name}_step_ms_spin"] = round(spin, 2)
        got[f"{name}_floor_ratio_spin"] = round(spin / got[f"{name}_floor_ms"], 3)
        results.update(got)
        print(
            f"{name}: step {got[f'{name}_step_ms']} ms, floor {got[f'{name}_floor_ms']} ms "
            f"(×{got[f'{name}_floor_ratio']}), 5-row verification {got[f'{name}_verify5_ratio']} steps, "
            f"kernel choice {got[f'{name}_calibration_s']} s; with spinning OpenMP threads "
            f"{spin:.1f} ms (×{got[f'{name}_floor_ratio_spin']})",
            flush=True,
        )
        for shape, dtype, choice in _kernels(model):
            print(f"  {shape} {dtype}: {choice}")
        if name == "smollm2":  # the bf16 copy, a draft: its bfloat16 kernels are chosen at its load
            copy = precision_copy(model, "bfloat16")
            results["smollm2_bf16_kernels"] = {f"{w}/{d}": k for w, d, k in _kernels(copy)}
            results["smollm2_bf16_step_ms"] = round(copy.step_seconds * 1e3, 2)
            print(f"smollm2 bf16 copy: step {results['smollm2_bf16_step_ms']} ms (timed at load)")
            for shape, dtype, choice in _kernels(copy):
                print(f"  {shape} {dtype}: {choice}")
            del copy
        del model
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
