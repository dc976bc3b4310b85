"""The toy word-level Markov pair: a hand-written target chain over a few words (exact
probabilities, instant, no download) and a draft that mixes it with a fixed random chain.
Its vocabulary holds a little HTML, so a UI showing its tokens must escape them."""

from __future__ import annotations

from typing import Any

import numpy as np

from specdec_core.models.markov import MarkovChainLM, rows_from_weights

#: The toy vocabulary: a few words, punctuation and a little HTML, so a UI must escape tokens.
TOY_WORDS: tuple[str, ...] = (
    "the",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "rug",
    "home",
    "and",
    "then",
    ".",
    "<script>",
    "alert",
    "(",
    ")",
    ";",
    "</script>",
)

_TOY_NEXT: dict[str, dict[str, float]] = {
    "the": {"cat": 0.45, "dog": 0.35, "mat": 0.1, "rug": 0.1},
    "cat": {"sat": 0.6, "ran": 0.3, ".": 0.1},
    "dog": {"ran": 0.6, "sat": 0.3, ".": 0.1},
    "sat": {"on": 0.8, "then": 0.1, ".": 0.1},
    "ran": {"home": 0.5, "on": 0.3, ".": 0.2},
    "on": {"the": 1.0},
    "mat": {".": 0.6, "and": 0.4},
    "rug": {".": 0.6, "and": 0.4},
    "home": {".": 0.7, "and": 0.3},
    "and": {"then": 0.5, "the": 0.5},
    "then": {"the": 0.8, "<script>": 0.2},
    ".": {"the": 0.75, "<script>": 0.25},
    "<script>": {"alert": 1.0},
    "alert": {"(": 1.0},
    "(": {")": 0.8, "the": 0.2},
    ")": {";": 1.0},
    ";": {"</script>": 0.7, "alert": 0.3},
    "</script>": {"the": 0.8, ".": 0.2},
}
#: Share of a random chain mixed into the toy draft: right most of the time, not always.
TOY_DRAFT_NOISE = 0.3
_TOY_NOISE_SEED = 5


class ToyWordLM(MarkovChainLM):
    """A Markov chain over words whose token texts carry a leading space, like BPE pieces."""

    def __init__(self, transitions: np.ndarray, name: str) -> None:
        super().__init__(transitions, labels=TOY_WORDS)
        self.name = name

    def token_text(self, token_id: int) -> str:
        """The word with a leading space, so concatenated token texts read as a sentence."""
        return " " + super().token_text(token_id)

    def decode(self, ids: Any) -> str:
        return "".join(self.token_texts(ids)).lstrip()


def toy_target() -> ToyWordLM:
    """The toy target: a hand-written word chain (exact probabilities, instant)."""
    return ToyWordLM(rows_from_weights(_TOY_NEXT, TOY_WORDS), f"Toy Markov target ({len(TOY_WORDS)} words)")


def toy_draft() -> ToyWordLM:
    """The toy draft: the target's rows mixed with a fixed random chain."""
    noise = MarkovChainLM.random(len(TOY_WORDS), seed=_TOY_NOISE_SEED, concentration=1.0)
    return ToyWordLM(
        toy_target().blend(noise, TOY_DRAFT_NOISE).transitions,
        f"Toy Markov draft ({TOY_DRAFT_NOISE:.0%} noise)",
    )
