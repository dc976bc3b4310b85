"""The models the live pages offer: targets, drafts for each, and how to build them.

Targets are the families of the registry (``specdec_core.models.families``: the bundled
SmolLM2-135M-Instruct, the shipped Gemma-3-270M, the toy word-level Markov pair and any Hugging
Face id or local folder); :func:`targets`, :func:`plain_targets`, :func:`drafts_for` and
:func:`target_layers` read it, and :func:`load_target` loads through it. Drafts for a
transformer target: n-gram prompt lookup, a bf16 copy, its own first k layers, the shipped
EAGLE-style head or Medusa heads (assets/head, assets/medusa), or a custom model; for the toy
target: the toy draft chain or n-gram. A choice is a small frozen spec, so it can key a cache
(:func:`target_key`, :func:`draft_key`); ``ModelShelf`` (specdec_core/live/shelf.py) builds
each model once per process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from specdec_core.models import NGramDraft, families
from specdec_core.models.toy_words import TOY_WORDS, ToyWordLM, toy_draft, toy_target

__all__ = ["TOY_WORDS", "ToyWordLM", "toy_draft", "toy_target"]  # the toy pair, offered here too

#: ``progress(fraction in [0, 1], message)`` while a model loads.
Progress = Callable[[float, str], None]

#: The largest reduced vocabulary a form offers (Gemma's whole vocabulary).
MAX_VOCAB = 262_144
#: Draft kinds with a head of their own, which may keep only the target's most frequent tokens.
HEAD_DRAFTS: tuple[str, ...] = ("bf16", "layerskip", "head", "medusa", "smollm2", "custom")
DRAFTS: tuple[str, ...] = ("ngram", "bf16", "layerskip", "head", "medusa", "smollm2", "toy_draft", "custom")


def targets() -> tuple[str, ...]:
    """The target kinds offered: every family of the registry (``models.families``), in order."""
    return tuple(f.key for f in families.families())


def plain_targets() -> tuple[str, ...]:
    """Targets without a chat template (the toy pair, Gemma-3-270M base): prompts go in as text."""
    return tuple(f.key for f in families.families() if not f.chat)


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
    """Which target: ``kind`` in :data:`TARGETS`; ``source`` is the custom id or folder."""

    kind: str
    source: str = ""


@dataclass(frozen=True)
class DraftSpec:
    """Which draft: ``kind`` in :data:`DRAFTS`; ``k`` layers for layer-skip; ``source`` for custom;
    ``vocab`` > 0 keeps only the target's `vocab` most frequent tokens in the draft's head
    (FR-Spec; 0: the whole head)."""

    kind: str
    k: int = 0
    source: str = ""
    vocab: int = 0


def target_key(spec: TargetSpec) -> tuple[str, TargetSpec]:
    """The shelf key of a target."""
    return ("target", spec)


def draft_key(target: TargetSpec, spec: DraftSpec) -> tuple[str, TargetSpec, DraftSpec]:
    """The shelf key of a draft built for a target (its parent on the shelf: :func:`target_key`)."""
    return ("draft", target, spec)


def target_layers(spec: TargetSpec, loaded: Any = None) -> int | None:
    """How many layers the target of `spec` has, so a layer-skip depth can be bounded before
    anything loads: the `loaded` model's own count when given, else its family's count from
    its config (no weights read); None for the toy chain or when it cannot be told."""
    count = getattr(loaded, "num_layers", None)
    if isinstance(count, int) and count > 0:
        return count
    try:
        return families.family(spec.kind).layers(spec.source)
    except KeyError:
        return None


def drafts_for(target_kind: str) -> tuple[str, ...]:
    """The draft kinds that make sense with a target kind (its family's; a transformer's when
    the kind is unknown)."""
    try:
        return families.family(target_kind).drafts
    except KeyError:
        return families.TRANSFORMER_DRAFTS


# -- building models -----------------------------------------------------------------------------
def warmed(model: Any, target: Any = None) -> Any:
    """`model` after :func:`~specdec_core.live.warmup.warm_up` (a target alone, or a draft
    with its `target`), so the first run anyone times is not the process's first forward."""
    from specdec_core.live.warmup import warm_up

    if target is None:
        warm_up(model)
    else:
        warm_up(target, model)
    return model


