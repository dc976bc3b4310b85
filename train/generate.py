"""Stage "generate": the target's own answers to the prompt set, by batched generation.

Prompts go in shards of ``batch`` (left-padded, one ``generate`` call each); even shards are
answered greedily, odd shards sampled at T = 0.7 (top-p 0.95) with a seed fixed per shard,
so the head sees both the target's most likely text and its spread. Each shard is written to
``train/data/<split>/shard_NNNN.json`` as soon as it is done; a rerun skips the shards that
exist, so the stage resumes where it was stopped. The answers are stored as token ids
(prompt and answer separately), which is all the later stages need.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from train import paths, prompts


def shard_path(split: str, index: int) -> Path:
    return paths.GENERATED / split / f"shard_{index:04d}.json"


def run(
    split: str = "train",
    batch: int = 32,
    max_new_tokens: int = 192,
    limit: int | None = None,
    minutes: float | None = None,
) -> None:
    """Generate answers for ``split`` (first ``limit`` prompts), stopping after ``minutes``."""
    from specdec_core.models import load_bundled

    model = load_bundled()
    module = model.module.eval()
    items = prompts.build(split, seed=paths.SEED)[:limit]
    shards = [items[i : i + batch] for i in range(0, len(items), batch)]
    paths.ensure(paths.GENERATED / split)
    started = time.perf_counter()
    produced = 0
    for index, shard in enumerate(shards):
        out = shard_path(split, index)
        if out.exists():
            continue
        if minutes is not None and time.perf_counter() - started > 60 * minutes:
            print(f"time limit reached; {index}/{len(shards)} shards done, rerun to resume", flush=True)
            return
        sample = index % 2 == 1
        t0 = time.perf_counter()
        records = _generate(model, module, shard, max_new_tokens, sample, seed=paths.SEED * 100_003 + index)
        dt = time.perf_counter() - t0
        tokens = sum(len(r["answer"]) for r in records)
        produced += tokens
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps({"sampled": sample, "seconds": round(dt, 1), "records": records}))
        tmp.replace(out)
        elapsed = time.perf_counter() - started
        print(
            f"shard {index + 1}/{len(shards)} ({'T=0.7' if sample else 'greedy'}): {tokens} tokens in "
            f"{dt:.0f} s ({tokens / dt:.0f} tok/s); {produced} tokens in {elapsed / 60:.1f} min",
            flush=True,
        )


def _generate(model, module, shard, max_new_tokens: int, sample: bool, seed: int) -> list[dict]:
    ids = [model.encode(p.text, chat=True) for p in shard]
    pad_id = module.config.pad_token_id if module.config.pad_token_id is not None else model.eos_token_id
    width = max(map(len, ids))
    pad = [width - len(x) for x in ids]
    inp = torch.tensor([[pad_id] * n + x for n, x in zip(pad, ids, strict=True)])
    mask = (torch.arange(width)[None, :] >= torch.tensor(pad)[:, None]).long()
    torch.manual_seed(seed)
    kwargs = (
        {"do_sample": True, "temperature": 0.7, "top_p": 0.95, "top_k": 0} if sample else {"do_sample": False}
    )
    with torch.inference_mode():
        out = module.generate(
            inp, attention_mask=mask, max_new_tokens=max_new_tokens, pad_token_id=pad_id, **kwargs
        )
    eos = model.eos_token_id
    records = []
    for p, prompt_ids, row in zip(shard, ids, out[:, width:].tolist(), strict=True):
        answer = []
        for t in row:
            answer.append(t)
            if t == eos:
                break
        records.append({"kind": p.kind, "prompt": prompt_ids, "answer": answer})
    return records
