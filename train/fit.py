"""Stage "fit": train the head on the target's features, and on its own for drafted positions.

Loss at each position j: cross-entropy of the head's distribution on its vocabulary against
the target's exact probabilities there (soft labels rebuilt from f_j, the LM-head rows and
the stored log-sum-exp), plus a small smooth-L1 pull of the predicted feature towards f_j.

Feature uncertainty (DESIGN.md's trap; EAGLE-3's "training-time test"): the forward pass is
unrolled ``STEPS`` times. Step 1 reads the target's features. Step s reads, at position j,
the feature the head itself predicted for j at step s − 1, as it would when drafting s tokens
ahead, and its attention sees what a drafting head sees: the target-fed entries up to the
chain's start (j − s + 1) and its own entries of the chain after it. Only positions from the
last prompt token on (the answer) count.

Seeded (data order and initialisation), time-budgeted and resumable: a checkpoint with the
optimiser state is written every ``SAVE_EVERY`` steps and at the end (also when a file named
``stop`` appears in the work folder); a rerun continues it.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from specdec_core.models.head import EagleHead, HeadConfig
from train import features, paths, trainer

STEPS = 3
STEP_WEIGHTS = (1.0, 0.8, 0.64)
FEATURE_WEIGHT = 0.2
BATCH_TOKENS = 1536
MAX_LEN = 320
LR = 1e-3  # peak learning rate by default (``--lr``; kept in the checkpoint)
WARMUP = 40
TOTAL_STEPS = 1200  # the cosine schedule's default length (``--schedule``; kept in the checkpoint)
SAVE_EVERY = 5


def checkpoint_path():
    return paths.WORK / "checkpoint.pt"


class Data:
    """Sequences of the training split packed into batches of about BATCH_TOKENS positions."""

    def __init__(self, splits: tuple[str, ...] = ("train", "corpus")) -> None:
        self.seqs: list[tuple[np.ndarray, ...]] = []
        for shard in (s for split in splits for s in features.load(split)):
            off = 0
            for start, length in zip(shard["answer_start"], shard["length"], strict=True):
                sl = slice(off, off + int(length))
                self.seqs.append((shard["features"][sl], shard["tokens"][sl], shard["lse"][sl], int(start)))
                off += int(length)
        self.tokens = sum(len(s[1]) for s in self.seqs)
        self.answer_tokens = sum(len(s[1]) - s[3] for s in self.seqs)

    def summary(self) -> dict[str, int]:
        return {"sequences": len(self.seqs), "positions": self.tokens, "answer_tokens": self.answer_tokens}

    def batches(self, epoch: int) -> list[list[int]]:
        rng = np.random.default_rng(paths.SEED * 7919 + epoch)
        order = rng.permutation(len(self.seqs))
        out, cur, width = [], [], 0
        for i in order:
            n = min(len(self.seqs[i][1]), MAX_LEN)
            if cur and max(width, n) * (len(cur) + 1) > BATCH_TOKENS:
                out.append(cur)
                cur, width = [], 0
            cur.append(int(i))
            width = max(width, n)
        if cur:
            out.append(cur)
        return out

    def batch_at(self, step: int, per_epoch: int) -> list[int]:
        """The batch of training step `step`: epochs are `per_epoch` steps long (epoch 0's
        batch count); an epoch whose shuffle packs into fewer batches starts over on its own
        batches, one that packs into more leaves its last ones out."""
        epoch, within = divmod(step, per_epoch)
        batches = self.batches(epoch)
        return batches[within % len(batches)]

    def tensors(self, idx: list[int]) -> tuple[torch.Tensor, ...]:
        width = max(min(len(self.seqs[i][1]), MAX_LEN) for i in idx)
        f = torch.zeros(len(idx), width, self.seqs[idx[0]][0].shape[1])
        tok = torch.zeros(len(idx), width, dtype=torch.long)
        lse = torch.zeros(len(idx), width)
        mask = torch.zeros(len(idx), width, dtype=torch.bool)
        for b, i in enumerate(idx):
            feats, toks, ls, start = self.seqs[i]
            n = min(len(toks), width)
            f[b, :n] = torch.from_numpy(feats[:n].astype(np.float32))
            tok[b, :n] = torch.from_numpy(toks[:n].astype(np.int64))
            lse[b, :n] = torch.from_numpy(ls[:n])
            mask[b, max(start - 1, 1) : n] = True
        return f, tok, lse, mask


def unrolled_features(
    head: EagleHead, f: torch.Tensor, emb: torch.Tensor, steps: int = STEPS
) -> list[torch.Tensor]:
    """The head's predicted features at every position for drafting depths 1 … steps.

    Row j of step s is what a drafting head predicts for position j when the target's
    features end at position j − s (the chain started at j − s + 1); position 0 reads zeros.
    """
    b, t, h = f.shape
    pos = torch.arange(t)
    inp = torch.cat([torch.zeros(b, 1, h), f[:, :-1]], dim=1)  # f_{j-1} at position j
    keys, values, out = [], [], []
    for s in range(1, steps + 1):
        x = head.inputs(inp, emb)
        q, k, v = head.qkv(x, pos)
        k, v = head.expand(k), head.expand(v)
        keys.append(k)
        values.append(v)
        scale = 1.0 / math.sqrt(q.shape[-1])
        # target-fed entries up to the chain's start j - s + 1
        allowed = pos[None, :] <= (pos[:, None] - (s - 1))
        scores = [(q @ keys[0].transpose(-1, -2) * scale).masked_fill(~allowed, -math.inf)]
        shifted_v = []
        for k_step in range(2, s + 1):  # the chain's own entries: step k at position j - (s - k)
            shift = s - k_step
            d = (q * _shift(keys[k_step - 1], shift)).sum(-1, keepdim=True) * scale
            if shift:
                d[..., :shift, :] = -math.inf
            scores.append(d)
            shifted_v.append(_shift(values[k_step - 1], shift))
        w = torch.softmax(torch.cat(scores, dim=-1), dim=-1).nan_to_num(0.0)
        att = w[..., :t] @ values[0]
        for i, vs in enumerate(shifted_v):
            att = att + w[..., t + i : t + i + 1] * vs
        feat = head.finish(x, att)
        out.append(feat)
        # next step reads, at position j, the feature this step predicted for j - 1
        inp = torch.cat([torch.zeros(b, 1, h), feat[:, :-1].detach()], dim=1)
    return out


def unrolled_loss(
    head: EagleHead,
    embed: torch.Tensor,
    lm_rows: torch.Tensor,
    f: torch.Tensor,
    tok: torch.Tensor,
    lse: torch.Tensor,
    mask: torch.Tensor,
    steps: int = STEPS,
) -> tuple[torch.Tensor, list[float]]:
    """Weighted loss over the unrolled steps, and each step's top-1 agreement with the target."""
    pos = torch.arange(f.shape[1])
    with torch.no_grad():
        logp_target = f @ lm_rows.T - lse[..., None]  # log p_j on the head vocabulary
        p_target = logp_target.exp()
        target_top = logp_target.argmax(-1)
    total = f.new_zeros(())
    agree: list[float] = []
    for s, feat in enumerate(unrolled_features(head, f, embed[tok], steps), start=1):
        logq = torch.log_softmax(feat @ lm_rows.T, dim=-1)
        valid = mask & (pos[None, :] >= s)  # the chain started at a real position
        ce = -(p_target * logq).sum(-1)
        reg = F.smooth_l1_loss(feat, f, reduction="none").mean(-1)
        n = valid.sum().clamp(min=1)
        total = total + STEP_WEIGHTS[s - 1] * (((ce + FEATURE_WEIGHT * reg) * valid).sum() / n)
        agree.append(float(((logq.argmax(-1) == target_top) & valid).sum() / n))
    return total, agree


