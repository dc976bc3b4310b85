"""Stage "calibrate": is the head's confidence its acceptance rate, and where should a chain stop?

On the held-out prompts' answers (never the bench's), the shipped head drafts from every
position as in a run (training's unrolled pass, as ``evaluate``). Per depth it prints the
head's confidence (its softmax probability of its own argmax, over its vocabulary) against
how often that argmax is the target's, by quintile of confidence. Then it replays greedy runs
along each answer with the engine's adaptive γ controller and the engine's stop rule (a draft
after the first is kept while the product of the chain's confidences stays at or above the
floor; :class:`specdec_core.engine.drafters.ModelDrafter`), priced by the card's draft step
and the engine's verification cost table, for each floor in ``FLOORS``: the floor with the
most tokens per target step is the one :data:`specdec_core.models.head.CONFIDENCE_FLOOR`
ships. Writes ``assets/head/calibration.json`` (the self-speculation lesson draws it).
"""

from __future__ import annotations

import json

import numpy as np
import torch

from train import features, paths
from train.fit import unrolled_features

DEPTHS = 6
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def chains(n_prompts: int, n_tokens: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per held-out answer: (confidence, hit), each (positions, DEPTHS), for chains from each position."""
    from specdec_core.models import load_bundled
    from specdec_core.models.head import DEFAULT_WEIGHTS, load_head

    module = load_bundled().module
    if not features.files("held_out"):
        features.run("held_out")
    embed = module.get_input_embeddings().weight.detach().float()
    head, vocab, _ = load_head(DEFAULT_WEIGHTS)
    lm_rows = module.get_output_embeddings().weight.detach().float()[vocab].clone()
    head.eval()
    out = []
    with torch.inference_mode():
        for answer in features.answers("held_out", n_prompts, n_tokens):
            f, tok, top = answer.features[None], answer.tokens[None], answer.argmax
            feats = unrolled_features(head, f, embed[tok], steps=DEPTHS)
            starts = np.arange(answer.start - 1, f.shape[1] - DEPTHS)
            conf = np.zeros((starts.size, DEPTHS))
            hit = np.zeros((starts.size, DEPTHS), dtype=bool)
            for s, feat in enumerate(feats):
                c, best = torch.softmax(feat[0] @ lm_rows.T, -1).max(-1)
                conf[:, s] = c[starts + s].numpy()
                hit[:, s] = (vocab[best] == top)[starts + s].numpy()
            out.append((conf, hit))
    return out


def replay(answers: list[tuple[np.ndarray, np.ndarray]], floor: float, draft_cost: float) -> dict[str, float]:
    """Greedy runs along the answers with the adaptive γ and the stop rule at `floor`."""
    from specdec_core.engine.drafters import keeps_draft
    from specdec_core.engine.gamma import TheoryGamma, default_verify_cost

    tokens = cost = drafted = accepted = 0.0
    for conf, hit in answers:
        controller = TheoryGamma(4, draft_cost)
        t = 0
        while t < len(conf):
            g = min(controller.next_gamma(), DEPTHS)
            k, chain, forwards = 0, 1.0, 0
            for s in range(g):
                forwards += 1
                chain *= conf[t, s]
                if not keeps_draft(chain, k, floor):
                    break
                k += 1
            a = 0
            while a < k and hit[t, a]:
                a += 1
            controller.update(k, a, a < k)
            tokens += a + 1
            cost += default_verify_cost(k) + draft_cost * forwards
            drafted += k
            accepted += a
            t += a + 1
    return {"floor": floor, "tokens_per_step": tokens / cost, "alpha": accepted / max(drafted, 1)}


def run(n_prompts: int = 32, n_tokens: int = 96) -> dict:
    from specdec_core.models.head import DEFAULT_WEIGHTS, load_head
    from specdec_core.models.trained import card_cost_ratio

    answers = chains(n_prompts, n_tokens)
    conf = np.concatenate([c for c, _ in answers])
    hit = np.concatenate([h for _, h in answers])
    by_depth = []
    for s in range(DEPTHS):
        cuts = np.quantile(conf[:, s], [0.2, 0.4, 0.6, 0.8])
        band = np.digitize(conf[:, s], cuts)
        by_depth.append(
            [
                {
                    "confidence": round(float(conf[band == b, s].mean()), 3),
                    "hit": round(float(hit[band == b, s].mean()), 3),
                }
                for b in range(5)
            ]
        )
        print(
            f"depth {s + 1}: " + "  ".join(f"{q['confidence']:.2f} → {q['hit']:.2f}" for q in by_depth[-1]),
            flush=True,
        )
    draft_cost = card_cost_ratio(load_head(DEFAULT_WEIGHTS)[2]) or 0.08
    replays = [replay(answers, floor, draft_cost) for floor in FLOORS]
    for r in replays:
        print(
            f"floor {r['floor']:.2f}: {r['tokens_per_step']:.3f} tokens per target step, α {r['alpha']:.3f}"
        )
    best = max(replays, key=lambda r: r["tokens_per_step"])
    result = {
        "positions": int(conf.shape[0]),
        "confidence_vs_hit_by_depth": by_depth,
        "draft_cost": draft_cost,
        "replays": [{k: round(v, 4) for k, v in r.items()} for r in replays],
        "best_floor": best["floor"],
    }
    (paths.ASSET / "calibration.json").write_text(json.dumps(result, indent=1) + "\n")
    print(
        json.dumps({"best_floor": best["floor"], "tokens_per_step": round(best["tokens_per_step"], 4)}),
        flush=True,
    )
    return result
