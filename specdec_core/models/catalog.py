"""Every model a page or bench can choose, targets and drafts, each one entry in one registry.

A :class:`TargetKind` or :class:`DraftKind` says all the app needs to offer a kind: its key (the
grammar of :func:`draft_key` / :func:`parse_draft_key`, one for every page and bench), its
English label (the pages' strings: ``targets.<key>`` / ``drafts.<key>`` in lessons/*/live.toml,
``short.<key>`` in race.toml), what it needs (a typed source, a head, a target's traits), how it
builds and whether it is warmed up, whether a page may offer it, and what pages show differently
for it (a vocabulary of its own words, the captions under its runs). Pages, preload parsing, the
server's rules and the benches read :func:`targets` / :func:`drafts`; a new kind is one
:func:`register` call. Builders import torch only when they run, so the toy chain stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from specdec_core.models import layer_count
from specdec_core.models.toy_words import TOY_WORDS, ToyWordLM, toy_draft, toy_target

#: The suffix of a draft key run as a tree (``bf16~tree``).
TREE_SUFFIX = "~tree"
#: Traits of a target that drafts ask for: a transformer's weights and layers, the features the
#: shipped heads were trained on, a tokenizer SmolLM2-135M drafts across, the toy chain's words.
TRANSFORMER, SMOLLM2_FEATURES = "transformer", "smollm2_features"
SMOLLM2_PAIR, TOY_CHAIN = "smollm2_pair", "toy"


class ChoiceError(ValueError):
    """A draft that cannot go with the chosen target, or a custom choice left empty.

    ``code`` names the case for a translated message: "no_target_source", "no_draft_source",
    "toy_draft", "needs_transformer", "head_mismatch", "no_head" or "unknown".
    """

    def __init__(self, message: str, code: str = "unknown") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class TargetSpec:
    """Which target: ``kind`` a :class:`TargetKind`'s key; ``source`` the id or folder it loads from."""

    kind: str
    source: str = ""


@dataclass(frozen=True)
class DraftSpec:
    """Which draft: ``kind`` a :class:`DraftKind`'s key; ``k`` layers for a depth draft; ``source``
    for a typed one; ``vocab`` > 0 keeps only the target's `vocab` most frequent tokens in the
    draft's head (FR-Spec; 0: the whole head)."""

    kind: str
    k: int = 0
    source: str = ""
    vocab: int = 0


@dataclass(frozen=True)
class TargetKind:
    """One kind of target (see the module's text)."""

    key: str
    label: str
    load: Callable[[str], Any]
    layers: Callable[[str], int | None]
    traits: frozenset[str] = frozenset({TRANSFORMER})
    chat: bool = True
    #: loads from an id or folder the user types (a custom model); the others need none
    needs_source: bool = False
    warm: bool = True
    #: the only words it encodes (shown under the prompt; presets use them); () for any text
    words: tuple[str, ...] = ()
    #: live.toml keys: a caption under its timings, a note under its cache view ("" for none)
    timing_note: str = ""
    cache_note: str = ""
    #: the pages that start on it ("live race law compare")
    defaults: str = ""
    offered: bool = True

    @property
    def free_text(self) -> bool:
        """Whether it encodes any text (the Compare page's prompts)."""
        return not self.words


@dataclass(frozen=True)
class DraftKind:
    """One kind of draft (see the module's text): ``build(target, spec)`` the model."""

    key: str
    label: str
    build: Callable[[Any, DraftSpec], Any]
    #: traits its target must have (one of them: :data:`TRANSFORMER`, …); empty: any target
    needs: frozenset[str] = frozenset()
    #: takes a layer count k (key ``<key>-<k>``); needs a typed source; has a head of its own
    depth: bool = False
    source: bool = False
    head: bool = False
    #: drafts across two tokenizers (the Tokenizers lesson measures the first such pair)
    across: bool = False
    warm: bool = True
    #: its keys on the Compare page's grid
    grid: tuple[str, ...] = ()
    #: the pages that start on it ("live law compare")
    defaults: str = ""
    offered: bool = True

    def fits(self, target: TargetKind) -> bool:
        return not self.needs or bool(self.needs & target.traits)


_TARGETS: dict[str, TargetKind] = {}
_DRAFTS: dict[str, DraftKind] = {}


def register(entry: TargetKind | DraftKind) -> None:
    """Offer `entry` from now on (one of the same key is replaced; a sourced kind stays last)."""
    table: dict[str, Any] = _TARGETS if isinstance(entry, TargetKind) else _DRAFTS
    table[entry.key] = entry
    for key in [k for k, e in table.items() if _sourced(e) and k != entry.key]:
        table[key] = table.pop(key)


def _sourced(entry: TargetKind | DraftKind) -> bool:
    return entry.needs_source if isinstance(entry, TargetKind) else entry.source


def unregister(key: str) -> None:
    """Stop offering the target or draft `key` (tests that registered one)."""
    _TARGETS.pop(key, None)
    _DRAFTS.pop(key, None)


