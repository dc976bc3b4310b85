"""Block verification, round by round, on a pair of Markov chains (lesson 4), as real speculative
decoding runs it: K drafts, ONE target ``extend`` over the last committed token and the drafts,
:func:`specdec_core.verify.verify_block`, then both caches truncated to the committed prefix but
its newest token (the next round's first input).

A MarkovChainLM's "KV cache" is its token list, so the rollback is real and checkable. One random
stream feeds drafting and verification in order, so replaying n rounds reproduces the first n
rounds of any longer run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from specdec_core import theory
from specdec_core.models.markov import MarkovChainLM, MarkovSession, rows_from_weights
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import expected_tokens, tokens_per_round_law
from specdec_core.verify import sample, verify_block

#: The tiny word vocabulary of the lesson chains, so committed text reads like a sentence.
WORDS: tuple[str, ...] = ("the", "cat", "dog", "sat", "ran", "on", "mat", "home", "and", ".")

#: Next-word weights of the "story" chain (each row is normalised when the chain is built).
_STORY: dict[str, dict[str, float]] = {
    "the": {"cat": 0.45, "dog": 0.4, "mat": 0.15},
    "cat": {"sat": 0.6, "ran": 0.3, ".": 0.1},
    "dog": {"ran": 0.6, "sat": 0.3, ".": 0.1},
    "sat": {"on": 0.75, "and": 0.1, ".": 0.15},
    "ran": {"home": 0.45, "on": 0.35, ".": 0.2},
    "on": {"the": 1.0},
    "mat": {".": 0.6, "and": 0.4},
    "home": {".": 0.6, "and": 0.4},
    "and": {"the": 0.6, "ran": 0.2, "sat": 0.2},
    ".": {"the": 1.0},
}

CHAINS: tuple[str, ...] = ("story", "random")
DRAFTS: tuple[str, ...] = ("good", "poor", "identical")

#: Share of a noise chain mixed into the target to make the "good" draft.
GOOD_DRAFT_NOISE = 0.25
_RANDOM_TARGET_SEED = 11
_NOISE_SEED = 29
_POOR_DRAFT_SEED = 47
#: Most processed rows a demo keeps (a lesson chain has 2 × its vocabulary at most).
_KEPT_ROWS = 4096


def story_chain() -> MarkovChainLM:
    """A hand-written chain over :data:`WORDS` whose samples read like short sentences."""
    return MarkovChainLM(rows_from_weights(_STORY, WORDS), labels=WORDS)


def target_chain(name: str) -> MarkovChainLM:
    """The lesson's target: the "story" chain or a fixed random chain over the same words."""
    if name == "story":
        return story_chain()
    if name == "random":
        return MarkovChainLM.random(len(WORDS), seed=_RANDOM_TARGET_SEED, concentration=0.3, labels=WORDS)
    raise ValueError(f"unknown chain {name!r}; choose one of {', '.join(CHAINS)}.")


def draft_chain(target: MarkovChainLM, quality: str) -> MarkovChainLM:
    """A draft for `target`: "good" (mostly the target), "poor" (unrelated) or "identical"."""
    size = target.vocab_size
    if quality == "good":
        noise = MarkovChainLM.random(size, seed=_NOISE_SEED, concentration=1.0, labels=target.labels)
        return target.blend(noise, GOOD_DRAFT_NOISE)
    if quality == "poor":
        return MarkovChainLM.random(size, seed=_POOR_DRAFT_SEED, concentration=1.0, labels=target.labels)
    if quality == "identical":
        return MarkovChainLM(target.transitions, labels=target.labels)
    raise ValueError(f"unknown draft quality {quality!r}; choose one of {', '.join(DRAFTS)}.")


@dataclass(frozen=True)
class CacheLengths:
    """A session's cache length at the start of a round, at its peak, and after rollback."""

    start: int
    peak: int
    after: int

    @property
    def dropped(self) -> int:
        """Cache entries thrown away by the rollback."""
        return self.peak - self.after


