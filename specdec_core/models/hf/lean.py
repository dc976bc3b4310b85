"""A lean decoder body for Llama, Qwen2 and Mistral models on CPU: same maths, fewer operations.

transformers' Llama forward spends a fixed time per layer on small operations and Python
around the matrix products (mask building, cache objects, rotary tables recomputed each
call, many-operation norms). :class:`LeanBody` runs the same layers in about half as many
operations: q, k and v come from one matrix product and gate and up from another, with
the RMS-norm weights and the attention scale folded into those matrices; the rotary
embedding of q and k is one complex product; attention is one
``scaled_dot_product_attention`` call in float32 over a key/value buffer that grows by
doubling. float32 logits equal
transformers' up to rounding; in bfloat16 the folded weights round differently from
transformers' bf16 model, but the logits lie as close to the float32 model's as that
model's do (both tested).

Only models whose layers are exactly this maths qualify (:func:`lean_eligible`):
``LlamaForCausalLM``, ``Qwen2ForCausalLM`` and ``MistralForCausalLM`` with the default
rotary embedding, SiLU MLP, plain ``nn.Linear`` projections, no biases except on q, k and v
(Qwen2), no sliding window, on CPU in float32 or bfloat16 (:data:`LEAN_CLASSES`). Tested
against transformers' body on tiny random models of all three. Anything else keeps
transformers' own body, and so does a model whose fused weights (:func:`fused_bytes`,
about half its size) would leave too little memory available (``memory.room_for``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import torch
import torch.nn.functional as F

from specdec_core.models.hf.derived import DerivedCache

#: A context manager giving the matrix product ``f(x, w) = x @ wᵀ`` for one forward pass.
Kernel = AbstractContextManager[Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]

#: The classes served, with their decoder layer: plain pre-norm attention + SiLU MLP, the
#: same maths in all three (Qwen2 adds biases to q, k and v; Mistral a sliding window,
#: served only when switched off).
LEAN_CLASSES = {
    "LlamaForCausalLM": "LlamaDecoderLayer",
    "MistralForCausalLM": "MistralDecoderLayer",
    "Qwen2ForCausalLM": "Qwen2DecoderLayer",
}
_FUSED = DerivedCache()


def _rope_type(config: Any) -> str | None:
    params = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    return params.get("rope_type", params.get("type", "default")) if isinstance(params, dict) else None


def _rope_theta(config: Any) -> float:
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and "rope_theta" in params:
        return float(params["rope_theta"])
    return float(config.rope_theta)


def lean_eligible(module: torch.nn.Module) -> bool:
    """True when :class:`LeanBody` computes exactly `module`'s body (see the module docstring)."""
    cls = type(module)
    if cls.__name__ not in LEAN_CLASSES or not cls.__module__.startswith("transformers.models."):
        return False
    config = getattr(module, "config", None)
    body = getattr(module, "model", None)
    if config is None or body is None or not hasattr(body, "layers") or len(body.layers) == 0:
        return False
    param = next(module.parameters())
    if param.device.type != "cpu" or param.dtype not in (torch.float32, torch.bfloat16):
        return False
    if _rope_type(config) != "default" or getattr(config, "hidden_act", None) != "silu":
        return False
    if getattr(config, "pretraining_tp", 1) != 1 or getattr(config, "sliding_window", None):
        return False
    if any(t != "full_attention" for t in getattr(config, "layer_types", None) or ()):
        return False
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    layer_class = LEAN_CLASSES[cls.__name__]
    return heads % kv == 0 and all(_plain_layer(layer, layer_class) for layer in body.layers)


def _plain_layer(layer: torch.nn.Module, layer_class: str) -> bool:
    """A decoder layer of `layer_class` whose projections are plain ``nn.Linear`` (not
    quantised or replaced: their weights are read directly), without biases except on
    all of q, k and v at once."""
    if type(layer).__name__ != layer_class:
        return False
    qkv, gate_up = _fused_groups(layer)
    parts = (*qkv, *gate_up, layer.self_attn.o_proj, layer.mlp.down_proj)
    if not all(type(p) is torch.nn.Linear for p in parts):
        return False
    with_bias = [p.bias is not None for p in parts]
    return not any(with_bias[3:]) and len(set(with_bias[:3])) == 1


def _fused_groups(layer: torch.nn.Module) -> tuple[tuple[torch.nn.Linear, ...], tuple[torch.nn.Linear, ...]]:
    """The projections one decoder layer runs as one product each: (q, k, v) and (gate, up)."""
    a, m = layer.self_attn, layer.mlp
    return (a.q_proj, a.k_proj, a.v_proj), (m.gate_proj, m.up_proj)


def fused_bytes(module: torch.nn.Module) -> int:
    """Bytes of the fused weights :class:`LeanBody` would still have to make for `module`."""
    return sum(
        p.weight.numel() * p.weight.element_size()
        for layer in module.model.layers
        if _FUSED.peek(layer.self_attn.q_proj.weight, _fused_sources(layer)) is None
        for parts in _fused_groups(layer)
        for p in parts
    )


