"""A lean decoder body for Gemma 3 text models on CPU: the same maths as transformers', fewer operations.

transformers' Gemma 3 layer runs six RMS norms (each upcast, normalised, scaled by 1 + w,
cast back), a rotary table per layer type, cache objects and mask building around four
matrix products; on a CPU decode step of Gemma-3-270M that costs more than the products do.
:class:`GemmaLeanBody` runs each layer as: one product for q, k and v (the input norm's
1 + w folded in), the per-head q and k norms, the rotary embedding as one complex product
(its own base for sliding and full layers), one ``scaled_dot_product_attention`` over a
float32 key/value buffer (``lean.LeanCache``) with the sliding window as a mask, the
output product and its norm, one product for gate and up (the pre-feedforward norm's 1 + w
folded in), GELU (tanh), the down product and its norm. float32 logits equal transformers'
up to rounding (tested on the bundled Gemma-3-270M and on tiny random models).

Only :func:`gemma_lean_eligible` models qualify: ``Gemma3ForCausalLM`` on CPU in float32 or
bfloat16, default rotary embeddings, GELU (tanh), no logit or attention soft-capping, causal
attention, plain bias-free ``nn.Linear`` projections.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from specdec_core.models.hf.derived import DerivedCache
from specdec_core.models.hf.lean import Kernel, LeanCache, LeanPass

_FUSED = DerivedCache()
LAYER_CLASS = "Gemma3DecoderLayer"


def _rope_bases(config: Any) -> dict[str, float] | None:
    """Rotary base per layer type ("sliding_attention", "full_attention"), None unless default."""
    params = getattr(config, "rope_parameters", None)
    if not isinstance(params, dict):
        return None
    out = {}
    for kind in set(config.layer_types):
        p = params.get(kind)
        if not isinstance(p, dict) or p.get("rope_type", "default") != "default" or "rope_theta" not in p:
            return None
        out[kind] = float(p["rope_theta"])
    return out


def gemma_lean_eligible(module: torch.nn.Module) -> bool:
    """True when :class:`GemmaLeanBody` computes exactly `module`'s body (see the module docstring)."""
    cls = type(module)
    if cls.__name__ != "Gemma3ForCausalLM" or not cls.__module__.startswith("transformers.models."):
        return False
    config, body = getattr(module, "config", None), getattr(module, "model", None)
    if config is None or body is None or len(getattr(body, "layers", ())) == 0:
        return False
    param = next(module.parameters())
    if param.device.type != "cpu" or param.dtype not in (torch.float32, torch.bfloat16):
        return False
    if getattr(config, "hidden_activation", None) != "gelu_pytorch_tanh" or _rope_bases(config) is None:
        return False
    if config.attn_logit_softcapping is not None or config.final_logit_softcapping is not None:
        return False
    if getattr(config, "use_bidirectional_attention", False) or getattr(config, "attention_bias", False):
        return False
    if config.num_attention_heads % config.num_key_value_heads:
        return False
    return all(_plain_layer(layer) for layer in body.layers)


def _plain_layer(layer: torch.nn.Module) -> bool:
    if type(layer).__name__ != LAYER_CLASS:
        return False
    a, m = layer.self_attn, layer.mlp
    parts = (a.q_proj, a.k_proj, a.v_proj, a.o_proj, m.gate_proj, m.up_proj, m.down_proj)
    return all(type(p) is torch.nn.Linear and p.bias is None for p in parts)


def _sources(layer: torch.nn.Module) -> list[torch.Tensor]:
    a, m = layer.self_attn, layer.mlp
    weights = (a.q_proj, a.k_proj, a.v_proj, m.gate_proj, m.up_proj)
    norms = (layer.input_layernorm, layer.pre_feedforward_layernorm, a.q_norm, a.k_norm)
    return [*(p.weight for p in weights), *(n.weight for n in norms)]


def _fuse(layer: torch.nn.Module, head_dim: int) -> tuple[torch.Tensor, ...]:
    """(q, k, v) and (gate, up) as one matrix each with their norm's 1 + w folded in (taken in
    float32, rounded once), the q and k rows of each head in interleaved order (j beside
    j + d/2, so the rotary embedding is one complex product), and the q and k norms' 1 + w
    in that order, float32."""
    a, m = layer.self_attn, layer.mlp
    d = head_dim
    order = torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=1).reshape(-1)

    def interleaved(w: torch.Tensor) -> torch.Tensor:
        return w.float().view(-1, d, *w.shape[1:])[:, order].reshape(w.shape)

    dtype = a.q_proj.weight.dtype
    with torch.no_grad():
        qkv = torch.cat([interleaved(a.q_proj.weight), interleaved(a.k_proj.weight), a.v_proj.weight.float()])
        qkv.mul_(1.0 + layer.input_layernorm.weight.float())
        gate_up = torch.cat([m.gate_proj.weight.float(), m.up_proj.weight.float()])
        gate_up.mul_(1.0 + layer.pre_feedforward_layernorm.weight.float())
        q_norm = (1.0 + a.q_norm.weight.float())[order]
        k_norm = (1.0 + a.k_norm.weight.float())[order]
    return qkv.to(dtype).contiguous(), gate_up.to(dtype).contiguous(), q_norm, k_norm


