"""Models behind one protocol: a toy Markov chain, n-gram drafts and real transformers.

Real models (``HFCausalLM``, ``load_bundled``, ``LayerSkipDraft``, ``precision_copy``) need
torch and transformers; they are imported on first use, so the Markov chain stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specdec_core.models.base import Draft, LanguageModel, Session
from specdec_core.models.compat import TokenizerMismatchError, check_compatible
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.markov import MarkovChainLM
from specdec_core.models.ngram import NGramDraft
from specdec_core.models.pairing import paired_draft

if TYPE_CHECKING:
    from specdec_core.models.bundled import load_bundled
    from specdec_core.models.drafts import LayerSkipDraft, precision_copy
    from specdec_core.models.hf import HFCausalLM, ModelLoadError, ModelNotAvailableError

_LAZY = {
    "HFCausalLM": "hf",
    "ModelLoadError": "hf",
    "ModelNotAvailableError": "hf",
    "LayerSkipDraft": "drafts",
    "precision_copy": "drafts",
    "load_bundled": "bundled",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'specdec_core.models' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"specdec_core.models.{module}"), name)


__all__ = [
    "CrossVocabularyDraft",
    "Draft",
    "HFCausalLM",
    "LanguageModel",
    "LayerSkipDraft",
    "MarkovChainLM",
    "ModelLoadError",
    "ModelNotAvailableError",
    "NGramDraft",
    "Session",
    "TokenizerMismatchError",
    "check_compatible",
    "load_bundled",
    "paired_draft",
    "precision_copy",
]