def _fused_sources(layer: torch.nn.Module) -> list[torch.Tensor | None]:
    """Every tensor the fused weights of `layer` are made from."""
    (q, k, v), (gate, up) = _fused_groups(layer)
    norms = (layer.input_layernorm.weight, layer.post_attention_layernorm.weight)
    return [*(p.weight for p in (q, k, v, gate, up)), *(p.bias for p in (q, k, v)), *norms]


def _fused(layer: torch.nn.Module, head_dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """`layer`'s (q, k, v) and (gate, up) weights as one matrix each, rearranged (made once),
    and the q, k, v biases as one float32 vector (None without biases).

    Each is multiplied by the RMS-norm weight in front of it (``W·(w ⊙ x) = (W·diag w)·x``),
    the q rows by the attention scale 1/√d, and the q and k rows of every head are put in
    interleaved order (dimension j and j + d/2 side by side) so that the rotary embedding
    is one complex product; q·k is unchanged, since both are permuted alike. The products
    are taken in float32 and rounded once to the model's dtype; the biases get the same
    order and scale (the norm is not theirs) and stay float32. Kept for q's weight while
    every source is unchanged (:mod:`.derived`), so every body built from the same layer (a
    layer-skip draft) shares them, and a model converted in place gets new ones.
    """
    return _FUSED.get(layer.self_attn.q_proj.weight, _fused_sources(layer), lambda: _fuse(layer, head_dim))


def _fuse(layer: torch.nn.Module, head_dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    (q, k, v), (gate, up) = _fused_groups(layer)
    d = head_dim
    order = torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=1).reshape(-1)

    def interleaved(w: torch.Tensor) -> torch.Tensor:
        return w.float().view(-1, d, *w.shape[1:])[:, order].reshape(w.shape)

    dtype = q.weight.dtype
    with torch.no_grad():  # in place where possible: fewer float32 temporaries
        qkv = torch.cat([interleaved(q.weight), interleaved(k.weight), v.weight.float()])
        qkv[: q.weight.shape[0]].div_(math.sqrt(d))
        qkv.mul_(layer.input_layernorm.weight.float())
        gate_up = torch.cat([gate.weight.float(), up.weight.float()])
        gate_up.mul_(layer.post_attention_layernorm.weight.float())
        bias = None
        if q.bias is not None:
            bias = torch.cat([interleaved(q.bias) / math.sqrt(d), interleaved(k.bias), v.bias.float()])
    return qkv.to(dtype).contiguous(), gate_up.to(dtype).contiguous(), bias


class LeanCache:
    """Keys and values of one sequence for every layer, float32, in buffers that double as needed
    (the lean bodies' cache and the trained draft head's: a step writes in place, where
    transformers' ``DynamicCache`` concatenates a new tensor per layer)."""

    def __init__(
        self, layers: int, kv_heads: int, head_dim: int, device: torch.device | str | None = None
    ) -> None:
        self.length = 0
        self.keys = torch.zeros(layers, kv_heads, 0, head_dim, device=device)
        self.values = torch.zeros(layers, kv_heads, 0, head_dim, device=device)

    def reserve(self, total: int) -> None:
        """Make room for `total` positions."""
        have = self.keys.shape[2]
        if total <= have:
            return
        size = max(total, 2 * have, 64)
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_zeros(old.shape[0], old.shape[1], size, old.shape[3])
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)

    def crop(self, max_length: int) -> None:
        """Keep the first `max_length` positions (negative: drop that many), like ``DynamicCache``."""
        self.length = max(self.length + max_length, 0) if max_length < 0 else min(self.length, max_length)

    def keep(self, positions: list[int]) -> None:
        """Keep only the entries at `positions` (increasing), moved to the front (tree compaction)."""
        idx = torch.tensor(positions, dtype=torch.long, device=self.keys.device)
        for name in ("keys", "values"):
            buf = getattr(self, name)
            buf[:, :, : len(positions)] = buf[:, :, idx]
        self.length = len(positions)