class GemmaLeanBody(LeanPass):
    """The body of an eligible Gemma 3 model (:func:`gemma_lean_eligible`); weights shared or fused
    once."""

    def __init__(self, module: torch.nn.Module, kernel: Callable[[int, torch.dtype], Kernel]) -> None:
        super().__init__(module, kernel)
        config, body = module.config, module.model
        self.head_dim = int(config.head_dim)
        self.scale = float(config.query_pre_attn_scalar) ** -0.5
        self.window = int(config.sliding_window)
        self.embed_scale = torch.tensor(config.hidden_size**0.5).to(self.dtype)
        self.norm = 1.0 + body.norm.weight.float()
        self.layers = []
        for i, layer in enumerate(body.layers):
            qkv, gate_up, q_norm, k_norm = _FUSED.get(
                layer.self_attn.q_proj.weight,
                _sources(layer),
                lambda layer=layer: _fuse(layer, self.head_dim),
            )
            post_attn = 1.0 + layer.post_attention_layernorm.weight.float()
            post_ff = 1.0 + layer.post_feedforward_layernorm.weight.float()
            out, down = layer.self_attn.o_proj.weight, layer.mlp.down_proj.weight
            kind = config.layer_types[i]
            self.layers.append((qkv, gate_up, out, down, q_norm, k_norm, post_attn, post_ff, kind))
        d = self.head_dim
        self.inv_freq = {
            kind: 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float) / d))
            for kind, base in (_rope_bases(config) or {}).items()
        }
        self._turns = {kind: torch.zeros(0, d // 2, dtype=torch.complex64) for kind in self.inv_freq}

    def weights(self) -> list[torch.Tensor]:
        """The matrices a forward pass multiplies by (for the kernel choice)."""
        return [w for layer in self.layers for w in layer[:4]]

    def _rotary(self, kind: str, positions: torch.Tensor) -> torch.Tensor:
        """Unit complex numbers (n, 1, d/2) rotating q and k at `positions` for a layer of `kind`."""
        top = int(positions.max()) + 1
        if top > self._turns[kind].shape[0]:
            steps = torch.arange(max(top, 2 * self._turns[kind].shape[0], 256), dtype=torch.float)
            angles = steps[:, None] * self.inv_freq[kind]
            self._turns[kind] = torch.polar(torch.ones_like(angles), angles)
        return self._turns[kind][positions][:, None]

    def _rms(self, x: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        """Gemma's RMS norm in float32 (times `weight`, its 1 + w, when given)."""
        return F.rms_norm(x.float(), (x.shape[-1],), weight, self.eps)

    def _masks(
        self, start: int, n: int, positions: torch.Tensor, tree_mask: torch.Tensor | None
    ) -> dict[str, torch.Tensor | None]:
        """The boolean attention mask per layer kind: causal (or the tree's), and for sliding
        layers only keys less than the window behind the query (by position)."""
        end = start + n
        full = self._causal(start, n, tree_mask)
        key_pos = torch.cat([torch.arange(start), positions]) if tree_mask is not None else torch.arange(end)
        if int(positions.max()) - self.window < 0 and tree_mask is None:
            return {"full_attention": full, "sliding_attention": full}
        near = key_pos[None, :] > positions[:, None] - self.window
        sliding = near if full is None else (near & full)
        return {"full_attention": full, "sliding_attention": sliding}

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
        pos = torch.arange(start, end) if positions is None else positions.reshape(-1)
        turns = {kind: self._rotary(kind, pos) for kind in self.inv_freq}
        masks = self._masks(start, n, pos, tree_mask)
        h, kv, d, inter = self.heads, self.kv_heads, self.head_dim, self.inter
        keys, values = cache.keys, cache.values
        x = (self.embed[ids] * self.embed_scale).float()
        layers = self.layers[: self.config.num_hidden_layers]
        for i, (qkv, gate_up, out, down, q_norm, k_norm, post_attn, post_ff, kind) in enumerate(layers):
            y = linear(self._rms(x).to(self.dtype), qkv).float()
            q = self._rms(y[:, : h * d].view(n, h, d), q_norm)
            k = self._rms(y[:, h * d : (h + kv) * d].view(n, kv, d), k_norm)
            qk = torch.view_as_complex(torch.cat([q, k], dim=1).reshape(n, h + kv, d // 2, 2)) * turns[kind]
            qk = torch.view_as_real(qk).reshape(n, h + kv, d)
            keys[i, :, start:end] = qk[:, h:].transpose(0, 1)
            values[i, :, start:end] = y[:, (h + kv) * d :].view(n, kv, d).transpose(0, 1)
            att = F.scaled_dot_product_attention(
                qk[:, :h].transpose(0, 1)[None],
                keys[i, :, :end][None],
                values[i, :, :end][None],
                attn_mask=masks[kind],
                scale=self.scale,
                enable_gqa=True,
            )
            o = linear(att[0].transpose(0, 1).reshape(n, h * d).to(self.dtype), out)
            x = x + self._rms(o, post_attn).to(self.dtype).float()
            y = linear(self._rms(x).to(self.dtype), gate_up)
            z = linear(F.gelu(y[:, :inter], approximate="tanh") * y[:, inter:], down)
            x = x + self._rms(z, post_ff).to(self.dtype).float()
        return self._rms(x, self.norm).to(self.dtype)


def fused_bytes_gemma(module: torch.nn.Module) -> int:
    """Bytes of the fused weights :class:`GemmaLeanBody` would still have to make for `module`."""
    total = 0
    for layer in module.model.layers:
        if _FUSED.peek(layer.self_attn.q_proj.weight, _sources(layer)) is None:
            a, m = layer.self_attn, layer.mlp
            total += sum(
                p.weight.numel() * p.weight.element_size()
                for p in (a.q_proj, a.k_proj, a.v_proj, m.gate_proj, m.up_proj)
            )
    return total
