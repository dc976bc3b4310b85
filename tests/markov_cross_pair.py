"""A toy pair over two different vocabularies: a Markov target and a Markov draft that reads
the same text in its own tokens (greedy longest-match spelling).

Target tokens: a b c ab d. Draft tokens: a b c bc d.
* target "ab" has no draft twin: the draft spells it with two tokens, "a" "b";
* draft "bc" has no target twin (the target spells it "b" "c");
* the spelling changes across the join: "ab" is "a" "b", then "ab"+"c" is "a" "bc".
"""

from __future__ import annotations

import numpy as np

from specdec_core.models import MarkovChainLM
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.sampling import SamplingConfig
from tests.markov_pair import chain_law

TARGET_TEXTS = ["a", "b", "c", "ab", "d"]
DRAFT_TEXTS = ["a", "b", "c", "bc", "d"]
V = len(TARGET_TEXTS)
TARGET = MarkovChainLM.random(V, seed=31, concentration=0.9, labels=TARGET_TEXTS)
DRAFT_MODEL = MarkovChainLM.random(len(DRAFT_TEXTS), seed=32, concentration=0.9, labels=DRAFT_TEXTS)
TO_TARGET = np.array([TARGET_TEXTS.index(t) if t in TARGET_TEXTS else -1 for t in DRAFT_TEXTS])
START = 0


def spell_text(text: str) -> list[int]:
    """The draft's tokens for `text`: longest match first, left to right."""
    out, i = [], 0
    by_length = sorted(range(len(DRAFT_TEXTS)), key=lambda j: -len(DRAFT_TEXTS[j]))
    while i < len(text):
        j = next(j for j in by_length if text.startswith(DRAFT_TEXTS[j], i))
        out.append(j)
        i += len(DRAFT_TEXTS[j])
    return out


def to_draft(target_ids) -> list[int]:
    return spell_text("".join(TARGET_TEXTS[int(t)] for t in target_ids))


def cross_draft(**kw) -> CrossVocabularyDraft:
    return CrossVocabularyDraft(DRAFT_MODEL, TO_TARGET, to_draft, V, **kw)


def joint_law(cfg: SamplingConfig, n: int = 3) -> np.ndarray:
    """Exact law of the target's first n tokens after START."""
    return chain_law(TARGET, START, cfg, n)


def draft_law_after(target_ids) -> np.ndarray:
    """The projected law the draft should report after a target context: its row after the
    last token of the context's canonical spelling, restricted to tokens with a twin."""
    last = to_draft(target_ids)[-1]
    q = np.exp(DRAFT_MODEL.next_logits(last))
    q = q / q.sum()
    out = np.zeros(V)
    for i, j in enumerate(TO_TARGET):
        if j >= 0:
            out[j] += q[i]
    return out / out.sum()
