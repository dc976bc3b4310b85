"""Stage "export": the latest checkpoint as the shipped head, with its model-card numbers.

Writes ``assets/head/smollm2-135m-head.safetensors`` (float16 head weights + vocabulary ids;
the LM-head rows and embeddings are the target's and are not copied) and ``card.json``
(data, tokens, steps, training time, held-out evaluation) that MODEL_CARD.md quotes.
"""

from __future__ import annotations

import json

import torch

from specdec_core.models.head import CONFIDENCE_FLOOR
from train import features, fit, paths, prompts
from train.step_cost import step_cost_ratio


def run() -> None:
    from specdec_core.models import load_bundled
    from specdec_core.models.head import DEFAULT_WEIGHTS, EagleHead, HeadConfig, save_head

    target = load_bundled()
    saved = torch.load(fit.checkpoint_path(), weights_only=False)
    head = EagleHead(HeadConfig.for_target(target.module, target.name))
    head.load_state_dict(saved["head"])
    state = saved["state"]
    data = state.get("data") or fit.Data().summary()
    evaluation = paths.WORK / "eval.json"
    card = {
        "target": target.name,
        "parameters": sum(p.numel() for p in head.parameters()),
        "vocabulary": len(saved["vocab"]),
        "train_sequences": data["sequences"],  # what the training run loaded
        "train_positions": data["positions"],
        "train_answer_tokens": data["answer_tokens"],
        "train_prompts": len(prompts.build("train")),
        "steps": state["step"],
        "schedule": state.get("schedule", fit.TOTAL_STEPS),
        "lr": state.get("lr", fit.LR),
        "feature_shards": {  # what the training run loaded, where its checkpoint records it
            split: (state.get("feature_shards") or {}).get(split, len(features.files(split)))
            for split in ("train", "corpus", "held_out")
        },
        "generated_shards": {
            split: len(list((paths.GENERATED / split).glob("shard_*.json")))
            for split in ("train", "held_out")
        },
        "positions_seen": state["positions"],
        "train_minutes": round(state["seconds"] / 60, 1),
        "unrolled_steps": fit.STEPS,
        "evaluation": json.loads(evaluation.read_text()) if evaluation.exists() else None,
    }
    old = paths.ASSET / "card.json"
    if state.get("init"):  # trained on from an earlier run's weights: both stages go in the card
        card["init"] = state["init"]
    save_head(head, saved["vocab"], DEFAULT_WEIGHTS, card)
    card["cost_ratio"] = round(step_cost_ratio(target), 4)
    if old.exists():  # keep the benchmark figures recorded by `python -m train card --bench ...`
        card["bench"] = json.loads(old.read_text()).get("bench")
    card["size_mb"] = round(DEFAULT_WEIGHTS.stat().st_size / 1e6, 2)
    save_head(head, saved["vocab"], DEFAULT_WEIGHTS, card)
    old.write_text(json.dumps(card, indent=1))
    (paths.ASSET / "MODEL_CARD.md").write_text(model_card(card), encoding="utf-8")
    print(f"wrote {DEFAULT_WEIGHTS} ({card['size_mb']} MB): {json.dumps(card)}", flush=True)


