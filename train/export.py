"""Stage "export": the latest checkpoint as the shipped head, with its model-card numbers.

Writes ``assets/head/smollm2-135m-head.safetensors`` (float16 head weights + vocabulary ids;
the LM-head rows and embeddings are the target's and are not copied) and ``card.json``
(data, tokens, steps, training time, held-out evaluation) that MODEL_CARD.md quotes.
"""

from __future__ import annotations

import json

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
    (paths.ASSET / "card.json").write_text(json.dumps(card, indent=1))
    size = DEFAULT_WEIGHTS.stat().st_size / 1e6
    print(f"wrote {DEFAULT_WEIGHTS} ({size:.1f} MB): {json.dumps(card)}", flush=True)
