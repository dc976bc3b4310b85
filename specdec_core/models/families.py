"""The model families a page can choose as its target, each one entry in one registry.

A :class:`Family` says everything the app needs to offer a family: its key and English label,
how it loads (``load(source, progress)``, `source` being the id or folder a custom family
needs), whether its prompts go through a chat template, how many layers it has without reading
its weights, the drafts it offers, whether it needs a typed id or folder, whether it is warmed
up after loading, and whether it encodes any text. The live page, the draft race, the Compare
page, the server's rules and the benches read :func:`families`; a new family is one
:func:`register` call (and, for its name in another language, its strings). Loaders import
torch only when they run, so the toy chain stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from specdec_core.models import layer_count

#: ``progress(fraction in [0, 1], message)`` while a model loads.
Progress = Callable[[float, str], None]
#: The draft kinds of a transformer family: lookup, its own copies, the shipped heads, any model.
TRANSFORMER_DRAFTS: tuple[str, ...] = ("ngram", "bf16", "layerskip", "head", "medusa", "custom")


@dataclass(frozen=True)
class Family:
    """One family of targets (see the module's text)."""

    key: str
    label: str
    load: Callable[[str, Progress | None], Any]
    layers: Callable[[str], int | None]
    drafts: tuple[str, ...]
    chat: bool = True
    #: loads from an id or folder the user types (a custom model); the others need none
    needs_source: bool = False
    warm: bool = True
    #: encodes any text (the Compare page's prompts); the toy chain knows only its words
    free_text: bool = True


def _bundled(source: str, progress: Progress | None) -> Any:
    from specdec_core.models.bundled import load_bundled

    return load_bundled(progress=progress)


def _gemma(source: str, progress: Progress | None) -> Any:
    from specdec_core.models.bundled import load_gemma

    return load_gemma(progress=progress)


def _toy(source: str, progress: Progress | None) -> Any:
    from specdec_core.models.toy_words import toy_target

    return toy_target()


def _custom(source: str, progress: Progress | None) -> Any:
    from specdec_core.models.hf import HFCausalLM

    return HFCausalLM.load(source, progress=progress)


_REGISTRY: dict[str, Family] = {}


def register(family: Family) -> None:
    """Offer `family` from now on (a family of the same key is replaced; ``custom`` stays last)."""
    _REGISTRY[family.key] = family
    if "custom" in _REGISTRY and family.key != "custom":
        _REGISTRY["custom"] = _REGISTRY.pop("custom")


def unregister(key: str) -> None:
    """Stop offering the family `key` (tests that registered one)."""
    _REGISTRY.pop(key, None)


def families() -> tuple[Family, ...]:
    """Every family offered, in the order the pages list them."""
    return tuple(_REGISTRY.values())


def family(key: str) -> Family:
    """The family `key`; KeyError naming the known ones otherwise."""
    try:
        return _REGISTRY[key]
    except KeyError:
        raise KeyError(f"unknown target {key!r}; choose one of {', '.join(_REGISTRY)}") from None


_BUILT_IN = (
    Family(
        "bundled",
        "SmolLM2-135M-Instruct (bundled)",
        _bundled,
        lambda source: layer_count.bundled_layers(),
        TRANSFORMER_DRAFTS,
    ),
    # the shipped heads read SmolLM2's features, so they do not fit Gemma; SmolLM2 drafts for
    # it across the two tokenizers instead
    Family(
        "gemma",
        "Gemma-3-270M (base)",
        _gemma,
        lambda source: layer_count.gemma_layers(),
        ("ngram", "bf16", "layerskip", "smollm2", "custom"),
        chat=False,
    ),
    Family(
        "toy",
        "Toy Markov pair",
        _toy,
        lambda source: None,
        ("toy_draft", "ngram", "custom"),
        chat=False,
        warm=False,
        free_text=False,
    ),
    Family(
        "custom",
        "Custom transformers model",
        _custom,
        layer_count.source_layers,
        TRANSFORMER_DRAFTS,
        needs_source=True,
    ),
)
for _family in _BUILT_IN:
    register(_family)