def model_card(card: dict) -> str:
    """MODEL_CARD.md from the card's numbers (rewritten by every export)."""
    ev = card.get("evaluation") or {}
    bench = card.get("bench") or {}
    depth = ", ".join(f"{x:.2f}" for x in ev.get("greedy_acceptance_by_depth", []))
    alpha = ", ".join(f"{x:.2f}" for x in ev.get("alpha_t07_by_depth", []))
    shards = card.get("generated_shards") or {}
    fs = card.get("feature_shards") or {}
    first_stage, init_flag = _earlier_stages(card.get("init")), _init_flag(card.get("init"))
    train_prompts = 32 * fs.get("train", shards.get("train", 0))
    vocab_step = "".join(line + "\n" for line in _vocab_line(card["vocabulary"]))
    return f"""# Draft head for {card["target"]}

An EAGLE-style draft head (specdec_core/models/head.py): one Llama decoder layer over
[RMSNorm(target feature f_j); RMSNorm(embedding of x_(j+1))], scored by the target's frozen
LM head restricted to its {card["vocabulary"]} most frequent answer tokens. {card["parameters"] / 1e6:.2f} M
parameters, float16, {card.get("size_mb", "?")} MB. Loads only on the target it was trained for.

## Data
- The target's own answers (batched generation, greedy and T = 0.7) to the training split of
  train/prompts.py ({card["train_prompts"]} prompts: chat, explanation, lists, copying, code, Chinese),
  as far as generation got, plus local text framed as answers (train/corpus.py: the course's
  lessons, installed packages' descriptions, standard-library code);
- labels: the target's full next-token distribution at every position (prefill mode).
- Used for this head: {card["train_sequences"]} sequences, {card["train_positions"]} positions
  ({shards.get("train", "?")} shards of 32 generated answers;
  {card.get("train_answer_tokens", "?")} answer tokens).
- Held out: the held-out split's topics never appear in training; no prompt mentions the
  subjects of bench/speedup.py's prompts (checked by train/prompts.py and tests).

## Training
{card["steps"]} steps ({card["positions_seen"]} positions seen, {card["unrolled_steps"]} unrolled
drafting steps each), {card["train_minutes"]} min on a shared 2-core CPU, after a closed-form
least-squares start.

## Held-out acceptance (python -m train evaluate)
- greedy acceptance by drafting depth 1…: {depth or "not measured"}
- α at T = 0.7 by depth: {alpha or "not measured"}
- greedy rounds of γ = 4: {ev.get("accepted_per_round_gamma4", "?")} drafts accepted per round,
  acceptance rate {ev.get("greedy_acceptance_gamma4", "?")}
- head step / target step on this machine: {card.get("cost_ratio", "?")}
- bench/speedup.py: head_chat {bench.get("head_chat", "not run")},
  head_alpha {bench.get("head_alpha", "not run")}
- its confidence is its acceptance rate (python -m train calibrate, held out), so in a run a
  chain stops once the product of its drafts' confidences falls below
  {CONFIDENCE_FLOOR} (specdec_core.models.head.CONFIDENCE_FLOOR, the best floor of that replay)

## Reproduce
    python -m train generate --split held_out --batch 16 --max-new-tokens 128 \\
        --limit {16 * shards.get("held_out", 0)}
    python -m train corpus && python -m train features --split held_out
{first_stage}    python -m train generate --split train --limit {train_prompts}
    python -m train features --split corpus --shards {fs.get("corpus", "")}
    python -m train features --split train
{vocab_step}    python -m train fit {init_flag}--steps {card["steps"]} \\
        --schedule {card.get("schedule", fit.TOTAL_STEPS)} --lr {card.get("lr", fit.LR)}
    python -m train evaluate --prompts {ev.get("prompts", 24)} && python -m train export
(each stage is seeded and resumes where it stopped; train/data/ holds the generated answers
this head used, so the generate stages find them done; torch's thread count can change the
last digits of a float sum, so a refit matches closely, not bit for bit).
"""


def _earlier_stages(init: dict | None) -> str:
    """The commands of the runs a head was started from (``fit --init``, oldest first), or
    nothing. Each state records its own start in ``init``, so a chain of stages unrolls."""
    chain = []
    while init:
        chain.append(init)
        init = init.get("init")
    chain.reverse()
    lines = []
    for n, stage in enumerate(chain, 1):
        fs = stage.get("feature_shards") or {}
        what = "the first run" if n == 1 else f"trained on from stage {n - 1}'s weights"
        lines += [
            f"    # stage {n}: {what} ({stage['step']} steps)",
            f"    python -m train generate --split train --limit {32 * fs.get('train', 0)}",
            f"    python -m train features --split corpus --shards {fs.get('corpus', '')}",
            "    python -m train features --split train",
            *_vocab_line(stage.get("vocabulary")),
            f"    python -m train fit {_init_flag(stage.get('init'))}--steps {stage['step']} "
            f"--schedule {stage.get('schedule')} --lr {stage.get('lr')}",
            f"    mv artifacts/head/checkpoint.pt artifacts/head/{stage['file']}",
        ]
    if chain:
        started = " (this run started from its exported float16 weights)" if chain[-1].get("exported") else ""
        lines.append(f"    # stage {len(chain) + 1}: trained on from stage {len(chain)}'s weights{started}")
    return "".join(line + "\n" for line in lines)


def _vocab_line(size: int | None) -> list[str]:
    """`train vocab` where a stage's head vocabulary was not the default (features writes that)."""
    return [f"    python -m train vocab --size {size}"] if size and size != paths.HEAD_VOCAB else []


def _init_flag(init: dict | None) -> str:
    return f"--init artifacts/head/{init['file']} " if init else ""