class LeanPass:
    """What the lean bodies share: a forward pass of `ids` on one kernel choice, and the cache.

    `kernel(rows, dtype)` is the caller's choice of matrix product ``f(x, w) = x @ wᵀ`` for a
    forward pass of `rows` tokens, as a context manager (``kernels.row_kernel``). A subclass sets
    ``layers`` and ``head_dim`` and implements ``_run(ids, cache, linear, positions, mask)``, which
    writes the keys and values of `ids` after the cache's ``length`` (room reserved; the length
    moved after).
    """

    layers: list
    head_dim: int

    def __init__(self, module: torch.nn.Module, kernel: Callable[[int, torch.dtype], Kernel]) -> None:
        config = self.config = module.config
        self.kernel = kernel
        self.dtype = next(module.parameters()).dtype
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.eps = float(config.rms_norm_eps)
        self.embed = module.model.embed_tokens.weight
        self.inter = int(config.intermediate_size)

    def new_cache(self) -> LeanCache:
        return LeanCache(len(self.layers), self.kv_heads, self.head_dim)

    @torch.inference_mode()
    def __call__(
        self,
        input_ids: torch.Tensor,
        cache: LeanCache,
        positions: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Final hidden states (n, hidden) of the tokens `input_ids` (1, n); `cache` is updated.

        A tree forward passes each token's `positions` (prefix length + depth) and its
        boolean `mask` (n, cache length after the call) over the cache; by default
        positions follow the cache and the mask is causal.
        """
        ids = input_ids.reshape(-1)
        n, start = int(ids.shape[0]), cache.length
        cache.reserve(start + n)
        with self.kernel(n, self.dtype) as linear:
            hidden = self._run(ids, cache, linear, positions, mask)
        cache.length = start + n
        return hidden

    @staticmethod
    def _causal(start: int, n: int, tree_mask: torch.Tensor | None) -> torch.Tensor | None:
        """The tree's mask, else causal over `start` cached and `n` new positions (None for one
        new token: it sees every key)."""
        if tree_mask is not None:
            return tree_mask
        return torch.ones(n, start + n, dtype=torch.bool).tril(start) if n > 1 else None


class LeanBody(LeanPass):
    """The body of an eligible model (:func:`lean_eligible`); weights shared or fused once."""

    def __init__(self, module: torch.nn.Module, kernel: Callable[[int, torch.dtype], Kernel]) -> None:
        super().__init__(module, kernel)
        config, body = module.config, module.model
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.norm = body.norm.weight
        self.layers = [
            (*_fused(layer, self.head_dim), layer.self_attn.o_proj.weight, layer.mlp.down_proj.weight)
            for layer in body.layers
        ]
        d = self.head_dim
        self.inv_freq = 1.0 / (_rope_theta(config) ** (torch.arange(0, d, 2, dtype=torch.float) / d))
        self._turns = torch.zeros(0, d // 2, dtype=torch.complex64)

    def weights(self) -> list[torch.Tensor]:
        """The matrices a forward pass multiplies by (for the kernel choice)."""
        return [w for qkv, gate_up, _bias, out, down in self.layers for w in (qkv, gate_up, out, down)]

    def _rotary(self, start: int, end: int) -> torch.Tensor:
        """The rotary embedding of positions start … end−1 as unit complex numbers (n, 1, d/2)."""
        if end > self._turns.shape[0]:
            positions = torch.arange(max(end, 2 * self._turns.shape[0], 256), dtype=torch.float)
            angles = positions[:, None] * self.inv_freq
            self._turns = torch.polar(torch.ones_like(angles), angles)
        return self._turns[start:end, None]

    def _rms(self, x: torch.Tensor) -> torch.Tensor:
        """RMS-normalised `x` without the norm's weight (folded into the next product).

        For bfloat16 `x` torch sums in float32 and rounds once, as transformers' norm does.
        """
        return F.rms_norm(x, (x.shape[-1],), None, self.eps)

    def _run(
        self,
        ids: torch.Tensor,
        cache: LeanCache,
        linear: Callable,
        positions: torch.Tensor | None = None,
        tree_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        n, start = int(ids.shape[0]), cache.length
        end = start + n
        if positions is None:
            turns = self._rotary(start, end)
        else:
            turns = self._rotary(0, int(positions.max()) + 1)[positions.reshape(-1)]
        h, kv, d, inter = self.heads, self.kv_heads, self.head_dim, self.inter
        qk = (h + kv) * d
        mask = self._causal(start, n, tree_mask)
        keys, values = cache.keys, cache.values
        x = self.embed[ids]
        layers = self.layers[: self.config.num_hidden_layers]  # as transformers' models do
        for i, (qkv, gate_up, bias, out, down) in enumerate(layers):
            y = linear(self._rms(x), qkv).float()
            if bias is not None:
                y = y + bias
            # rotary embedding of q and k at once: a complex product on interleaved pairs
            r = torch.view_as_complex(y[:, :qk].reshape(n, h + kv, d // 2, 2)) * turns
            r = torch.view_as_real(r).reshape(n, h + kv, d)
            keys[i, :, start:end] = r[:, h:].transpose(0, 1)
            values[i, :, start:end] = y[:, qk:].view(n, kv, d).transpose(0, 1)
            att = F.scaled_dot_product_attention(
                r[:, :h].transpose(0, 1)[None],
                keys[i, :, :end][None],
                values[i, :, :end][None],
                attn_mask=mask,
                scale=1.0,  # folded into the q rows
                enable_gqa=True,
            )
            x = x + linear(att[0].transpose(0, 1).reshape(n, h * d).to(self.dtype), out)
            y = linear(self._rms(x), gate_up)
            x = x + linear(F.silu(y[:, :inter]) * y[:, inter:], down)
        return self.norm * self._rms(x)