def targets() -> tuple[TargetKind, ...]:
    """Every target offered, in the order the pages list them."""
    return tuple(t for t in _TARGETS.values() if t.offered)


def drafts() -> tuple[DraftKind, ...]:
    """Every draft offered, in the order the pages list them."""
    return tuple(d for d in _DRAFTS.values() if d.offered)


def target(key: str) -> TargetKind:
    """The target `key`; KeyError naming the known ones otherwise."""
    try:
        return _TARGETS[key]
    except KeyError:
        raise KeyError(f"unknown target {key!r}; choose one of {', '.join(_TARGETS)}") from None


def draft(key: str) -> DraftKind:
    """The draft `key`; ChoiceError naming the known ones otherwise."""
    try:
        return _DRAFTS[key]
    except KeyError:
        raise ChoiceError(f"Unknown draft {key!r}; choose one of {', '.join(_DRAFTS)}.") from None


def about(key: str) -> TargetKind:
    """The target `key`, else a transformer's defaults (a kind a saved run names that is no
    longer offered)."""
    return _TARGETS.get(key) or TargetKind(key, key, _custom, layer_count.source_layers, _SMOL)


def drafts_for(target_key: str) -> tuple[str, ...]:
    """The draft kinds that go with a target kind (a transformer's when the kind is unknown)."""
    entry = about(target_key)
    return tuple(d.key for d in drafts() if d.fits(entry))


def target_spec(key: str, source: str = "") -> TargetSpec:
    """The one rule for a chosen target: its `source` (trimmed) counts only for a sourced kind."""
    return TargetSpec(key, source.strip() if about(key).needs_source else "")


def parse_target(item: str) -> TargetSpec:
    """A target named in a list (the server's preload): a kind's key, else the source of the
    first kind that loads from one."""
    entry = _TARGETS.get(item)
    if entry is not None and not entry.needs_source:
        return TargetSpec(item)
    sourced = next(t.key for t in _TARGETS.values() if t.needs_source)
    return TargetSpec(sourced, item)


def chat_for(kind: str, asked: bool) -> bool:
    """The one rule for the chat template: when asked, unless the target's kind has none."""
    return bool(asked) and about(kind).chat


def cross_pair() -> tuple[TargetSpec, DraftSpec]:
    """The first target and draft offered that draft across two tokenizers, neither typed."""
    return next(
        (TargetSpec(t.key), DraftSpec(d.key))
        for d in drafts()
        if d.across and not d.source
        for t in targets()
        if d.fits(t) and not t.needs_source
    )


def default_target(page: str) -> str:
    """The target `page` starts on (else the first offered)."""
    return next((t.key for t in targets() if page in t.defaults.split()), targets()[0].key)


def default_drafts(page: str) -> tuple[str, ...]:
    """The drafts `page` starts on, in order."""
    return tuple(d.key for d in drafts() if page in d.defaults.split())


def draft_spec(kind: str, k: int = 0, source: str = "", vocab: int = 0) -> DraftSpec:
    """The one rule for a chosen draft: `k` counts only for a depth kind, `source` (trimmed)
    for a sourced one, `vocab` for one with a head of its own."""
    entry = _DRAFTS.get(kind, _NO_DRAFT)
    return DraftSpec(
        kind, k if entry.depth else 0, source.strip() if entry.source else "", vocab if entry.head else 0
    )


def draft_key(spec: DraftSpec, tree: bool = False) -> str:
    """A draft's key in the one grammar: ``<kind>[-<k>][@<vocab>][~tree]`` (a source never)."""
    depth = f"-{spec.k}" if _DRAFTS.get(spec.kind, _NO_DRAFT).depth else ""
    vocab = f"@{spec.vocab}" if spec.vocab > 0 else ""
    return f"{spec.kind}{depth}{vocab}{TREE_SUFFIX if tree else ''}"


def parse_draft_key(key: str, source: str = "") -> tuple[DraftSpec, bool]:
    """(spec, as a tree) of a :func:`draft_key`; a sourced kind takes `source` (trimmed);
    ValueError for a depth or vocabulary that is not a whole number."""
    tree = key.endswith(TREE_SUFFIX)
    base, _, vocab = key.removesuffix(TREE_SUFFIX).partition("@")
    kind, _, depth = base.rpartition("-")
    if not (kind and _DRAFTS.get(kind, _NO_DRAFT).depth):
        kind, depth = base, ""
    return replace(draft_spec(kind, int(depth or 0), source), vocab=int(vocab or 0)), tree


# -- the built-in kinds ---------------------------------------------------------------------------
def _shipped(name: str) -> Callable[[str], Any]:
    """A loader of a model shipped with the app (``models.bundled.<name>``), imported when run."""
    return lambda source: getattr(importlib.import_module("specdec_core.models.bundled"), name)()


def _custom(source: str) -> Any:
    from specdec_core.models.hf import HFCausalLM

    return HFCausalLM.load(source)


def _ngram(target: Any, spec: DraftSpec) -> Any:
    from specdec_core.models.ngram import NGramDraft

    return NGramDraft.for_model(target)


