"""Turning logits into the distribution a sampler draws from.

The three transforms follow transformers' logits warpers exactly (same maths, same
order semantics), computed in float64:

* **temperature** divides the scores by T > 0. ``T == 0`` is *not* a division: it is the
  greedy switch, an API convention that bypasses sampling and takes the argmax.
* **top_k** keeps the k highest-scoring tokens (``0`` = off). Tokens tied with the k-th
  score are kept too, so a cut never separates equal tokens.
* **top_p** keeps the smallest set of most likely tokens whose mass reaches the
  threshold τ (``1.0`` = off), exactly as transformers' TopPLogitsWarper does: it sorts
  ascending and drops tokens whose cumulative mass stays within 1 − τ. A tie group *can* be
  split: among equal tokens the sort puts the highest index last, and that one is kept
  first. So at a tied maximum a small τ leaves one token — the highest tied index, while
  greedy takes the lowest (:func:`greedy_equivalence` reports it as "deterministic, not
  greedy"). torch's CPU sort is stable up to 16 tokens; for longer vocabularies its order
  among equal values is unspecified, so which tied token transformers keeps there is too
  (the kept mass and the number kept are the same).
* **min_tokens_to_keep** is the floor both filters respect.

After each filter the survivors are renormalised (the next stage sees a distribution that
sums to 1). A token counts as *sampleable* when its final float64 probability is above 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from specdec_core.checks import as_vector

TRANSFORMS: tuple[str, ...] = ("temperature", "top_k", "top_p")


@dataclass(frozen=True)
class SamplingConfig:
    """Sampling settings; ``temperature == 0`` is the greedy switch, 0 / 1.0 turn k / p off."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_tokens_to_keep: int = 1
    order: tuple[str, ...] = TRANSFORMS

    def __post_init__(self) -> None:
        t = self.temperature
        if not isinstance(t, int | float) or isinstance(t, bool) or not np.isfinite(t):
            raise ValueError(f"temperature must be a finite number, got {t!r}.")
        if t < 0:
            raise ValueError(
                f"temperature must be 0 (the greedy switch) or positive, got {t}; "
                "a negative temperature would reverse which tokens are likely."
            )
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int | np.integer):
            raise ValueError(f"top_k must be a whole number (0 = off), got {self.top_k!r}.")
        if self.top_k < 0:
            raise ValueError(f"top_k must be 0 (off) or a positive count, got {self.top_k}.")
        p = self.top_p
        if not isinstance(p, int | float) or isinstance(p, bool) or not (0 < p <= 1):
            raise ValueError(
                f"top_p must be in (0, 1] (1.0 = off), got {p!r}: it is the share of "
                "probability mass to keep."
            )
        m = self.min_tokens_to_keep
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
            raise ValueError(f"min_tokens_to_keep must be a whole number of at least 1, got {m!r}.")
        order = tuple(self.order)
        if sorted(order) != sorted(TRANSFORMS):
            raise ValueError(f"order must list each of {', '.join(TRANSFORMS)} exactly once, got {order}.")
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "temperature", float(t))
        object.__setattr__(self, "top_p", float(p))
        object.__setattr__(self, "top_k", int(self.top_k))
        object.__setattr__(self, "min_tokens_to_keep", int(m))

    @property
    def is_greedy_switch(self) -> bool:
        """True when temperature 0 bypasses sampling (argmax, lowest index on ties)."""
        return self.temperature == 0.0


@dataclass(frozen=True)
class SamplingTrace:
    """Every stage from the plain softmax to the final distribution.

    ``stages[i] = (name, probs)``; ``removed[i]`` marks the tokens that stage cut (all False
    for softmax and temperature); ``kept_mass[i]`` is the share of the previous stage's
    mass that survived before renormalising (1.0 when nothing was cut).
    """

    stages: list[tuple[str, np.ndarray]]
    removed: list[np.ndarray] = field(repr=False)
    kept_mass: list[float]

    @property
    def probs(self) -> np.ndarray:
        """The final distribution the sampler draws from."""
        return self.stages[-1][1]

    @property
    def support(self) -> np.ndarray:
        """Indices that can still be sampled (final probability > 0)."""
        return np.flatnonzero(self.probs > 0)


