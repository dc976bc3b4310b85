"""The bundled model and its drafts on a CUDA GPU: greedy speculative output equals target-only,
and the speedups, in float16 and bfloat16.

    .venv/bin/python -m bench.gpu_check            # both precisions, 128 new tokens, 3 repeats
    .venv/bin/python -m bench.gpu_check --quick    # 48 new tokens, 1 repeat, same keys

Without CUDA it stops at once with exit status 2 and says so (nothing falls back to the CPU).
For each precision the target (SmolLM2-135M-Instruct) is loaded on the GPU, and every draft
must sit there too: the n-gram drafter (prompt lookup), the target's first layers
(self-speculation) and, for a bfloat16 target, a float16 copy (and the other way round).
Each draft runs greedy decoding on a copy prompt and an open chat prompt, interleaved with
target-only runs; its tokens must equal target-only's, or part from them only at a numerical
near-tie of the target's two best logits (support/greedy_check.py; chunked verification uses
other kernels than one-token decoding). Times are the best of the repeats, with
``torch.cuda.synchronize`` before every clock read. The last line is one JSON object:
``cuda``, ``device``, ``checks_passed`` and per precision and case the speedup
(target-only time / speculative time) and the tokens compared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import specdec_core.models  # noqa: F401  (torch is imported after it: it sets the OpenMP policy first)

PROMPTS = {
    "copy": "Repeat the following paragraph exactly, word for word:\n\nThe lighthouse keeper climbed the "
    "spiral stairs every evening at dusk, carrying a small brass lantern and a notebook full of weather "
    "observations. For thirty years he had recorded the direction of the wind, the height of the waves "
    "and the colour of the sky.",
    "chat": "Write a short story about a robot who learns to paint.",
}
LAYERS = 10  # self-speculation depth (of 30 layers)
GAMMA = {"ngram": 10, "layerskip": 4, "copy": 4}


def fail(message: str) -> None:
    print(f"gpu_check: {message}", file=sys.stderr)
    print(json.dumps({"cuda": False, "checks_passed": False, "error": message}))
    sys.exit(2)


def device_of(model: Any) -> str:
    """Where a model's weights are ('-' for one without weights, e.g. the n-gram drafter)."""
    module = getattr(model, "module", None)
    if module is None:
        return "-"
    return ",".join(sorted({str(p.device) for p in module.parameters()}))


def timed(run: Callable[[], list[int]]) -> tuple[list[int], float]:
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    tokens = run()
    torch.cuda.synchronize()
    return tokens, time.perf_counter() - start


def measure_prompt(
    target: Any, drafts: dict[str, Any], ids: list[int], n: int, repeats: int
) -> tuple[list[dict[str, Any]], bool]:
    """Target-only and every draft on one prompt, interleaved; best times and the greedy verdicts."""
    from specdec_core.engine import autoregressive, generate
    from specdec_core.sampling import SamplingConfig
    from support.greedy_check import assert_same_greedy_output

    greedy = SamplingConfig(temperature=0)

    def base() -> list[int]:
        return [t for e in autoregressive(target, ids, greedy, n, 0) for t in e.committed]

    def spec(draft: Any, gamma: int) -> Callable[[], list[int]]:
        return lambda: [t for e in generate(target, draft, ids, greedy, gamma, n, 0) for t in e.committed]

    timed(base)  # warm-up: kernels, caches
    best: dict[str, float] = {}
    tokens: dict[str, list[int]] = {}
    for _ in range(repeats):
        for key, run in [("target-only", base)] + [(d, spec(m, GAMMA[d])) for d, m in drafts.items()]:
            toks, seconds = timed(run)
            tokens[key] = toks
            best[key] = min(best.get(key, float("inf")), seconds)
    rows, ok = [], True
    for d in drafts:
        try:
            compared = assert_same_greedy_output(target, ids, tokens["target-only"], tokens[d])
            same = compared == len(tokens["target-only"])
            verdict = "identical" if same else f"near-tie at token {compared}"
        except AssertionError as exc:
            ok, verdict = False, f"DIFFERENT: {exc}"
        rows.append(
            {
                "draft": d,
                "gamma": GAMMA[d],
                "tokens": len(tokens[d]),
                "target_only_s": best["target-only"],
                "speculative_s": best[d],
                "speedup": best["target-only"] / best[d],
                "greedy": verdict,
            }
        )
    return rows, ok


def check_precision(dtype: str, other: str, n: int, repeats: int) -> tuple[list[dict[str, Any]], bool]:
    import torch

    from specdec_core.models import LayerSkipDraft, NGramDraft, load_bundled, precision_copy

    target = load_bundled(dtype=dtype, device="cuda")
    drafts = {
        "ngram": NGramDraft.for_model(target),
        "layerskip": LayerSkipDraft(target, LAYERS),
        "copy": precision_copy(target, other),
    }
    ok = True
    for name, model in [("target", target), *drafts.items()]:
        where = device_of(model)
        if where not in ("-", "cuda:0") and not where.startswith("cuda"):
            print(f"  {name} is on {where}, not the GPU")
            ok = False
    rows = []
    for prompt_name, prompt in PROMPTS.items():
        got, all_same = measure_prompt(target, drafts, target.encode(prompt, chat=True), n, repeats)
        ok &= all_same
        rows += [{"dtype": dtype, "prompt": prompt_name, **r} for r in got]
    del target, drafts
    torch.cuda.empty_cache()
    return rows, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="48 new tokens, one repeat")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        fail(
            "no CUDA GPU is available here (torch.cuda.is_available() is False; "
            f"torch {torch.__version__}, built with CUDA {torch.version.cuda}). Run this on a machine "
            "with an NVIDIA GPU and a CUDA build of torch."
        )
    n, repeats = (48, 1) if args.quick else (128, 3)
    name = torch.cuda.get_device_name(0)
    print(f"device: {name}; torch {torch.__version__}, CUDA {torch.version.cuda}; {n} new tokens")
    results: dict[str, Any] = {"cuda": True, "device": name, "new_tokens": n}
    all_ok = True
    head = f"{'dtype':<9} {'prompt':<6} {'draft':<10} {'γ':>2} {'target-only':>12} {'speculative':>12}"
    print(f"{head}  speedup greedy")
    for dtype, other in (("float16", "bfloat16"), ("bfloat16", "float16")):
        rows, ok = check_precision(dtype, other, n, repeats)
        all_ok &= ok
        for r in rows:
            print(
                f"{r['dtype']:<9} {r['prompt']:<6} {r['draft']:<10} {r['gamma']:>2}"
                f" {r['target_only_s']:>11.3f}s {r['speculative_s']:>11.3f}s"
                f" {r['speedup']:>7.2f}×  {r['greedy']}"
            )
            key = f"{r['dtype']}_{r['prompt']}_{r['draft']}"
            results[f"{key}_speedup"] = round(r["speedup"], 3)
            results[f"{key}_greedy_ok"] = not r["greedy"].startswith("DIFFERENT")
    results["checks_passed"] = all_ok
    print(json.dumps(results))
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
