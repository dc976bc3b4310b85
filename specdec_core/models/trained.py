"""What the two trained drafts (models.head, models.medusa) share: the config and fingerprint
of the target they were trained for, the check that refuses any other target, their weights
files, and binding to one target (its vocabulary and EOS, the LM-head rows of the head
vocabulary, the model card's measured step cost)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn


class HeadMismatchError(ValueError):
    """The head was trained for another target (its vocabulary, width or weights differ)."""


@dataclass(frozen=True)
class HeadConfig:
    """Shape of the head and the fingerprint of the target it was trained for."""

    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    rope_theta: float
    eps: float
    target_name: str
    target_vocab: int
    target_layers: int
    target_fingerprint: float

    @classmethod
    def for_target(cls, module: nn.Module, name: str) -> HeadConfig:
        c = module.config
        rope = getattr(c, "rope_parameters", None) or {}
        theta = float(rope.get("rope_theta", getattr(c, "rope_theta", 10000.0)))
        return cls(
            hidden=c.hidden_size,
            heads=c.num_attention_heads,
            kv_heads=c.num_key_value_heads,
            head_dim=getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads,
            intermediate=c.intermediate_size,
            rope_theta=theta,
            eps=float(c.rms_norm_eps),
            target_name=name,
            target_vocab=c.vocab_size,
            target_layers=c.num_hidden_layers,
            target_fingerprint=fingerprint(module),
        )


def fingerprint(module: nn.Module) -> float:
    """A number that changes with the target's output weights (sum of a few LM-head rows)."""
    w = module.get_output_embeddings().weight.detach()
    return round(float(w[:64].double().abs().sum()), 3)


def check_target(cfg: HeadConfig, target: Any) -> None:
    """Raise HeadMismatchError unless `target` is the model a head of config `cfg` was trained for."""
    expected = HeadConfig.for_target(target.module, cfg.target_name)
    found = (expected.target_vocab, expected.hidden, expected.target_layers, expected.target_fingerprint)
    wanted = (cfg.target_vocab, cfg.hidden, cfg.target_layers, cfg.target_fingerprint)
    if found != wanted:
        raise HeadMismatchError(
            f"This draft head was trained for {cfg.target_name} (vocabulary {cfg.target_vocab}, width "
            f"{cfg.hidden}, {cfg.target_layers} layers); the target {getattr(target, 'name', '?')} "
            f"differs (vocabulary {found[0]}, width {found[1]}, {found[2]} layers"
            f"{', other weights' if found[:3] == wanted[:3] else ''}). Pick another draft."
        )


def write_weights(
    module: nn.Module,
    cfg: HeadConfig,
    vocab_ids: torch.Tensor,
    path: Path,
    card: dict[str, Any] | None = None,
    meta: dict[str, str] | None = None,
) -> None:
    """A trained head's own weights in float16 with its vocabulary ids, config and card (the
    LM-head rows are the target's and not stored); `meta` adds metadata entries."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().to(torch.float16).contiguous() for k, v in module.state_dict().items()}
    tensors["vocab_ids"] = vocab_ids.to(torch.int32).contiguous()
    metadata = {"config": json.dumps(asdict(cfg)), "card": json.dumps(card or {}), **(meta or {})}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=metadata)


def read_weights(path: Path) -> tuple[HeadConfig, dict[str, torch.Tensor], torch.Tensor, dict[str, str]]:
    """(config, weights in float32, vocabulary ids, metadata) of a file :func:`write_weights` wrote."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no __iter__
    if "config" not in meta:
        raise HeadMismatchError(f"{path} is not a draft-head file (no config in its metadata).")
    vocab = tensors.pop("vocab_ids").long()
    weights = {k: v.float() for k, v in tensors.items()}
    return HeadConfig(**json.loads(meta["config"])), weights, vocab, meta


def card_cost_ratio(card: dict[str, Any]) -> float | None:
    """A card's measured ``cost_ratio`` (one draft step in target decode steps), or None."""
    value = card.get("cost_ratio")
    return float(value) if isinstance(value, int | float) and value > 0 else None


class TrainedDraft:
    """Base of a trained draft bound to one target model (its features and LM head)."""

    def bind(
        self, target: Any, cfg: HeadConfig, vocab: torch.Tensor, card: dict[str, Any], path: Path
    ) -> torch.device:
        """Check `target` against `cfg`, keep it with the card and the head vocabulary's LM-head
        rows; returns the target's device."""
        check_target(cfg, target)
        module = target.module
        device = module.get_output_embeddings().weight.device
        self.target = target
        self.lock = getattr(target, "lock", None)  # reads the target's weights: one lock for both
        self.card = card
        self.path = path
        self.vocab_ids = vocab.to(device)
        with torch.inference_mode():
            self.lm_rows = module.get_output_embeddings().weight[self.vocab_ids].float().clone()
        return device

    @property
    def vocab_size(self) -> int:
        return self.target.vocab_size

    @property
    def eos_token_id(self) -> int | None:
        return self.target.eos_token_id

    @property
    def cost_ratio(self) -> float | None:
        """One draft step in target decode steps, as the export measured it (the card's
        ``cost_ratio``); None when the card lacks it. The engine's γ controller prices drafts
        with it: the weight-bytes estimate of a model draft does not fit a head whose step is
        mostly small operations."""
        return card_cost_ratio(self.card)
