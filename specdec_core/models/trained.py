"""What the two trained drafts (models.head, models.medusa) share: the config and fingerprint
of the target they were trained for, the check that refuses any other target, their weights
files, binding to one target (its vocabulary and EOS, the LM-head rows of the head
vocabulary, the model card's measured step cost), and the shell of their sessions (the bound
target session, the token tree being fed, rows over the target's vocabulary)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from specdec_core.token_tree import TreeSegment

#: Reads a trained draft's file: (module with a ``cfg``, vocabulary ids, model card).
Reader = Callable[[Path], tuple[nn.Module, torch.Tensor, dict[str, Any]]]


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
    """Base of a trained draft bound to one target model (its features and LM head).

    A subclass names its ``kind`` (also its display name) and ``made_by`` (how its file is
    made, said when it is missing), and builds itself with :meth:`open`.
    """

    kind: str
    made_by: str

    def open(self, target: Any, path: Path | str, read: Reader) -> nn.Module:
        """The trained module in the file at `path` (read by `read`), on the target's device,
        with this draft bound to `target` (:meth:`bind`)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"No {self.kind} at {path}; {self.made_by}.")
        module, vocab, card = read(path)
        device = self.bind(target, module.cfg, vocab, card, path)
        self.name = f"{self.kind} ({path.stem})"
        self.trained = module.to(device)
        return self.trained

    def bind(
        self, target: Any, cfg: HeadConfig, vocab: torch.Tensor, card: dict[str, Any], path: Path
    ) -> torch.device:
        """Check `target` against `cfg`, keep it with the card and the head vocabulary's LM-head
        rows; returns the target's device."""
        check_target(cfg, target)
        module = target.module
        device = module.get_output_embeddings().weight.device
        self.target = target
        self.card = card
        self.path = path
        self.vocab_ids = vocab.to(device)
        with torch.inference_mode():
            self.lm_rows = module.get_output_embeddings().weight[self.vocab_ids].float().clone()
        return device

    @property
    def parameters(self) -> int:
        """The trained module's own parameters (the target's LM-head rows not counted)."""
        return sum(p.numel() for p in self.trained.parameters())

    def shape(self) -> str:
        """What its ``repr`` says besides the file: the parameter count (a subclass adds to it)."""
        return f"{self.parameters / 1e6:.1f} M parameters"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path.name}, {self.shape()})"

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


class TrainedSession:
    """The shell of a trained draft's session: its tokens, the bound target session it reads
    features from (``bind_target``), the token tree being fed and its compaction, and rows
    spread over the target's vocabulary. A subclass implements ``logits``."""

    def __init__(self, draft: TrainedDraft) -> None:
        self.draft = draft
        self.tokens: list[int] = []
        self.target: Any = None
        self._tree: TreeSegment | None = None

    def bind_target(self, target_session: Any) -> None:
        """Read features from `target_session` (it must serve ``features(start, stop)``)."""
        if not hasattr(target_session, "features"):
            raise TypeError(
                f"The {self.draft.kind} draft needs a target session that serves its features (an HF model)."
            )
        self.target = target_session

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> torch.Tensor:
        raise NotImplementedError

    def extend(self, token_ids: Sequence[int]) -> np.ndarray:
        return self.logits(token_ids).double().numpy()

    def _start_tree(self) -> None:
        """Called before a tree starts after the context (a subclass settles its context first)."""

    def _tree_add(self, ids: list[int], parents: Sequence[int]) -> tuple[Any, Any]:
        """Add tree nodes (``token_tree.TreeSegment`` parents; -1 starts a tree after the
        context): their positions (root + depth) and attention mask."""
        if len(parents) != len(ids) or not ids:
            raise ValueError("a tree forward needs one parent per token, and at least one token.")
        if parents[0] == -1:
            self._start_tree()
            self._tree = TreeSegment(len(self.tokens))
        if self._tree is None:
            raise ValueError("a tree starts with its root (parent -1).")
        return self._tree.add(parents)

    def _compacted(self, keep: Sequence[int]) -> list[int]:
        """Keep the context and the tree path `keep` (tree indices, root first) of the tokens;
        the indices kept, for the subclass's own per-position state."""
        if self._tree is None:
            raise ValueError("no tree to compact.")
        kept = self._tree.kept(keep)
        self.tokens = [self.tokens[i] for i in kept]
        self._tree = None
        return kept

    def _spread(self, small: torch.Tensor) -> torch.Tensor:
        """Rows over the head vocabulary (n, its size) as float32 rows over the target's
        vocabulary, on the CPU: −inf elsewhere, so those tokens are never proposed."""
        draft = self.draft
        out = torch.full((small.shape[0], draft.vocab_size), -math.inf, device=small.device)
        out[:, draft.vocab_ids] = small
        return out.cpu()
