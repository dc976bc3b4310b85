"""Medusa-style draft heads over the target's last feature (shipped in assets/medusa/).

Medusa (Cai et al. 2024) adds K small heads on the target's final hidden state: head k reads
the feature ``f_m`` at the last position the target has run and guesses the token k + 1
places after it (head 0 would be the target's own LM head). Every head is one residual block,
``f + U_k SiLU(W_k f + b_k)``, scored by the target's frozen LM head restricted to
the head vocabulary (the 4096 tokens of the EAGLE head's; the rest get probability 0, so
they are never proposed and verification stays exact).

Unlike the EAGLE head (models.head) a Medusa head never sees the tokens drafted before its
own position: all K guesses come from the one feature, so they can be computed at once and
drafted as a tree of each head's top candidates, and every one of them is a proper law the
draft samples from (what exact verification needs), but accuracy falls fast with k.
Positions further ahead than the last head reuse it.

Binding: like the EAGLE head, a session needs ``bind_target(target_session)``; the target
session serves ``features(start, stop)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from specdec_core.models.trained import (
    HeadConfig,
    HeadMismatchError,
    TrainedDraft,
    TrainedSession,
    read_weights,
    write_weights,
)

#: The shipped Medusa heads for the bundled model.
DEFAULT_MEDUSA = Path(__file__).resolve().parents[2] / "assets" / "medusa" / "smollm2-135m-medusa.safetensors"


class MedusaHeads(nn.Module):
    """K residual blocks over one feature: block k's output is the predicted feature k + 1 ahead.

    Block k: ``f + U_k SiLU(W_k f + b_k)``. Medusa-1's block is ``f + SiLU(W f)`` with a
    trained LM head per head; with the target's LM head frozen the output projection U_k is
    what lets a block move the feature anywhere (SiLU alone cannot go below −0.28)."""

    def __init__(self, cfg: HeadConfig, count: int) -> None:
        super().__init__()
        if count < 1:
            raise ValueError("Medusa needs at least one head.")
        self.cfg = cfg
        self.count = count
        h = cfg.hidden
        self.inner = nn.Parameter(torch.zeros(count, h, h))
        self.bias = nn.Parameter(torch.zeros(count, h))
        self.outer = nn.Parameter(torch.zeros(count, h, h))

    def forward(self, features: torch.Tensor, which: torch.Tensor | None = None) -> torch.Tensor:
        """Every head's prediction (count, n, hidden) for features (n, hidden), or with `which`
        (one 0-based head index per row) each row's own head (n, hidden)."""
        if which is None:
            mid = F.silu(torch.einsum("kij,nj->kni", self.inner, features) + self.bias[:, None])
            return features + torch.einsum("kij,knj->kni", self.outer, mid)
        mid = F.silu(torch.einsum("nij,nj->ni", self.inner[which], features) + self.bias[which])
        return features + torch.einsum("nij,nj->ni", self.outer[which], mid)


def save_medusa(
    heads: MedusaHeads, vocab_ids: torch.Tensor, path: Path, card: dict[str, Any] | None = None
) -> None:
    """Weights in float16 (the LM-head rows are the target's and not stored)."""
    write_weights(heads, heads.cfg, vocab_ids, path, card, {"medusa_heads": str(heads.count)})


def load_medusa(path: Path) -> tuple[MedusaHeads, torch.Tensor, dict[str, Any]]:
    """(heads in float32, vocabulary ids, model-card numbers) from a safetensors file."""
    cfg, weights, vocab, meta = read_weights(path)
    if "medusa_heads" not in meta:
        raise HeadMismatchError(f"{path} is not a Medusa-heads file (no head count in its metadata).")
    heads = MedusaHeads(cfg, int(meta["medusa_heads"]))
    heads.load_state_dict(weights)
    return heads.eval(), vocab, json.loads(meta.get("card", "{}"))


class MedusaDraft(TrainedDraft):
    """The trained Medusa heads as a draft of the model protocol, bound to one target model."""

    kind = "Medusa heads"
    made_by = "train them with `python -m train medusa-fit`, `medusa-evaluate` and `medusa-export`"

    def __init__(self, target: Any, path: Path | str = DEFAULT_MEDUSA) -> None:
        self.heads: MedusaHeads = self.open(target, path, load_medusa)

    def session(self, prompt_ids: Sequence[int]) -> MedusaSession:
        s = MedusaSession(self)
        s.tokens = [int(t) for t in prompt_ids]
        return s

    def shape(self) -> str:
        return f"{self.heads.count} heads, {super().shape()}"


class MedusaSession(TrainedSession):
    """The draft's context is only its tokens: every row is computed from the target's feature."""

    draft: MedusaDraft

    @property
    def length(self) -> int:
        return len(self.tokens)

    def truncate(self, length: int) -> None:
        self._tree = None
        self.tokens = self.tokens[:length]

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> torch.Tensor:
        """Float32 logit rows over the target's vocabulary (−inf outside the head vocabulary),
        one per token fed: the law of the token after it."""
        self._tree = None
        start = len(self.tokens)
        self.tokens.extend(int(t) for t in token_ids)
        positions = range(start, len(self.tokens))
        if last_only:
            positions = positions[-1:]
        return self._rows(list(positions))

    def extend_tree(self, token_ids: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """Tree nodes (``token_tree.TreeSegment`` parents; -1 starts a tree after the context):
        a node at depth d sits at position root + d and gets that position's head row."""
        ids = [int(t) for t in token_ids]
        positions, _ = self._tree_add(ids, parents)
        self.tokens.extend(ids)
        return self._rows([int(p) for p in positions]).double().numpy()

    def compact(self, keep: Sequence[int]) -> None:
        """Keep the context and the tree path `keep` (tree indices, root first)."""
        self._compacted(keep)

    def _rows(self, positions: list[int]) -> torch.Tensor:
        """Rows for tokens at `positions`: the target's own law where it has run that position,
        else head k = position − m on the last target feature f_m (the last head beyond K)."""
        if self.target is None:
            raise RuntimeError("The Medusa heads have no target session bound (engine: bind_target).")
        draft = self.draft
        if not positions:
            return torch.empty(0, draft.vocab_size)
        known = self.target.length  # f_0 … f_(known-1) exist
        hidden = draft.heads.cfg.hidden
        device = draft.lm_rows.device
        with torch.inference_mode():
            last = (
                self.target.features(known - 1, known)[0].float()
                if known
                else torch.zeros(hidden, device=device)
            )
            own = [p for p in positions if p < known]
            feats = torch.empty(len(positions), hidden, device=device)
            if own:  # sorted, as positions are
                seen = self.target.features(own[0], own[-1] + 1).float()
                feats[: len(own)] = seen[torch.tensor(own, device=device) - own[0]]
            ahead = positions[len(own) :]
            if ahead:
                which = torch.tensor(
                    [min(p - known + 1, draft.heads.count) - 1 for p in ahead], device=device
                )
                feats[len(own) :] = draft.heads(last.expand(len(ahead), hidden), which)
            small = feats @ draft.lm_rows.T
        return self._spread(small)
