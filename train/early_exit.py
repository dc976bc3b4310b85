"""Stage "early-exit": how well an untrained exit after k layers agrees with the full model.

For held-out text (the held-out prompts' greedy answers, or the prompts themselves before
they exist) the target runs once with all hidden states; the state after layer k goes
through the final norm and the LM head, exactly what a layer-skip draft of depth k does.
Per depth: the greedy agreement with the full model's argmax and the acceptance rate
α = Σ min(p, q) at temperature 1 and 0.7, averaged over positions. Written to
``assets/head/early_exit.json`` for the self-speculation lesson.
"""

from __future__ import annotations

import json

import torch

from train import paths, prompts

POSITIONS = 96


def run() -> None:
    from specdec_core.models import load_bundled

    model = load_bundled()
    module = model.module.eval()
    texts = []
    held = sorted((paths.GENERATED / "held_out").glob("shard_*.json"))
    if held:
        for shard in held:
            texts += [r["prompt"] + r["answer"] for r in json.loads(shard.read_text())["records"]]
        source = "held-out answers"
    else:
        texts = [model.encode(p.text, chat=True) for p in prompts.build("held_out")[:12]]
        source = "held-out prompts"
    norm = module.model.norm
    head = module.get_output_embeddings()
    layers = module.config.num_hidden_layers
    agree = torch.zeros(layers + 1, dtype=torch.float64)
    alpha = {
        1.0: torch.zeros(layers + 1, dtype=torch.float64),
        0.7: torch.zeros(layers + 1, dtype=torch.float64),
    }
    count = 0
    with torch.inference_mode():
        for ids in texts:
            if count >= POSITIONS:
                break
            out = module.model(torch.tensor([ids]), output_hidden_states=True)
            take = slice(max(0, len(ids) - (POSITIONS - count)), len(ids))
            full = head(out.hidden_states[-1][0, take]).double()
            top = full.argmax(-1)
            for k in range(1, layers + 1):
                h = out.hidden_states[k][0, take]
                z = head(h if k == layers else norm(h)).double()
                agree[k] += (z.argmax(-1) == top).sum()
                for t, acc in alpha.items():
                    acc[k] += torch.minimum(torch.softmax(full / t, -1), torch.softmax(z / t, -1)).sum()
            count += full.shape[0]
    result = {
        "source": source,
        "positions": count,
        "depths": list(range(1, layers + 1)),
        "greedy": [round(float(agree[k] / count), 4) for k in range(1, layers + 1)],
        "alpha_t1": [round(float(alpha[1.0][k] / count), 4) for k in range(1, layers + 1)],
        "alpha_t07": [round(float(alpha[0.7][k] / count), 4) for k in range(1, layers + 1)],
    }
    paths.ensure(paths.ASSET)
    (paths.ASSET / "early_exit.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result), flush=True)