def _toy_draft(target: Any, spec: DraftSpec) -> Any:
    if not isinstance(target, ToyWordLM):
        raise ChoiceError("The toy draft only fits the toy target.", "toy_draft")
    return toy_draft()


def _transformer(target: Any, message: str) -> Any:
    from specdec_core.models.hf import HFCausalLM

    if not isinstance(target, HFCausalLM):
        raise ChoiceError(message, "needs_transformer")
    return target


def _bf16(target: Any, spec: DraftSpec) -> Any:
    from specdec_core.models.drafts import precision_copy

    _transformer(target, "A bf16 copy is built from a transformer target.")
    return precision_copy(target, "bfloat16")


def _layers(target: Any, spec: DraftSpec) -> Any:
    from specdec_core.models.drafts import LayerSkipDraft

    return LayerSkipDraft(
        _transformer(target, "A layer-skip draft is built from a transformer target."), spec.k
    )


def _trained(cls_name: str) -> Callable[[Any, DraftSpec], Any]:
    def build(target: Any, spec: DraftSpec) -> Any:
        from specdec_core.models import head, medusa

        _transformer(
            target, "The trained heads (EAGLE-style, Medusa) draft from a transformer target's features."
        )
        cls = head.HeadDraft if cls_name == "head" else medusa.MedusaDraft
        try:
            return cls(target)
        except (head.HeadMismatchError, FileNotFoundError) as exc:
            raise ChoiceError(str(exc), "head_mismatch") from exc

    return build


def _smollm2(target: Any, spec: DraftSpec) -> Any:
    from specdec_core.models.bundled import load_bundled
    from specdec_core.models.pairing import paired_draft

    return paired_draft(_transformer(target, "SmolLM2-135M drafts for a transformer target."), load_bundled())


def _typed(target: Any, spec: DraftSpec) -> Any:
    from specdec_core.models.hf import HFCausalLM
    from specdec_core.models.pairing import paired_draft

    if not spec.source.strip():
        raise ChoiceError(
            "Enter a Hugging Face model id or a local folder for the custom draft.", "no_draft_source"
        )
    return paired_draft(target, HFCausalLM.load(spec.source.strip()))


_NO_DRAFT = DraftKind("", "", _ngram)
_SMOL = frozenset({TRANSFORMER, SMOLLM2_FEATURES})
for _entry in (
    TargetKind(
        "bundled",
        "SmolLM2-135M-Instruct (bundled)",
        _shipped("load_bundled"),
        lambda s: layer_count.bundled_layers(),
        _SMOL,
        defaults="live race law compare",
    ),
    # the shipped heads read SmolLM2's features, so they do not fit Gemma; SmolLM2 drafts for
    # it across the two tokenizers instead
    TargetKind(
        "gemma",
        "Gemma-3-270M (base)",
        _shipped("load_gemma"),
        lambda s: layer_count.gemma_layers(),
        frozenset({TRANSFORMER, SMOLLM2_PAIR}),
        chat=False,
    ),
    TargetKind(
        "toy",
        "Toy Markov pair",
        lambda s: toy_target(),
        lambda s: None,
        frozenset({TOY_CHAIN}),
        chat=False,
        warm=False,
        words=TOY_WORDS,
        timing_note="toy_timing",
        cache_note="toy_no_cache",
    ),
    TargetKind(
        "custom", "Custom transformers model", _custom, layer_count.source_layers, _SMOL, needs_source=True
    ),
    DraftKind("toy_draft", "Toy draft chain", _toy_draft, frozenset({TOY_CHAIN}), warm=False),
    DraftKind(
        "ngram",
        "n-gram lookup",
        _ngram,
        warm=False,
        grid=("ngram", "ngram~tree"),
        defaults="live compare",
    ),
    DraftKind(
        "bf16",
        "bf16 copy",
        _bf16,
        frozenset({TRANSFORMER}),
        head=True,
        grid=("bf16", "bf16@16384", "bf16~tree"),
        defaults="compare",
    ),
    DraftKind(
        "layerskip",
        "Layer skip",
        _layers,
        frozenset({TRANSFORMER}),
        depth=True,
        head=True,
        grid=("layerskip-8", "layerskip-16", "layerskip-8@16384"),
    ),
    DraftKind(
        "head",
        "EAGLE-style head",
        _trained("head"),
        frozenset({SMOLLM2_FEATURES}),
        head=True,
        grid=("head",),
        defaults="law compare",
    ),
    DraftKind(
        "medusa",
        "Medusa heads",
        _trained("medusa"),
        frozenset({SMOLLM2_FEATURES}),
        head=True,
        grid=("medusa",),
    ),
    DraftKind(
        "smollm2",
        "SmolLM2-135M",
        _smollm2,
        frozenset({SMOLLM2_PAIR}),
        head=True,
        across=True,
        grid=("smollm2", "smollm2@16384"),
    ),
    DraftKind("custom", "Custom transformers model", _typed, source=True, head=True),
):
    register(_entry)
