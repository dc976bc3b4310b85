"""Stage "export": the latest checkpoint as the shipped head, with its model-card numbers.

Writes ``assets/head/smollm2-135m-head.safetensors`` (float16 head weights + vocabulary ids;
the LM-head rows and embeddings are the target's and are not copied) and ``card.json``
(data, tokens, steps, training time, held-out evaluation) that MODEL_CARD.md quotes.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from train import fit, paths, prompts


def run() -> None:
    from specdec_core.models import load_bundled
    from specdec_core.models.head import DEFAULT_WEIGHTS, EagleHead, HeadConfig, save_head

    target = load_bundled()
    saved = torch.load(fit.checkpoint_path(), weights_only=False)
    head = EagleHead(HeadConfig.for_target(target.module, target.name))
    head.load_state_dict(saved["head"])
    state = saved["state"]
    data = fit.Data()
    evaluation = paths.WORK / "eval.json"
    card = {
        "target": target.name,
        "parameters": sum(p.numel() for p in head.parameters()),
        "vocabulary": len(saved["vocab"]),
        "train_sequences": len(data.seqs),
        "train_positions": data.tokens,
        "train_answer_tokens": data.answer_tokens,
        "train_prompts": len(prompts.build("train")),
        "steps": state["step"],
        "positions_seen": state["positions"],
        "train_minutes": round(state["seconds"] / 60, 1),
        "unrolled_steps": fit.STEPS,
        "evaluation": json.loads(evaluation.read_text()) if evaluation.exists() else None,
    }
    save_head(head, saved["vocab"], DEFAULT_WEIGHTS, card)
    card["cost_ratio"] = round(step_cost_ratio(target), 4)
    old = paths.ASSET / "card.json"
    if old.exists():  # keep the benchmark figures recorded by `python -m train card --bench ...`
        card["bench"] = json.loads(old.read_text()).get("bench")
    card["size_mb"] = round(DEFAULT_WEIGHTS.stat().st_size / 1e6, 2)
    save_head(head, saved["vocab"], DEFAULT_WEIGHTS, card)
    old.write_text(json.dumps(card, indent=1))
    print(f"wrote {DEFAULT_WEIGHTS} ({card['size_mb']} MB): {json.dumps(card)}", flush=True)


def step_cost_ratio(target, steps: int = 40) -> float:
    """Median head draft step ÷ median target decode step (one token each, warm caches)."""
    import time

    from specdec_core.models.head import HeadDraft

    ids = target.encode("Explain how bridges carry their weight.", chat=True)
    t_sess = target.session(ids)
    draft = HeadDraft(target)
    d_sess = draft.session(ids)
    d_sess.bind_target(t_sess)
    d_sess.logits([ids[-1]], last_only=True)
    base_t, base_d = t_sess.length, d_sess.length
    t_times, d_times = [], []
    for i in range(steps):
        tok = ids[i % len(ids)]
        start = time.perf_counter()
        t_sess.logits([tok], last_only=True)
        t_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        d_sess.logits([tok], last_only=True)
        d_times.append(time.perf_counter() - start)
    t_sess.truncate(base_t)
    d_sess.truncate(base_d)
    return sorted(d_times)[steps // 2] / sorted(t_times)[steps // 2]


def record_bench(log: str) -> None:
    """Copy head_chat / head_alpha (and the other drafts' keys) from bench/speedup.py's output."""
    line = [x for x in Path(log).read_text(encoding="utf-8").splitlines() if x.startswith("{")][-1]
    bench = json.loads(line)
    card_file = paths.ASSET / "card.json"
    card = json.loads(card_file.read_text())
    card["bench"] = {
        k: bench.get(k) for k in ("head_chat", "head_alpha", "bf16_chat", "ngram_chat", "ngram_copy")
    }
    card_file.write_text(json.dumps(card, indent=1))
    print(json.dumps(card["bench"]), flush=True)
