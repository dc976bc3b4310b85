"""Medusa heads: training, held-out evaluation and export (``python -m train medusa-…``).

They train on the feature shards of the EAGLE head's pipeline (``python -m train features``),
so no new data is generated. Head k (1 … K) reads the target's feature f_j at an answer
position j and is taught the target's exact law at position j + k, the token k + 1 places
after j (soft labels rebuilt from f_(j+k), the LM-head rows and the stored log-sum-exp, as in
train/fit.py), with Medusa's loss weights 0.8^(k-1). The output projections start at zero,
so every head starts as the target's own LM head. Each step draws a seeded batch of anchor
positions (the step number fixes it), so a resumed run sees what an uninterrupted one
would; a checkpoint is written every ``SAVE_EVERY`` steps and at the end (also when
``stop`` appears in the work folder).

Evaluation (held-out split, teacher-forced along each answer, the same 32 prompts × 96
tokens as ``python -m train evaluate``): per head its greedy acceptance (argmax equals the
target's), the greedy chain's accepted drafts per round (leading heads that all match, on
the greedy shards, where the text is the target's argmax) and each head's rate given that
the heads before it matched (comparable with the EAGLE head's rate by depth), the top-3 hit rate (what a tree
of three candidates per level can catch) and α at T = 0.7 (Σ min(p, q)).
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch

from train import features, paths, trainer

HEADS = 4
LOSS_DECAY = 0.8
BATCH = 2048
LR = 1e-3
WARMUP = 20
STEPS = 300
SAVE_EVERY = 20
EVAL_PROMPTS = 32
EVAL_TOKENS = 96


def checkpoint_path():
    return paths.WORK / "medusa_checkpoint.pt"


class Flat:
    """All positions of the training feature shards in flat arrays, and the anchors per head."""

    def __init__(
        self, splits: tuple[str, ...] = ("train", "corpus"), train_shards: int | None = None
    ) -> None:
        feats, lse, ends, anchors = [], [], [], []
        base = 0
        shards = (
            s for split in splits for s in features.load(split, train_shards if split == "train" else None)
        )
        for shard in shards:
            feats.append(shard["features"])
            lse.append(shard["lse"])
            off = 0
            for start, length in zip(shard["answer_start"], shard["length"], strict=True):
                end = base + off + int(length)
                ends.append(np.full(int(length), end, dtype=np.int64))
                anchors.append(np.arange(base + off + max(int(start) - 1, 0), end - 1, dtype=np.int64))
                off += int(length)
            base += off
        self.features = np.concatenate(feats)
        self.lse = np.concatenate(lse)
        self.ends = np.concatenate(ends)
        self.anchors = np.concatenate(anchors)  # j with f_j in an answer and a token after j + 1

    def summary(self) -> dict[str, int]:
        return {"positions": int(self.features.shape[0]), "anchors": int(self.anchors.shape[0])}

    def batch(self, step: int, size: int = BATCH) -> np.ndarray:
        rng = np.random.default_rng(paths.SEED * 104_729 + step)
        return self.anchors[rng.integers(0, self.anchors.shape[0], size)]


def head_loss(
    heads, lm_rows: torch.Tensor, flat: Flat, anchors: np.ndarray
) -> tuple[torch.Tensor, list[float]]:
    """Σ_k 0.8^(k-1) · cross-entropy of head k at f_j against the target's law at j + k, and
    each head's top-1 agreement with the target there."""
    f = torch.from_numpy(flat.features[anchors].astype(np.float32))
    total = f.new_zeros(())
    agree = []
    preds = heads(f)
    for k in range(1, heads.count + 1):
        label = np.minimum(anchors + k, flat.ends[anchors] - 1)
        valid = torch.from_numpy(anchors + k < flat.ends[anchors])
        with torch.no_grad():
            g = torch.from_numpy(flat.features[label].astype(np.float32))
            logp = g @ lm_rows.T - torch.from_numpy(flat.lse[label])[:, None]
            p = logp.exp()
        logq = torch.log_softmax(preds[k - 1] @ lm_rows.T, dim=-1)
        n = valid.sum().clamp(min=1)
        ce = -(p * logq).sum(-1)
        total = total + LOSS_DECAY ** (k - 1) * (ce * valid).sum() / n
        agree.append(float(((logq.argmax(-1) == logp.argmax(-1)) & valid).sum() / n))
    return total, agree