def _shift(x: torch.Tensor, n: int) -> torch.Tensor:
    """x moved n positions later along the sequence axis (-2), zeros in front."""
    if n == 0:
        return x
    pad = torch.zeros_like(x[..., :n, :])
    return torch.cat([pad, x[..., :-n, :]], dim=-2)


def target_parts(module) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    vocab = torch.from_numpy(np.load(paths.WORK / "vocab.npy"))
    embed = module.get_input_embeddings().weight.detach().float()
    lm_rows = module.get_output_embeddings().weight.detach().float()[vocab].clone()
    return vocab, embed, lm_rows


def least_squares_init(head: EagleHead, data: Data, embed: torch.Tensor, final_norm: torch.Tensor) -> float:
    """Start from the best *linear* next-feature predictor, solved in closed form.

    With the attention and MLP outputs zeroed the head is out_norm(fc(z)), z = [norm f_{j-1};
    norm e_{x_j}]; fc is the ridge least-squares map from z to f_j / w (w: the target's final
    norm weight, which out_norm starts from), so the head predicts f_j linearly before any
    gradient step. The sums cost about one forward pass over the data; gradient descent then
    trains the layer from there. Returns the fit's R².
    """
    h = head.cfg.hidden
    xtx = torch.zeros(2 * h, 2 * h, dtype=torch.float64)
    xty = torch.zeros(2 * h, h, dtype=torch.float64)
    yy = torch.zeros((), dtype=torch.float64)
    y_sum = torch.zeros(h, dtype=torch.float64)
    count = 0
    with torch.no_grad():
        for feats, toks, _, _ in data.seqs:
            f = torch.from_numpy(feats.astype(np.float32))
            e = embed[torch.from_numpy(toks[1:].astype(np.int64))]
            z = torch.cat([head.feature_norm(f[:-1]), head.embed_norm(e)], -1).double()
            y = (f[1:] / final_norm).double()
            xtx += z.T @ z
            xty += z.T @ y
            yy += (y * y).sum()
            y_sum += y.sum(0)
            count += y.shape[0]
        ridge = 1e-3 * torch.diagonal(xtx).mean()
        w = torch.linalg.solve(xtx + ridge * torch.eye(2 * h, dtype=torch.float64), xty)
        resid = yy - 2 * (w * xty).sum() + (w * (xtx @ w)).sum()
        total = yy - (y_sum * y_sum).sum() / max(count, 1)
        head.fc.weight.copy_(w.T.float())
        head.out_norm.weight.copy_(final_norm)
        head.o.weight.zero_()
        head.down.weight.zero_()
    return float(1 - resid / total)


