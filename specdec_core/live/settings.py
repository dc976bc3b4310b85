"""Settings of the live pages' runs: what every run shares, and what a live run adds.

:class:`DecodeSettings` holds γ, the sampling transforms, the seed and the length, which the
live page and the draft race (``specdec_core.live.race.RaceSettings``) both use; its fields are
keyword-only, so a subclass can put its own required fields first. :class:`LiveSettings`
adds the models, the chat template and the baseline comparison, and reads itself back from
a trace file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.sampling import SamplingConfig
from specdec_core.token_tree import node_budget


@dataclass(frozen=True, kw_only=True)
class DecodeSettings:
    """γ (fixed or adaptive) or a tree shape, the sampling transforms of p and q alike, the seed
    and the length."""

    gamma: int = 4
    adaptive: bool = False
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0
    max_new_tokens: int = 64
    #: a token tree (b_1, …, b_D) instead of a chain of γ drafts; () = a chain
    tree: tuple[int, ...] = ()

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def sampling(self) -> SamplingConfig:
        return SamplingConfig(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)


@dataclass(frozen=True)
class LiveSettings(DecodeSettings):
    """Everything that shapes a live run: models, prompt handling, γ and the sampling transforms."""

    target: TargetSpec
    draft: DraftSpec
    chat: bool = True
    compare: bool = True

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LiveSettings:
        """Settings from their ``dataclasses.asdict``; ValueError / TypeError for anything malformed."""
        values = dict(data)
        values["target"] = TargetSpec(**values["target"])
        values["draft"] = DraftSpec(**values["draft"])
        if "tree" in values:
            tree = values["tree"]
            if not isinstance(tree, list | tuple) or not all(isinstance(b, int) and b >= 1 for b in tree):
                raise ValueError("tree must be a list of whole numbers ≥ 1 (children per depth).")
            values["tree"] = tuple(tree)
        for name, kind in _SETTING_TYPES.items():
            value = values.get(name)
            if name in values and (not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)):
                raise ValueError(f"{name} has the wrong type ({type(value).__name__}).")
        settings = cls(**values)
        settings.sampling()  # validates temperature, top-k and top-p
        return settings


_SETTING_TYPES: dict[str, type | tuple[type, ...]] = {
    "chat": bool,
    "gamma": int,
    "adaptive": bool,
    "temperature": (int, float),
    "top_k": int,
    "top_p": (int, float),
    "seed": int,
    "max_new_tokens": int,
    "compare": bool,
}


#: Draft shapes the live pages offer: "chain" (γ drafts in a row) or a tree b_1-b_2-….
TREE_SHAPES: tuple[str, ...] = ("chain", "2-2", "3-1", "2-2-1", "3-2-1", "4-2-1", "2-2-2")


def shape_nodes(name: str) -> int:
    """Drafted nodes per round of a shape ("chain": 0, the chain's γ decides)."""
    shape = parse_shape(name)
    return node_budget(shape) if shape else 0


def parse_shape(name: str) -> tuple[int, ...]:
    """ "chain" → (); "3-2-1" → (3, 2, 1)."""
    return () if name == "chain" else tuple(int(b) for b in name.split("-"))