def fit(minutes: float = 30.0, steps: int = STEPS, lr: float = LR, train_shards: int | None = None) -> None:
    """Train (or resume) the heads for `steps` steps in all, stopping after `minutes`, on the
    first `train_shards` answer shards (all when None; a resumed run keeps its own choice)."""
    from specdec_core.models import load_bundled
    from specdec_core.models.head import HeadConfig
    from specdec_core.models.medusa import MedusaHeads
    from train.fit import target_parts

    target = load_bundled()
    vocab, _, lm_rows = target_parts(target.module)
    torch.manual_seed(paths.SEED)
    heads = MedusaHeads(HeadConfig.for_target(target.module, target.name), HEADS)
    torch.nn.init.normal_(heads.inner, std=0.02)  # the output projection stays zero
    opt = torch.optim.AdamW(heads.parameters(), lr=lr, weight_decay=0.0, betas=(0.9, 0.95))
    ckpt = checkpoint_path()
    state = {"step": 0, "seconds": 0.0, "positions": 0, "log": [], "steps": steps, "lr": lr}
    state["train_shards"] = train_shards
    if ckpt.exists():
        state = trainer.resume(ckpt, "heads", heads, opt)
    limit = state.get("train_shards")
    flat = Flat(train_shards=limit)
    state["data"] = flat.summary()
    state["feature_shards"] = {
        "train": len(features.files("train")[:limit]),
        "corpus": len(features.files("corpus")),
    }
    print(f"{state['data']['anchors']} anchors of {state['data']['positions']} positions", flush=True)

    def step(n: int) -> tuple[torch.Tensor, list[float], int]:
        loss, agree = head_loss(heads, lm_rows, flat, flat.batch(n))
        return loss, agree, BATCH

    def rate(n: int) -> float:  # linear warm-up, then cosine down to zero at the last step
        return state["lr"] * min(1.0, (n + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * n / state["steps"]))

    trainer.train(
        heads,
        opt,
        state,
        (ckpt, "heads", vocab),
        step=step,
        rate=rate,
        minutes=minutes,
        until=state["steps"],
        save_every=SAVE_EVERY,
        label=lambda n: f"{n + 1}/{state['steps']}",
        per="head",
    )


def load_checkpoint(module, name: str):
    from specdec_core.models.head import HeadConfig
    from specdec_core.models.medusa import MedusaHeads

    saved = torch.load(checkpoint_path(), weights_only=False)
    heads = MedusaHeads(HeadConfig.for_target(module, name), HEADS)
    heads.load_state_dict(saved["heads"])
    return heads.eval(), saved


