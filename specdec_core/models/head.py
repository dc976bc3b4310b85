"""A trained EAGLE-style draft head over the target's own features (shipped in assets/head/).

The head is one decoder layer that runs beside the target. To score the token after
``x_{j+1}`` it reads the target's last hidden state at position j (``f_j``, the final-norm
feature the target's LM head reads) and the embedding of ``x_{j+1}`` — the token shifted one
place, which tells it which branch the target actually took (EAGLE). Both are RMS-normed and
concatenated, projected back to the hidden size (as DeepSeek-V3's MTP modules do), passed
through the layer (with its own KV cache) and a final norm into a predicted feature
``f̂_{j+1}``, and scored by the target's frozen LM head restricted to the head's vocabulary
(the 4096 tokens most frequent in the training answers; the rest get probability 0, so they
are never proposed and the verification stays exact).

For committed text the target's features are known; for a token the head drafted it has
only its own prediction ``f̂`` — "feature uncertainty". The session therefore keeps, per
position, whether its cache entry was made from the target's feature, and re-feeds positions
made from its own guesses as soon as the bound target session has their real features.

Binding: the engine calls ``session.bind_target(target_session)``; a target session serves
``features(start, stop)`` (its last hidden states of the text it has fed). Without a bound
target the head cannot draft, and says so.
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

from specdec_core.models.hf.kernels import RowLinear, row_linear
from specdec_core.models.hf.lean import LeanCache
from specdec_core.models.trained import (
    HeadConfig,
    HeadMismatchError,
    TrainedDraft,
    TrainedSession,
    read_weights,
    write_weights,
)

#: The shipped head for the bundled model.
DEFAULT_WEIGHTS = Path(__file__).resolve().parents[2] / "assets" / "head" / "smollm2-135m-head.safetensors"
#: A chain of the head's drafts stops once the product of its confidences falls below this
#: (engine.drafters.ModelDrafter). On held-out answers the head's confidence tracks its
#: acceptance rate, and of the floors ``python -m train calibrate`` replays greedy runs with,
#: this one gave the most tokens per target step (assets/head/calibration.json).
CONFIDENCE_FLOOR = 0.2


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


class EagleHead(nn.Module):
    """fc([norm f ; norm e]) → one Llama decoder layer → norm: the predicted next feature."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        h, d = cfg.hidden, cfg.head_dim
        self.cfg = cfg
        self.feature_norm = RMSNorm(h, cfg.eps)
        self.embed_norm = RMSNorm(h, cfg.eps)
        self.fc = nn.Linear(2 * h, h, bias=False)
        self.attn_norm = RMSNorm(h, cfg.eps)
        self.q = nn.Linear(h, cfg.heads * d, bias=False)
        self.k = nn.Linear(h, cfg.kv_heads * d, bias=False)
        self.v = nn.Linear(h, cfg.kv_heads * d, bias=False)
        self.o = nn.Linear(cfg.heads * d, h, bias=False)
        self.mlp_norm = RMSNorm(h, cfg.eps)
        self.gate = nn.Linear(h, cfg.intermediate, bias=False)
        self.up = nn.Linear(h, cfg.intermediate, bias=False)
        self.down = nn.Linear(cfg.intermediate, h, bias=False)
        self.out_norm = RMSNorm(h, cfg.eps)
        inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        self.register_buffer("inv_freq", inv.float(), persistent=False)

    # -- pieces shared by training and drafting -------------------------------------------
    def inputs(self, features: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.cat([self.feature_norm(features), self.embed_norm(embeds)], dim=-1))

    def rope(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        angles = positions.float()[..., None] * self.inv_freq
        angles = torch.cat([angles, angles], dim=-1)
        return angles.cos(), angles.sin()

    def qkv(self, x: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Rotated q (…, heads, n, d) and k, v (…, kv_heads, n, d) of the normed stream x (…, n, h)."""
        n, d = x.shape[-2], self.cfg.head_dim
        y = self.attn_norm(x)
        shape = (*x.shape[:-2], n, -1, d)
        q = self.q(y).view(shape).transpose(-3, -2)
        k = self.k(y).view(shape).transpose(-3, -2)
        v = self.v(y).view(shape).transpose(-3, -2)
        cos, sin = self.rope(positions)
        return _rotate(q, cos, sin), _rotate(k, cos, sin), v

    def finish(self, x: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        """Output projection, MLP and final norm: the predicted feature."""
        a = attended.transpose(-3, -2).flatten(-2)
        x = x + self.o(a)
        y = self.mlp_norm(x)
        x = x + self.down(F.silu(self.gate(y)) * self.up(y))
        return self.out_norm(x)

    def expand(self, kv: torch.Tensor) -> torch.Tensor:
        return kv.repeat_interleave(self.cfg.heads // self.cfg.kv_heads, dim=-3)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def save_head(
    head: EagleHead, vocab_ids: torch.Tensor, path: Path, card: dict[str, Any] | None = None
) -> None:
    """Weights in float16 (the head's own; the LM head rows are the target's and not stored)."""
    write_weights(head, head.cfg, vocab_ids, path, card)


def load_head(path: Path) -> tuple[EagleHead, torch.Tensor, dict[str, Any]]:
    """(head in float32, vocabulary ids, model-card numbers) from a safetensors file."""
    cfg, weights, vocab, meta = read_weights(path)
    if "medusa_heads" in meta:
        raise HeadMismatchError(f"{path} holds Medusa heads, not an EAGLE-style head.")
    head = EagleHead(cfg)
    head.load_state_dict(weights)
    return head.eval(), vocab, json.loads(meta.get("card", "{}"))


def _with_row_kernels(head: EagleHead) -> EagleHead:
    """The head with its linear layers on the target's few-row kernels (hf/kernels.py): a draft
    step feeds one to a few rows, which these kernels multiply faster than ``F.linear``.
    Same weights, other rounding; for drafting only (the
    packed kernels have no gradient)."""
    for name, child in list(head.named_children()):
        if type(child) is nn.Linear:
            setattr(head, name, RowLinear.sharing(child))
    return head


class HeadDraft(TrainedDraft):
    """The trained head as a draft of the model protocol, bound to one target model."""

    kind = "trained head"
    made_by = "train one with `python -m train`"
    confidence_floor = CONFIDENCE_FLOOR

    def __init__(self, target: Any, path: Path | str = DEFAULT_WEIGHTS) -> None:
        self.head = _with_row_kernels(self.open(target, path, load_head))
        self.embed = target.module.get_input_embeddings()

    def session(self, prompt_ids: Sequence[int]) -> HeadSession:
        s = HeadSession(self)
        s.pending = [int(t) for t in prompt_ids]
        return s


class HeadSession(TrainedSession):
    """The head's context: tokens, its KV cache, and which entries came from target features.

    Tokens arrive through ``extend``; the cache only runs once a target session is bound
    (``bind_target``), because every position needs the target's feature of the position
    before it (or, for drafted tokens, the head's own prediction of it).
    """

    draft: HeadDraft

    def __init__(self, draft: HeadDraft) -> None:
        super().__init__(draft)
        self.pending: list[int] = []  # prompt tokens waiting for a bound target
        self.exact: list[bool] = []  # entry j was made from the target's f_{j-1}
        cfg = draft.head.cfg  # the head's one layer keeps its keys and values as a lean body does
        self.cache = LeanCache(1, cfg.kv_heads, cfg.head_dim, device=draft.lm_rows.device)
        self.own: list[torch.Tensor] = []  # f̂_j per position (the head's guesses)
        self._tree_feats: list[torch.Tensor] = []  # f̂ per node of the tree being fed

    @property
    def length(self) -> int:
        return len(self.tokens) + len(self.pending)

    def truncate(self, length: int) -> None:
        self._tree = None
        if length < len(self.tokens):
            self.tokens = self.tokens[:length]
            self.exact = self.exact[:length]
            self.own = self.own[:length]
            self.cache.crop(length)
            self.pending = []
        else:
            self.pending = self.pending[: length - len(self.tokens)]

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> torch.Tensor:
        """Float32 logit rows over the target's vocabulary (−inf outside the head's)."""
        if self.target is None:
            raise RuntimeError("The draft head has no target session bound (engine: bind_target).")
        ids = [*self.pending, *(int(t) for t in token_ids)]
        asked = len(token_ids)
        self.pending = []
        self._tree = None
        self._refeed_exact()
        feats = self._run(ids)
        if asked == 0:
            return torch.empty(0, self.draft.vocab_size)
        return self._scores(feats[-1:] if last_only else feats[-asked:])

    def _scores(self, feats: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            small = row_linear(feats, self.draft.lm_rows)
        return self._spread(small)

    # -- token trees (engine/token_tree.py): one forward per level, then compaction to the path -------
    def extend_tree(self, token_ids: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """Feed tree nodes (``token_tree.TreeSegment`` parents; -1 starts a tree after the
        context): a node reads its parent's predicted feature (the root: the target's feature
        before it where known), sees the context and its own ancestors, and sits at position
        root + depth. Float64 rows over the target's vocabulary, one per node."""
        ids = [int(t) for t in token_ids]
        positions, allowed = self._tree_add(ids, parents)
        tree = self._tree
        assert tree is not None
        hidden = self.draft.head.cfg.hidden
        device = self.draft.lm_rows.device
        feats, exact = [], []
        for par in parents:
            if par >= 0:
                feats.append(self._tree_feats[par])
                exact.append(False)
                continue
            real = self._target_features(tree.root - 1, tree.root) if tree.root else None
            if real is not None:
                feats.append(real[0].float())
            else:
                feats.append(self.own[-1] if self.own else torch.zeros(hidden, device=device))
            exact.append(real is not None or tree.root == 0)
        with torch.inference_mode():
            embeds = self.draft.embed(torch.tensor(ids, device=device)).float()
            mask = torch.as_tensor(allowed, device=device)
            out = self._layer(torch.stack(feats), embeds, torch.as_tensor(positions, device=device), mask)
        self._tree_feats.extend(out)
        self.own.extend(out)
        self.tokens.extend(ids)
        self.exact.extend(exact)
        return self._scores(out).double().numpy()

    def _start_tree(self) -> None:
        self.logits([])  # pending tokens in, guesses redone where the target has caught up
        self._tree_feats = []

    def compact(self, keep: Sequence[int]) -> None:
        """Keep the context and the tree path `keep` (tree indices, root first); drop the rest."""
        kept = self._compacted(keep)
        with torch.inference_mode():  # the buffers may have been made inside it
            self.cache.keep(kept)
        self.exact = [self.exact[i] for i in kept]
        self.own = [self.own[i] for i in kept]

    def _target_features(self, start: int, stop: int) -> torch.Tensor | None:
        """f_start … f_{stop-1} from the target if it has fed exactly our tokens there."""
        t = self.target
        if stop <= start or t.length < stop:
            return None
        return t.features(start, stop)

    def _refeed_exact(self) -> None:
        """Redo the entries made from the head's own guesses where the target now has features."""
        first = next((j for j, e in enumerate(self.exact) if not e), None)
        if first is None or first == 0:
            return
        have = min(len(self.tokens), self.target.length + 1)
        if have <= first:
            return
        redo = self.tokens[first:have]
        rest = self.tokens[have:]
        self.truncate(first)
        self._run(redo)
        if rest:
            self._run(rest)

    def _run(self, ids: list[int]) -> torch.Tensor:
        """Feed `ids` at the end; returns their predicted features (n, hidden)."""
        if not ids:
            return torch.empty(0, self.draft.head.cfg.hidden)
        head = self.draft.head
        start = len(self.tokens)
        n = len(ids)
        device = self.draft.lm_rows.device
        # the feature before each position: the target's where known, else the head's own guess
        exact_stop = min(start + n, self.target.length + 1)
        feats = []
        exact = []
        real = self._target_features(max(start - 1, 0), max(exact_stop - 1, 0))
        for i in range(n):
            j = start + i
            if j == 0:
                feats.append(torch.zeros(head.cfg.hidden, device=device))
                exact.append(True)
            elif real is not None and j < exact_stop:
                feats.append(real[j - 1 - max(start - 1, 0)].float())
                exact.append(True)
            else:
                feats.append(None)  # the head's own guess, known once position j-1 is run
                exact.append(False)
        with torch.inference_mode():
            embeds = self.draft.embed(torch.tensor(ids, device=device)).float()
            out = []
            i = 0
            while i < n:  # positions fed together while each one's input feature is known
                k = i + 1
                while k < n and feats[k] is not None:
                    k += 1
                if feats[i] is None:
                    feats[i] = self.own[-1] if self.own else torch.zeros(head.cfg.hidden, device=device)
                pos = torch.arange(start + i, start + k, device=device)
                chunk = self._layer(torch.stack(feats[i:k]), embeds[i:k], pos)
                for r in range(chunk.shape[0]):
                    self.own.append(chunk[r])
                out.append(chunk)
                i = k
        self.tokens.extend(ids)
        self.exact.extend(exact)
        return torch.cat(out)

    def _layer(
        self,
        feats: torch.Tensor,
        embeds: torch.Tensor,
        positions: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """One pass of the layer over new entries at `positions` (causal unless `mask`
        gives each new entry's view of the whole cache)."""
        head = self.draft.head
        n = feats.shape[0]
        x = head.inputs(feats, embeds)
        q, k, v = head.qkv(x, positions)
        cache = self.cache
        start = cache.length
        total = start + n
        cache.reserve(total)
        cache.keys[0, :, start:total] = k
        cache.values[0, :, start:total] = v
        cache.length = total
        keys, values = cache.keys[0, :, :total], cache.values[0, :, :total]
        if mask is None:
            mask = torch.ones(n, total, dtype=torch.bool, device=x.device).tril(total - n)
        att = F.scaled_dot_product_attention(q, head.expand(keys), head.expand(values), attn_mask=mask)
        return head.finish(x, att)