def run(
    minutes: float = 50.0,
    max_steps: int | None = None,
    schedule: int | None = None,
    lr: float | None = None,
    init: str | None = None,
) -> None:
    """Train (or resume) the head; a new run starts from the least-squares fit, or from the
    weights of the checkpoint `init` (a finished earlier run, recorded in the new state as
    ``init``: its steps, schedule, learning rate, data and feature shards), with a fresh
    optimiser and schedule."""
    from specdec_core.models import load_bundled

    target = load_bundled()
    module = target.module
    vocab, embed, lm_rows = target_parts(module)
    torch.manual_seed(paths.SEED)
    head = EagleHead(HeadConfig.for_target(module, target.name))
    for p in head.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    opt = torch.optim.AdamW(head.parameters(), lr=LR, weight_decay=0.0, betas=(0.9, 0.95))
    state = {
        "step": 0,
        "seconds": 0.0,
        "positions": 0,
        "log": [],
        "schedule": schedule or TOTAL_STEPS,
        "lr": lr or LR,
    }
    ckpt = checkpoint_path()
    data = Data()
    if not ckpt.exists():
        state["feature_shards"] = {split: len(features.files(split)) for split in ("train", "corpus")}
        state["vocabulary"] = len(vocab)
        if init is not None:
            weights, before, name = _start_from(init)
            head.load_state_dict(weights)
            state["init"] = {
                "file": name,
                **{k: before.get(k) for k in INIT_KEYS},
            }
            print(f"starting from {init} ({before['step']} steps)", flush=True)
        else:
            t0 = time.perf_counter()
            r2 = least_squares_init(head, data, embed, module.model.norm.weight.detach().float())
            state["init_r2"] = round(r2, 4)
            state["seconds"] += time.perf_counter() - t0
            print(
                f"least-squares start: R² = {r2:.3f} of the next feature, {time.perf_counter() - t0:.0f} s",
                flush=True,
            )
        trainer.save(ckpt, "head", head, opt, state, vocab)
    else:
        state = trainer.resume(ckpt, "head", head, opt)
        state.setdefault("schedule", TOTAL_STEPS)
        state.setdefault("lr", LR)
    state["data"] = data.summary()
    print(
        f"{len(data.seqs)} sequences, {data.tokens} positions ({data.answer_tokens} answer tokens); "
        f"{sum(p.numel() for p in head.parameters()) / 1e6:.2f} M parameters",
        flush=True,
    )
    per_epoch = len(data.batches(0))

    def step(n: int) -> tuple[torch.Tensor, list[float], int]:
        f, tok, lse, mask = data.tensors(data.batch_at(n, per_epoch))
        loss, agree = unrolled_loss(head, embed, lm_rows, f, tok, lse, mask)
        return loss, agree, int(mask.sum())

    def rate(n: int) -> float:  # linear warm-up, then cosine down to a tenth of the peak
        cosine = 1 + math.cos(math.pi * min(n / state["schedule"], 1.0))
        return state["lr"] * min(1.0, (n + 1) / WARMUP) * (0.1 + 0.9 * 0.5 * cosine)

    trainer.train(
        head,
        opt,
        state,
        (ckpt, "head", vocab),
        step=step,
        rate=rate,
        minutes=minutes,
        until=max_steps,
        save_every=SAVE_EVERY,
        label=lambda n: f"{n + 1} (epoch {n // per_epoch})",
        clip=1.0,
    )


#: What a run records of the run it started from (the model card unrolls the chain).
INIT_KEYS = ("step", "schedule", "lr", "data", "feature_shards", "vocabulary", "exported", "init")


def _start_from(init: str) -> tuple[dict, dict, str]:
    """(head weights, the earlier run's state, its checkpoint name in the card's commands) of
    a finished run's checkpoint, or of an exported head file (its float16 weights; its card
    has the run's numbers, and reproducing names that run's checkpoint after the file)."""
    path = Path(init)
    if path.suffix != ".safetensors":
        source = torch.load(path, weights_only=False)
        return source["head"], source["state"], path.name
    from specdec_core.models.head import load_head

    head, vocab, card = load_head(path)
    data = {k: card[f"train_{k}"] for k in ("sequences", "positions", "answer_tokens")}
    before = {**card, "step": card["steps"], "data": data, "vocabulary": len(vocab), "exported": True}
    return head.state_dict(), before, f"checkpoint_{path.stem}.pt"