@dataclass(frozen=True)
class BlockRound:
    """Everything one round did, as plain data.

    ``q_rows`` (K, V) are the processed draft rows the drafts were sampled from; ``p_rows``
    (K+1, V) the processed target rows from the single verification forward.
    ``acceptance_probs[i]`` is min(1, p_i/q_i) at draft i, for the positions examined.
    ``committed`` (1 … K+1 tokens) and ``kinds`` ("accepted", "corrected", "bonus") are
    what the round adds; ``rejected`` is the draft that was turned down (None after K
    acceptances) and ``void`` the drafts after it, drafted on a dead branch.
    ``length_after`` is the length of the whole committed text (prompt included).
    """

    index: int
    anchor: int
    drafts: list[int]
    q_rows: np.ndarray = field(repr=False)
    p_rows: np.ndarray = field(repr=False)
    acceptance_probs: list[float]
    accepted: int
    committed: list[int]
    kinds: list[str]
    rejected: int | None
    void: list[int]
    target_cache: CacheLengths
    draft_cache: CacheLengths
    length_after: int

    @property
    def k(self) -> int:
        return len(self.drafts)

    @property
    def p_at_drafts(self) -> np.ndarray:
        """p_i(y_i): the target's probability of each draft, in its own context."""
        return self.p_rows[np.arange(self.k), self.drafts]

    @property
    def q_at_drafts(self) -> np.ndarray:
        """q_i(y_i): the draft's probability of each of its own drafts."""
        return self.q_rows[np.arange(self.k), self.drafts]

    @property
    def slot_outcomes(self) -> list[str]:
        """Outcome of the K draft slots and the bonus slot.

        "accepted", "rejected" (the first turned-down draft, replaced by a corrected token),
        "void" (after a rejection, or the bonus slot when there is no bonus) and "bonus".
        """
        outcomes = ["accepted"] * self.accepted
        if self.rejected is not None:
            outcomes.append("rejected")
        outcomes += ["void"] * (self.k - len(outcomes))
        outcomes.append("bonus" if self.rejected is None else "void")
        return outcomes


class BlockDemo:
    """A speculative decoding run on two Markov chains, advanced one round at a time."""

    def __init__(
        self,
        target: MarkovChainLM,
        draft: MarkovChainLM,
        prompt: Sequence[int],
        k: int,
        seed: int,
        sampling: SamplingConfig | None = None,
    ) -> None:
        if draft.vocab_size != target.vocab_size:
            raise ValueError(
                f"the draft ({draft.vocab_size} tokens) and the target ({target.vocab_size} tokens) "
                "must share one vocabulary: verification compares their probabilities token by token."
            )
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"K (drafts per round) must be a whole number of at least 1, got {k!r}.")
        if not prompt:
            raise ValueError("the prompt needs at least one token to start from.")
        self.target = target
        self.draft = draft
        self.k = int(k)
        self.sampling = sampling or SamplingConfig()
        self.rng = np.random.default_rng(seed)
        self.prompt = list(prompt)
        self.committed = list(prompt)
        # Prefill: each model has seen the prompt except its last token, the first input of round 1.
        self.target_session: MarkovSession = target.session(self.prompt[:-1])
        self.draft_session: MarkovSession = draft.session(self.prompt[:-1])
        self.rounds: list[BlockRound] = []
        self._processed: dict[bytes, np.ndarray] = {}

    def _probs(self, logits: np.ndarray) -> np.ndarray:
        """The processed law of one logits row, kept: a Markov chain repeats its rows, so a
        replay of many rounds (a control moved back) processes each row once."""
        key = logits.tobytes()
        probs = self._processed.get(key)
        if probs is None:
            if len(self._processed) >= _KEPT_ROWS:
                self._processed.clear()
            probs = self._processed[key] = apply(logits, self.sampling).probs
        return probs

    def _draft_block(self) -> tuple[list[int], np.ndarray]:
        """Sample K drafts autoregressively from the draft's processed rows."""
        session = self.draft_session
        logits = session.extend(self.committed[session.length :])[-1]
        drafts: list[int] = []
        rows: list[np.ndarray] = []
        for i in range(self.k):
            q = self._probs(logits)
            token = sample(q, self.rng)
            drafts.append(token)
            rows.append(q)
            if i < self.k - 1:
                logits = session.extend([token])[-1]
        return drafts, np.array(rows)

    def step(self) -> BlockRound:
        """Run one round: draft K tokens, verify them in one target forward, roll back caches."""
        anchor = self.committed[-1]
        target_start, draft_start = self.target_session.length, self.draft_session.length
        drafts, q_rows = self._draft_block()
        logits = self.target_session.extend([anchor, *drafts])
        p_rows = np.array([self._probs(row) for row in logits])
        result = verify_block(p_rows, q_rows, drafts, self.rng)
        target_peak, draft_peak = self.target_session.length, self.draft_session.length
        self.committed += result.tokens
        keep = len(self.committed) - 1
        for session in (self.target_session, self.draft_session):
            session.truncate(min(session.length, keep))
        rejected = None if result.accepted == self.k else drafts[result.accepted]
        void = [] if rejected is None else drafts[result.accepted + 1 :]
        record = BlockRound(
            index=len(self.rounds) + 1,
            anchor=anchor,
            drafts=drafts,
            q_rows=q_rows,
            p_rows=p_rows,
            acceptance_probs=list(result.acceptance_probs),
            accepted=result.accepted,
            committed=list(result.tokens),
            kinds=list(result.kinds),
            rejected=rejected,
            void=void,
            target_cache=CacheLengths(target_start, target_peak, self.target_session.length),
            draft_cache=CacheLengths(draft_start, draft_peak, self.draft_session.length),
            length_after=len(self.committed),
        )
        self.rounds.append(record)
        return record