def load_target(spec: TargetSpec, progress: Progress | None = None) -> Any:
    """Build the target of `spec` (the bundled model reports its loading through `progress`).

    Raises ``ModelNotAvailableError`` / ``ModelLoadError`` (from ``specdec_core.models``) for a
    model that is missing or cannot load, ``ChoiceError`` for an empty custom source.
    """
    try:
        fam = families.family(spec.kind)
    except KeyError as exc:
        raise ChoiceError(f"{exc.args[0]}.") from None
    source = spec.source.strip()
    if fam.needs_source and not source:
        raise ChoiceError(
            "Enter a Hugging Face model id or a local folder for the custom target.", "no_target_source"
        )
    model = fam.load(source, progress)
    return warmed(model) if fam.warm else model


def load_draft(target: Any, spec: DraftSpec, progress: Progress | None = None) -> Any:
    """:func:`_load_full_draft`, its head then cut to the target's ``spec.vocab`` most frequent
    tokens when that is set (exact: the draft samples from its law projected onto them)."""
    draft = _load_full_draft(target, replace(spec, vocab=0), progress)
    if spec.vocab <= 0:
        return draft
    from specdec_core.models import NGramDraft as Lookup
    from specdec_core.models.reduced import frequent_target_tokens, reduced_draft

    if isinstance(draft, Lookup) or getattr(target, "tokenizer", None) is None:
        raise ChoiceError("Only a draft with a head of its own can keep fewer tokens in it.", "no_head")
    if progress is not None:
        progress(0.0, f"Counting {target.name}'s most frequent tokens in the shipped text…")
    kept = frequent_target_tokens(target, spec.vocab)
    return warmed(reduced_draft(draft, kept, target.vocab_size), target)


def _load_full_draft(target: Any, spec: DraftSpec, progress: Progress | None = None) -> Any:
    """Build the draft of `spec` for `target`; a custom draft with another tokenizer drafts
    across the two (``models.paired_draft``: a ``CrossVocabularyDraft``).

    Raises ``ChoiceError`` when the draft kind does not fit the target,
    ``TokenizerMismatchError`` for a custom draft that shares no token with the target, and
    the loading errors of :func:`load_target`.
    """
    if spec.kind == "ngram":
        return NGramDraft.for_model(target)
    if spec.kind == "toy_draft":
        if not isinstance(target, ToyWordLM):
            raise ChoiceError("The toy draft only fits the toy target.", "toy_draft")
        return toy_draft()
    if spec.kind in ("bf16", "layerskip"):
        from specdec_core.models import HFCausalLM, LayerSkipDraft, precision_copy

        if not isinstance(target, HFCausalLM):
            raise ChoiceError(
                "A bf16 copy or a layer-skip draft is built from a transformer target.", "needs_transformer"
            )
        if spec.kind == "bf16":
            if progress is not None:
                progress(0.0, f"Copying {target.name} to bfloat16…")
            return warmed(precision_copy(target, "bfloat16"), target)
        return warmed(LayerSkipDraft(target, spec.k), target)
    if spec.kind in ("head", "medusa"):
        from specdec_core.models import HFCausalLM
        from specdec_core.models.head import HeadDraft, HeadMismatchError
        from specdec_core.models.medusa import MedusaDraft

        if not isinstance(target, HFCausalLM):
            raise ChoiceError(
                "The trained heads (EAGLE-style and Medusa) draft from a transformer target's features.",
                "needs_transformer",
            )
        try:
            draft = (HeadDraft if spec.kind == "head" else MedusaDraft)(target)
        except (HeadMismatchError, FileNotFoundError) as exc:
            raise ChoiceError(str(exc), "head_mismatch") from exc
        return warmed(draft, target)
    if spec.kind == "smollm2":
        from specdec_core.models import HFCausalLM, load_bundled, paired_draft

        if not isinstance(target, HFCausalLM):
            raise ChoiceError("SmolLM2-135M drafts for a transformer target.", "needs_transformer")
        return warmed(paired_draft(target, load_bundled(progress=progress)), target)
    if spec.kind == "custom":
        from specdec_core.models import HFCausalLM, paired_draft

        source = spec.source.strip()
        if not source:
            raise ChoiceError(
                "Enter a Hugging Face model id or a local folder for the custom draft.", "no_draft_source"
            )
        draft = HFCausalLM.load(source, progress=progress)
        return warmed(paired_draft(target, draft), target)
    raise ChoiceError(f"Unknown draft {spec.kind!r}; choose one of {', '.join(DRAFTS)}.")
