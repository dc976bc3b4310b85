"""Models behind one protocol: a toy Markov chain, n-gram drafts and real transformers."""

from specdec_core.models.base import LanguageModel, Session
from specdec_core.models.markov import MarkovChainLM, MarkovSession

__all__ = ["LanguageModel", "MarkovChainLM", "MarkovSession", "Session"]