def evaluate(n_prompts: int = EVAL_PROMPTS, n_tokens: int = EVAL_TOKENS) -> dict:
    """Held-out acceptance of the latest checkpoint (written to the work folder's medusa_eval.json)."""
    from specdec_core.models import load_bundled
    from train.fit import target_parts

    target = load_bundled()
    module = target.module
    if not features.files("held_out"):
        features.run("held_out")
    vocab, _, lm_rows = target_parts(module)
    heads, _ = load_checkpoint(module, target.name)
    full_w = module.get_output_embeddings().weight.detach().float()
    k_all = heads.count
    hits, top3, alpha, count, runs = (torch.zeros(k_all) for _ in range(5))
    chain, rounds, seen = 0.0, 0, 0
    with torch.inference_mode():
        for answer in features.answers("held_out", n_prompts, n_tokens):
            seen += 1
            greedy_shard = answer.shard % 2 == 0  # train/generate.py: even shards are greedy
            f, top = answer.features, answer.argmax
            n = f.shape[0]
            anchors = torch.arange(answer.start - 1, n - 1)
            preds = heads(f[anchors])
            leading = torch.ones(anchors.shape[0], dtype=torch.bool)
            for k in range(1, k_all + 1):
                ok = anchors + k < n
                a, z = anchors[ok], preds[k - 1][ok] @ lm_rows.T
                match = vocab[z.argmax(-1)] == top[a + k]
                hits[k - 1] += match.sum()
                top3[k - 1] += (vocab[z.topk(3, dim=-1).indices] == top[a + k][:, None]).any(-1).sum()
                count[k - 1] += a.shape[0]
                p = torch.softmax((f[a + k] @ full_w.T) / 0.7, -1)
                alpha[k - 1] += torch.minimum(p[:, vocab], torch.softmax(z / 0.7, -1)).sum()
                if greedy_shard:
                    leading = leading & torch.cat([match, torch.zeros(int((~ok).sum()), dtype=torch.bool)])
                    runs[k - 1] += leading.sum()
                    chain += float(leading.sum())
            if greedy_shard:
                rounds += anchors.shape[0]
    result = {
        "split": "held_out",
        "prompts": seen,
        "heads": k_all,
        "positions": int(count[0]),
        "greedy_acceptance_by_head": [round(float(x), 4) for x in hits / count.clamp(min=1)],
        "top3_by_head": [round(float(x), 4) for x in top3 / count.clamp(min=1)],
        "alpha_t07_by_head": [round(float(x), 4) for x in alpha / count.clamp(min=1)],
        "chain_acceptance_by_head": [  # P(head k matches | heads 1 … k-1 did), greedy shards
            round(float(r / max(float(prev), 1.0)), 4)
            for r, prev in zip(runs, [rounds, *runs[:-1]], strict=True)
        ],
        "accepted_per_round_chain": round(chain / max(rounds, 1), 3),
        "greedy_rounds": rounds,
    }
    paths.ensure(paths.WORK)
    (paths.WORK / "medusa_eval.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result), flush=True)
    return result


def export() -> None:
    """The latest checkpoint as assets/medusa/ (safetensors, card.json, MODEL_CARD.md)."""
    from specdec_core.models import load_bundled
    from specdec_core.models.medusa import DEFAULT_MEDUSA, MedusaDraft, save_medusa
    from train.step_cost import step_cost_ratio

    target = load_bundled()
    heads, saved = load_checkpoint(target.module, target.name)
    state = saved["state"]
    evaluation = paths.WORK / "medusa_eval.json"
    folder = DEFAULT_MEDUSA.parent
    old = folder / "card.json"
    card = {
        "target": target.name,
        "heads": heads.count,
        "parameters": sum(p.numel() for p in heads.parameters()),
        "vocabulary": len(saved["vocab"]),
        "train_positions": state["data"]["positions"],
        "train_anchors": state["data"]["anchors"],
        "feature_shards": state["feature_shards"],
        "steps": state["step"],
        "lr": state["lr"],
        "batch": BATCH,
        "positions_seen": state["positions"],
        "train_minutes": round(state["seconds"] / 60, 1),
        "evaluation": json.loads(evaluation.read_text()) if evaluation.exists() else None,
    }
    save_medusa(heads, saved["vocab"], DEFAULT_MEDUSA, card)
    card["cost_ratio"] = round(step_cost_ratio(target, draft=MedusaDraft(target)), 4)
    if old.exists():  # keep the benchmark figures recorded earlier
        card["bench"] = json.loads(old.read_text()).get("bench")
    card["size_mb"] = round(DEFAULT_MEDUSA.stat().st_size / 1e6, 2)
    save_medusa(heads, saved["vocab"], DEFAULT_MEDUSA, card)
    old.write_text(json.dumps(card, indent=1))
    (folder / "MODEL_CARD.md").write_text(model_card(card), encoding="utf-8")
    print(f"wrote {DEFAULT_MEDUSA} ({card['size_mb']} MB): {json.dumps(card)}", flush=True)


def model_card(card: dict) -> str:
    """MODEL_CARD.md from the card's numbers (rewritten by every export)."""
    ev = card.get("evaluation") or {}
    bench = card.get("bench") or {}

    def by_head(key: str) -> str:
        return ", ".join(f"{x:.2f}" for x in ev.get(key, [])) or "not measured"

    fs = card["feature_shards"]
    return f"""# Medusa heads for {card["target"]}

{card["heads"]} Medusa-style heads (specdec_core/models/medusa.py): head k is one residual block
f + U_k SiLU(W_k f + b_k) over the target's last feature f_m, scored by the target's frozen LM head
restricted to the EAGLE head's {card["vocabulary"]} tokens; it guesses the token k + 1 places
after position m without seeing the tokens in between. {card["parameters"] / 1e6:.2f} M parameters,
float16, {card.get("size_mb", "?")} MB. Loads only on the target it was trained for.

## Data
The EAGLE head's feature shards (assets/head/MODEL_CARD.md: the target's own answers to the
training prompts plus local text, prefill features and exact soft labels):
{fs.get("train")} answer shards and {fs.get("corpus")} corpus shards, {card["train_positions"]} positions,
{card["train_anchors"]} answer anchors. Held out: the same held-out prompts as the EAGLE head's.

## Training
{card["steps"]} steps of {card["batch"]} anchors ({card["positions_seen"]} seen), peak lr {card["lr"]},
{card["train_minutes"]} min on a shared 2-core CPU, output projections started at zero (each head
started as the target's own LM head).

## Held-out acceptance (python -m train medusa-evaluate)
- greedy acceptance by head 1…: {by_head("greedy_acceptance_by_head")}
- the same, given that the heads before it matched (a chain): {by_head("chain_acceptance_by_head")}
- top-3 hit rate by head: {by_head("top3_by_head")}
- α at T = 0.7 by head: {by_head("alpha_t07_by_head")}
- greedy chain of all heads: {ev.get("accepted_per_round_chain", "?")} drafts accepted per round
- draft step / target step on this machine: {card.get("cost_ratio", "?")}
- bench/speedup.py: medusa_chat {bench.get("medusa_chat", "not run")},
  medusa_alpha {bench.get("medusa_alpha", "not run")}

## Reproduce
    (the EAGLE head's generate and features stages, assets/head/MODEL_CARD.md)
    python -m train medusa-fit --steps {card["steps"]} --lr {card["lr"]} --train-shards {fs.get("train")}
    python -m train medusa-evaluate && python -m train medusa-export
(seeded: each step's batch is fixed by its number, so a resumed run matches an
uninterrupted one up to float rounding).
"""
