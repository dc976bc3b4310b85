"""Models behind one protocol: a toy Markov chain, n-gram drafts and real transformers.

Real models (``HFCausalLM``, ``load_bundled``, ``LayerSkipDraft``, ``precision_copy``) need
torch and transformers; they are imported on first use, so the Markov chain stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specdec_core.models.base import Draft, FastSession, LanguageModel, Proposer, Session
from specdec_core.models.compat import TokenizerMismatchError, check_compatible
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.markov import MarkovChainLM, MarkovSession
from specdec_core.models.ngram import NGramDraft
from specdec_core.models.pairing import paired_draft

if TYPE_CHECKING:
    from specdec_core.models.bundled import BUNDLED_NAME, is_prepared, load_bundled, prepare_bundled_cache
    from specdec_core.models.drafts import LayerSkipDraft, precision_copy
    from specdec_core.models.hf import HFCausalLM, HFSession, ModelLoadError, ModelNotAvailableError
    from specdec_core.models.reduced import (
        frequent_target_tokens,
        frequent_tokens,
        reduced_draft,
        shipped_counts,
        shipped_texts,
        token_counts,
    )
    from specdec_core.models.vocab_map import cross_vocabulary_draft

_LAZY = {
    "HFCausalLM": "hf",
    "HFSession": "hf",
    "ModelLoadError": "hf",
    "ModelNotAvailableError": "hf",
    "LayerSkipDraft": "drafts",
    "precision_copy": "drafts",
    "BUNDLED_NAME": "bundled",
    "is_prepared": "bundled",
    "load_bundled": "bundled",
    "prepare_bundled_cache": "bundled",
    "cross_vocabulary_draft": "vocab_map",
    "frequent_target_tokens": "reduced",
    "frequent_tokens": "reduced",
    "reduced_draft": "reduced",
    "shipped_counts": "reduced",
    "shipped_texts": "reduced",
    "token_counts": "reduced",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'specdec_core.models' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"specdec_core.models.{module}"), name)


__all__ = [
    "BUNDLED_NAME",
    "CrossVocabularyDraft",
    "Draft",
    "FastSession",
    "HFCausalLM",
    "HFSession",
    "LanguageModel",
    "LayerSkipDraft",
    "MarkovChainLM",
    "MarkovSession",
    "ModelLoadError",
    "ModelNotAvailableError",
    "NGramDraft",
    "Proposer",
    "Session",
    "TokenizerMismatchError",
    "check_compatible",
    "cross_vocabulary_draft",
    "frequent_target_tokens",
    "frequent_tokens",
    "is_prepared",
    "load_bundled",
    "paired_draft",
    "precision_copy",
    "prepare_bundled_cache",
    "reduced_draft",
    "shipped_counts",
    "shipped_texts",
    "token_counts",
]
