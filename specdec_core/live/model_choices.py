"""The models the live pages offer, read from the catalog (``specdec_core.models.catalog``),
and how to build them warmed up.

A choice is a small frozen spec (:class:`TargetSpec`, :class:`DraftSpec`), so it can key a cache
(:func:`target_key`, :func:`draft_key`); ``ModelShelf`` (specdec_core/live/shelf.py) builds each
model once per process through :func:`load_target` / :func:`load_draft`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from specdec_core.models import catalog
from specdec_core.models.catalog import ChoiceError, DraftSpec, TargetSpec, drafts_for

__all__ = ["ChoiceError", "DraftSpec", "TargetSpec", "drafts_for"]

#: The largest reduced vocabulary a form offers (Gemma's whole vocabulary).
MAX_VOCAB = 262_144


def targets() -> tuple[str, ...]:
    """The target kinds offered, in order."""
    return tuple(t.key for t in catalog.targets())


def draft_kinds() -> tuple[str, ...]:
    """The draft kinds offered, in order."""
    return tuple(d.key for d in catalog.drafts())


def target_key(spec: TargetSpec) -> tuple[str, TargetSpec]:
    """The shelf key of a target."""
    return ("target", spec)


def draft_key(target: TargetSpec, spec: DraftSpec) -> tuple[str, TargetSpec, DraftSpec]:
    """The shelf key of a draft built for a target (its parent on the shelf: :func:`target_key`)."""
    return ("draft", target, spec)


def target_layers(spec: TargetSpec, loaded: Any = None) -> int | None:
    """How many layers the target of `spec` has, so a layer-skip depth can be bounded before
    anything loads: the `loaded` model's own count when given, else its kind's count from its
    config (no weights read); None for a chain or when it cannot be told."""
    count = getattr(loaded, "num_layers", None)
    if isinstance(count, int) and count > 0:
        return count
    try:
        return catalog.target(spec.kind).layers(spec.source)
    except KeyError:
        return None


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


def load_target(spec: TargetSpec) -> Any:
    """Build the target of `spec`, warmed up when its catalog entry says so.

    Raises ``ModelNotAvailableError`` / ``ModelLoadError`` (from ``specdec_core.models``) for a
    model that is missing or cannot load, ``ChoiceError`` for an empty custom source.
    """
    try:
        kind = catalog.target(spec.kind)
    except KeyError as exc:
        raise ChoiceError(f"{exc.args[0]}.") from None
    source = spec.source.strip()
    if kind.needs_source and not source:
        raise ChoiceError(
            "Enter a Hugging Face model id or a local folder for the custom target.", "no_target_source"
        )
    model = kind.load(source)
    return warmed(model) if kind.warm else model


def load_draft(target: Any, spec: DraftSpec) -> Any:
    """The draft of `spec` for `target`, built by its catalog entry (a typed draft with another
    tokenizer drafts across the two), warmed up, its head then cut to the target's
    ``spec.vocab`` most frequent tokens when that is set (exact: the draft samples from its law
    projected onto them).

    Raises ``ChoiceError`` when the draft kind does not fit the target,
    ``TokenizerMismatchError`` for a typed draft that shares no token with the target, and the
    loading errors of :func:`load_target`.
    """
    kind = catalog.draft(spec.kind)
    draft = kind.build(target, replace(spec, vocab=0))
    if kind.warm:
        draft = warmed(draft, target)
    if spec.vocab <= 0:
        return draft
    from specdec_core.models.reduced import frequent_target_tokens, reduced_draft

    if not kind.head or getattr(target, "tokenizer", None) is None:
        raise ChoiceError("Only a draft with a head of its own can keep fewer tokens in it.", "no_head")
    kept = frequent_target_tokens(target, spec.vocab)
    return warmed(reduced_draft(draft, kept, target.vocab_size), target)
