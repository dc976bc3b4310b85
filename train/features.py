"""Stage "features": the target's last hidden states over its own answers, in prefill mode.

Each generated shard's sequences (prompt + answer) are run through the target in one
forward pass each, which costs far less per token than generating them. Per position we keep
the final-norm feature f_j (what the LM head reads; float16), the token, and the log-sum-exp
and argmax of the target's full logits: with those, training rebuilds the target's exact
probabilities on the head's vocabulary (soft labels) from f_j and the LM-head rows alone.
One ``.npz`` per shard under ``artifacts/head/features/<split>/``; existing ones are skipped.
The head vocabulary (the most frequent answer tokens, EOS always in) is fixed here too.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from train import paths


def feature_dir(split: str):
    return paths.WORK / "features" / split


def run(split: str = "train", shards: int | None = None) -> None:
    """Features of the split's generated shards (the first `shards` of them when given)."""
    from specdec_core.models import load_bundled

    model = load_bundled()
    module = model.module.eval()
    out_dir = feature_dir(split)
    paths.ensure(out_dir)
    files = sorted((paths.GENERATED / split).glob("shard_*.json"))[:shards]
    started = time.perf_counter()
    done = 0
    for shard in files:
        target = out_dir / (shard.stem + ".npz")
        if target.exists():
            continue
        records = json.loads(shard.read_text())["records"]
        t0 = time.perf_counter()
        arrays = _shard_features(module, records)
        np.savez(target.with_suffix(".tmp.npz"), **arrays)
        target.with_suffix(".tmp.npz").replace(target)
        n = int(arrays["tokens"].shape[0])
        done += n
        dt = time.perf_counter() - t0
        print(
            f"{shard.stem}: {n} positions in {dt:.0f} s ({n / dt:.0f} tok/s); {done} so far, "
            f"{(time.perf_counter() - started) / 60:.1f} min",
            flush=True,
        )
    if split in ("train", "corpus"):
        write_vocab(model.eos_token_id)


def _shard_features(module, records: list[dict]) -> dict[str, np.ndarray]:
    feats, tokens, lse, top, starts, lengths = [], [], [], [], [], []
    head = module.get_output_embeddings().weight
    with torch.inference_mode():
        for r in records:
            ids = r["prompt"] + r["answer"]
            hidden = module.model(torch.tensor([ids])).last_hidden_state[0]
            logits = hidden @ head.T
            feats.append(hidden.half().numpy())
            tokens.append(np.asarray(ids, dtype=np.int32))
            lse.append(torch.logsumexp(logits, dim=-1).numpy().astype(np.float32))
            top.append(torch.argmax(logits, dim=-1).numpy().astype(np.int32))
            starts.append(len(r["prompt"]))
            lengths.append(len(ids))
    return {
        "features": np.concatenate(feats),
        "tokens": np.concatenate(tokens),
        "lse": np.concatenate(lse),
        "argmax": np.concatenate(top),
        "answer_start": np.asarray(starts, dtype=np.int32),
        "length": np.asarray(lengths, dtype=np.int32),
    }


def write_vocab(eos: int | None, size: int | None = None) -> None:
    """The head's vocabulary: the `size` (default HEAD_VOCAB) most frequent answer tokens (EOS
    included) of the first ``VOCAB_TRAIN_SHARDS`` answer shards and the corpus."""
    size = size or paths.HEAD_VOCAB
    counts: Counter[int] = Counter()
    for split in ("train", "corpus"):
        limit = paths.VOCAB_TRAIN_SHARDS if split == "train" else None
        for shard in sorted((paths.GENERATED / split).glob("shard_*.json"))[:limit]:
            for r in json.loads(shard.read_text())["records"]:
                counts.update(r["answer"])
    ranked = [t for t, _ in counts.most_common()]
    if eos is not None and eos not in ranked[:size]:
        ranked = [eos, *ranked]
    vocab = sorted(ranked[:size])
    total = sum(counts.values())
    covered = sum(counts[t] for t in vocab)
    np.save(paths.WORK / "vocab.npy", np.asarray(vocab, dtype=np.int64))
    print(
        f"head vocabulary: {len(vocab)} tokens cover {covered / max(total, 1):.4f} of {total} answer tokens"
    )


def files(split: str) -> list[Path]:
    """The split's finished feature shards, in shard order."""
    return [p for p in sorted(feature_dir(split).glob("shard_*.npz")) if ".tmp" not in p.name]


def load(split: str, limit: int | None = None) -> list[dict[str, np.ndarray]]:
    """Every shard's arrays of a split (the first `limit` shards when given), in shard order."""
    return [dict(np.load(p)) for p in files(split)[:limit]]


@dataclass(frozen=True)
class Answer:
    """One answer of a feature shard, prompt included, cut `n_tokens` after the prompt."""

    shard: int  # index of its shard in the split
    features: torch.Tensor  # (n, hidden) float32
    tokens: torch.Tensor  # (n,) int64
    argmax: torch.Tensor  # (n,) the target's greedy token after each position
    start: int  # where the answer starts (the prompt's length)


def answers(split: str, n_prompts: int, n_tokens: int, first_shard: int = 0) -> Iterator[Answer]:
    """The first `n_prompts` answers of the split's feature shards from `first_shard` on, in
    order (what the evaluations read)."""
    seen = 0
    for index, shard in enumerate(load(split)[first_shard:], start=first_shard):
        off = 0
        for start, length in zip(shard["answer_start"], shard["length"], strict=True):
            if seen >= n_prompts:
                return
            seen += 1
            sl = slice(off, off + int(length))
            off += int(length)
            n = min(int(length), int(start) + n_tokens)
            yield Answer(
                index,
                torch.from_numpy(shard["features"][sl][:n].astype("float32")),
                torch.from_numpy(shard["tokens"][sl][:n].astype("int64")),
                torch.from_numpy(shard["argmax"][sl][:n].astype("int64")),
                int(start),
            )