def earlier_text(demo: BlockDemo) -> tuple[list[int], list[str]]:
    """The committed text before the latest round (all of it before round 1) and the kind of
    each of its tokens: ``"prompt"`` for the prompt, then each earlier round's kinds."""
    if not demo.rounds:
        return list(demo.committed), ["prompt"] * len(demo.committed)
    last = demo.rounds[-1]
    tokens = demo.committed[: last.length_after - len(last.committed)]
    kinds = ["prompt"] * len(demo.prompt) + [kind for rnd in demo.rounds[:-1] for kind in rnd.kinds]
    return tokens, kinds


def measured_alpha(rounds: Sequence[BlockRound]) -> float | None:
    """Accepted drafts / drafts examined (None before any round): the estimate of α."""
    examined = sum(r.accepted + (r.rejected is not None) for r in rounds)
    return theory.measured_alpha(sum(r.accepted for r in rounds), examined)


def tokens_per_round_counts(rounds: Sequence[BlockRound], k: int) -> np.ndarray:
    """How many rounds committed 1, 2, …, K+1 tokens."""
    counts = np.zeros(k + 1, dtype=np.int64)
    for r in rounds:
        if r.k != k:
            raise ValueError(f"a round with K = {r.k} cannot be counted among rounds with K = {k}.")
        counts[len(r.committed) - 1] += 1
    return counts


@dataclass(frozen=True)
class RoundSummary:
    """Rounds so far against the i.i.d. model with the measured α."""

    counts: np.ndarray
    alpha: float
    law: np.ndarray
    mean_measured: float
    mean_theory: float


def summarize(rounds: Sequence[BlockRound], k: int) -> RoundSummary | None:
    """Counts of 1 … K+1 tokens per round, measured α, and the law and mean it predicts."""
    alpha = measured_alpha(rounds)
    if alpha is None:
        return None
    counts = tokens_per_round_counts(rounds, k)
    sizes = np.arange(1, k + 2)
    return RoundSummary(
        counts=counts,
        alpha=alpha,
        law=tokens_per_round_law(alpha, k),
        mean_measured=float(counts @ sizes / counts.sum()),
        mean_theory=float(expected_tokens(alpha, k)),
    )


def acceptance_by_context(
    target: MarkovChainLM, draft: MarkovChainLM, sampling: SamplingConfig | None = None
) -> np.ndarray:
    """α(s) = Σ_x min(p(x|s), q(x|s)) for each last token s, after the sampling transforms."""
    config = sampling or SamplingConfig()
    alphas = []
    for s in range(target.vocab_size):
        p = apply(target.next_logits(s), config).probs
        q = apply(draft.next_logits(s), config).probs
        alphas.append(float(np.minimum(p, q).sum()))
    return np.array(alphas)