class Reason(str):
    """A learner-readable explanation that also carries a ``code`` and its ``params``.

    The string itself is English; interfaces in other languages translate from ``code``.
    Token lists in ``params`` (e.g. ``tied``) are tuples of ids.
    """

    code: str
    params: dict[str, object]

    def __new__(cls, code: str, **params: object) -> Reason:
        shown = {k: ", ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in params.items()}
        obj = super().__new__(cls, REASONS_EN[code].format(**shown))
        obj.code = code
        obj.params = params
        return obj


REASONS_EN: dict[str, str] = {
    "temperature_switch": (
        "Temperature 0 is the greedy switch, an API convention: the sampler is bypassed and "
        "the top-logit token {token} is taken. (Dividing by T = 0 is undefined; this is not "
        "the formula evaluated at 0.)"
    ),
    "temperature_switch_tie": (
        "Temperature 0 is the greedy switch, an API convention: the sampler is bypassed. "
        "The top logit is tied between tokens {tied}; the switch needs a tie-break and takes "
        "the lowest index, {token}."
    ),
    "single_token": (
        "Only token {token} has any probability, even before the transforms: there is nothing else to sample."
    ),
    "temperature_underflow": (
        "At T = {temperature:g} every token except {token} gets a probability below the "
        "smallest float64 number, so it is exactly 0 and the sampler can only draw {token}. "
        "This is the T → 0⁺ limit reached numerically, not the T = 0 switch."
    ),
    "top_k_one": (
        "top-k with k = 1 keeps only the most likely token {token}; renormalising gives it probability 1."
    ),
    "top_p_threshold": (
        "top-p = {top_p:g} is at most the largest probability {p_max:.4g} at that stage: the "
        "first token {token} alone reaches the threshold, so the nucleus is one token and "
        "renormalising gives it probability 1."
    ),
    "tie": (
        "Tokens {tied} share the highest probability ({p_max:.4g} each). Temperature and "
        "top-k never separate equal tokens, and top-p kept them all here; greedy needs a "
        "tie-break rule (lowest index: {token})."
    ),
    "top_p_tie_split": (
        "Deterministic, but not greedy: tokens {tied} tie for the top, and top-p = "
        "{top_p:g} (at most their probability {p_max:.4g}) keeps only the one its ascending "
        "sort puts last, {token}, as transformers' TopPLogitsWarper does. Greedy breaks the "
        "tie by the lowest index and takes {greedy}."
    ),
    "min_tokens_to_keep": (
        "Without min_tokens_to_keep the settings would leave one token, but "
        "min_tokens_to_keep = {min_keep} forces {n} tokens to stay sampleable."
    ),
    "several": (
        "{n} tokens can still be sampled (largest final probability {p_max:.4g}, next "
        "{p_next:.3g}). Greedy "
        "needs exactly one: T = 0, k = 1, or top-p at most the largest probability."
    ),
    "several_top_p": (
        "{n} tokens can still be sampled (largest final probability {p_max:.4g}, next "
        "{p_next:.3g}). top-p = "
        "{top_p:g} is above the largest probability {p_max_stage:.4g} at its stage, so the "
        "nucleus needs {kept} tokens."
    ),
}


def softmax(scores: np.ndarray) -> np.ndarray:
    """Numerically stable float64 softmax over the last axis (one law per row of a 2-D
    array); -inf scores get probability 0."""
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def validate_logits(logits: Sequence[float] | np.ndarray) -> np.ndarray:
    """float64 copy of `logits`; -inf (a masked token) is allowed, NaN and +inf are not."""
    z = as_vector(logits, "logits")
    if not np.any(np.isfinite(z)):
        raise ValueError("logits has no finite entry: at least one token must be possible.")
    return z


def greedy(logits: Sequence[float] | np.ndarray) -> int:
    """Index of the largest logit; ties go to the lowest index (like ``torch.argmax``)."""
    return int(np.argmax(validate_logits(logits)))


def temperature_scaled(scores: np.ndarray, temperature: float | np.ndarray) -> np.ndarray:
    """The temperature step of :func:`apply`: scores shifted by their (row's) max and divided
    by the temperature (one per row when an array); -inf stays -inf."""
    top = np.max(scores, axis=-1, keepdims=True)
    return np.where(np.isfinite(scores), (scores - top) / temperature, -np.inf)


def top_k_removed(probs: np.ndarray, k: int, min_keep: int) -> np.ndarray:
    """The top-k step of :func:`apply` as a mask: True for the tokens below the k-th largest
    probability (of each row, over the last axis; k is raised to `min_keep`)."""
    n = probs.shape[-1]
    k = min(max(k, min_keep), n)
    threshold = np.sort(probs, axis=-1)[..., n - k]
    return probs < threshold[..., None]


def top_p_removed(probs: np.ndarray, top_p: float, min_keep: int) -> np.ndarray:
    """The top-p step of :func:`apply` as a mask: True for the least likely tokens whose
    cumulative mass stays within 1 - top_p (each row), never the `min_keep` most likely.

    Same arithmetic as transformers' TopPLogitsWarper (stable ascending sort, cumulative
    sum compared with 1 - top_p), so the two agree even at rounding boundaries and at ties:
    among equal tokens the highest index comes last and is the last to be dropped.
    """
    n = probs.shape[-1]
    order = np.argsort(probs, axis=-1, kind="stable")  # ascending; among equals the highest index last
    cum = np.cumsum(np.take_along_axis(probs, order, axis=-1), axis=-1)
    remove_sorted = cum <= 1 - top_p
    remove_sorted[..., n - min(min_keep, n) :] = False
    remove = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)
    return remove


def one_hot(size: int, index: int) -> np.ndarray:
    """The distribution with all its mass on `index` (float64, `size` entries)."""
    out = np.zeros(size)
    out[index] = 1.0
    return out


def apply(logits: Sequence[float] | np.ndarray, config: SamplingConfig) -> SamplingTrace:
    """Run the transforms in ``config.order`` and keep every stage, starting at "softmax"."""
    z = validate_logits(logits)
    base = softmax(z)
    stages: list[tuple[str, np.ndarray]] = [("softmax", base)]
    removed = [np.zeros(z.size, dtype=bool)]
    kept = [1.0]
    if config.is_greedy_switch:
        hot = one_hot(z.size, int(np.argmax(z)))
        for name in config.order:
            stages.append((name, hot))
            removed.append(np.zeros(z.size, dtype=bool))
            kept.append(1.0)
        return SamplingTrace(stages, removed, kept)

    scores = z.copy()
    probs = base
    for name in config.order:
        cut = np.zeros(z.size, dtype=bool)
        if name == "temperature":
            scores = temperature_scaled(scores, config.temperature)
        elif name == "top_k" and config.top_k > 0:
            cut = top_k_removed(probs, config.top_k, config.min_tokens_to_keep)
        elif name == "top_p" and config.top_p < 1.0:
            cut = top_p_removed(probs, config.top_p, config.min_tokens_to_keep)
        cut &= probs > 0  # a token already at 0 is not "removed" again
        kept_mass = float(probs[~cut].sum())
        scores = np.where(cut, -np.inf, scores)
        probs = softmax(scores)
        stages.append((name, probs))
        removed.append(cut)
        kept.append(kept_mass)
    return SamplingTrace(stages, removed, kept)


def same_as_greedy(collapsed: bool, reason: Reason) -> bool:
    """Whether a :func:`greedy_equivalence` verdict means "always greedy's own token": one
    token left, and not the tied token a small top-p keeps instead of greedy's."""
    return collapsed and reason.code != "top_p_tie_split"


def greedy_equivalence(logits: Sequence[float] | np.ndarray, config: SamplingConfig) -> tuple[bool, Reason]:
    """Whether sampling with `config` collapses to one token, and why (or why not).

    True exactly when the final support is one token (DESIGN.md's contract). That token is
    greedy's (lowest-index argmax) except in one case: a tie at the top split by top-p (see
    the module docstring). Then the reason's code is ``top_p_tie_split``: the output is
    deterministic but a different token from greedy's (:func:`same_as_greedy` tells).
    """
    z = validate_logits(logits)
    top = int(np.argmax(z))
    if config.is_greedy_switch:
        tied = np.flatnonzero(z == z[top])
        if tied.size > 1:
            return True, Reason("temperature_switch_tie", token=top, tied=_list(tied))
        return True, Reason("temperature_switch", token=top)

    trace = apply(z, config)
    final = trace.probs
    support = trace.support
    if support.size == 1:
        token = int(support[0])
        name = next(n for n, probs in trace.stages if np.count_nonzero(probs) == 1)
        if name == "softmax":
            return True, Reason("single_token", token=token)
        if name == "temperature":
            return True, Reason("temperature_underflow", temperature=config.temperature, token=token)
        if name == "top_k":
            return True, Reason("top_k_one", token=token)
        before = trace.stages[config.order.index("top_p")][1]
        p_max = float(before.max())
        if token != top:  # top-p split a tie at the top: one token, but not greedy's
            tied = _list(np.flatnonzero(before == p_max))
            return True, Reason(
                "top_p_tie_split", tied=tied, top_p=config.top_p, p_max=p_max, token=token, greedy=top
            )
        return True, Reason("top_p_threshold", top_p=config.top_p, p_max=p_max, token=token)

    p_max = float(final.max())
    p_next = float(np.sort(final)[-2])
    tied = np.flatnonzero(final == p_max)
    if tied.size > 1:
        return False, Reason("tie", tied=_list(tied), p_max=p_max, token=int(tied[0]))
    if config.min_tokens_to_keep > 1:
        relaxed = SamplingConfig(config.temperature, config.top_k, config.top_p, 1, config.order)
        if apply(z, relaxed).support.size == 1:
            return False, Reason(
                "min_tokens_to_keep", min_keep=config.min_tokens_to_keep, n=int(support.size)
            )
    if config.top_p < 1.0:
        idx = config.order.index("top_p") + 1
        return False, Reason(
            "several_top_p",
            n=int(support.size),
            p_max=p_max,
            p_next=p_next,
            top_p=config.top_p,
            p_max_stage=float(trace.stages[idx - 1][1].max()),
            kept=int(np.count_nonzero(trace.stages[idx][1])),
        )
    return False, Reason("several", n=int(support.size), p_max=p_max, p_next=p_next)


def _list(indices: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in indices)
