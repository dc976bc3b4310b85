"""The generation loops: speculative ``generate`` and the target-only ``autoregressive`` baseline.

Both are generators of ``RoundEvent``s. They validate their inputs when called (so a bad
pair fails at once), take the models' locks when the first event is requested, and give
them back when the run ends or the consumer stops iterating (``break`` out of the loop or
``close()`` the generator).

One round of ``generate``: the draft proposes up to γ tokens, sampling each from exactly
the processed q it reports; the target scores the last committed token plus all drafts in
one forward pass (γ + 1 positions); its logit rows are computed (by an HF model's head, in
blocks) and processed with the same ``SamplingConfig`` only as verification reads them,
left to right (``verify.verify_rows`` / ``processing.greedy_choices`` + ``verify_greedy``,
tested to decide exactly as ``verify.verify_block``; ``reference=True`` computes every row and
calls ``verify_block``), so rows past the first rejection cost nothing; both KV caches are
rolled back to the committed tokens. Temperature 0 makes p and q one-hot at
their argmax (lowest index), so the output equals target-only greedy decoding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from specdec_core.engine.events import RoundEvent, TopTokens
from specdec_core.engine.gamma import GammaController, estimate_cost_ratio, make_controller
from specdec_core.engine.processing import (
    argmax_rows,
    float64_rows,
    greedy_choices,
    process_rows,
    verify_greedy,
)
from specdec_core.models.drafts import check_compatible
from specdec_core.models.locking import hold
from specdec_core.sampling import SamplingConfig, apply, softmax
from specdec_core.verify import sample, verify_block, verify_rows


def generate(
    target: Any,
    draft: Any,
    prompt_ids: Sequence[int],
    sampling: SamplingConfig | None = None,
    gamma: int = 4,
    max_new_tokens: int = 64,
    seed: int = 0,
    adaptive_gamma: bool | str | GammaController = False,
    *,
    gamma_bounds: tuple[int, int] = (1, 16),
    draft_cost: float | None = None,
    top_n: int = 20,
    record_softmax: bool = False,
    stop_at_eos: bool = True,
    lock_timeout: float | None = None,
    reference: bool = False,
) -> Iterator[RoundEvent]:
    """Speculative decoding of `target` with `draft`; yields one ``RoundEvent`` per round.

    `draft` is any model of the protocol (a Markov chain, ``HFCausalLM``, ``LayerSkipDraft``,
    a bf16 copy) or a proposer with ``propose(context, k)`` such as ``NGramDraft``.
    `sampling` (default: temperature 1, no filters) is applied identically to p and q;
    ``temperature=0`` is greedy. `gamma` drafts per round, or the first round's γ when
    `adaptive_gamma` is set: True / "theory" picks each round the γ (0 … upper bound) that
    ``theory.speedup`` predicts best for the recent acceptance rate and the draft's cost
    (`draft_cost` target steps per draft step; estimated from the models when None);
    "heuristic" is transformers' +2 / −1 rule within `gamma_bounds`; or pass a
    ``GammaController``. Controllers use no timings, so runs stay deterministic.
    Each round commits 1 … γ+1 tokens, never more than `max_new_tokens` in total, and the
    run stops after an EOS token of the target unless ``stop_at_eos=False``.
    `top_n` probabilities per row are kept in the events (0 keeps none);
    ``record_softmax`` also keeps the plain softmax rows. `lock_timeout` (seconds, None =
    wait) bounds the wait for a model another generation holds (``ModelBusyError``).
    ``reference=True`` uses the slow reference maths (``sampling.apply`` and
    ``verify.verify_block`` on every row) instead of the fast paths; for tests.

    Same seed and inputs → the same events (timings aside).
    """
    cfg = sampling if sampling is not None else SamplingConfig()
    prompt = _check_run(target, prompt_ids, max_new_tokens, top_n)
    check_compatible(target, draft)
    cost = estimate_cost_ratio(target, draft) if draft_cost is None else draft_cost
    controller = make_controller(gamma, adaptive_gamma, gamma_bounds, cost)
    run = _Run(cfg, seed, top_n, record_softmax, reference)
    return _speculative(target, draft, prompt, run, controller, max_new_tokens, stop_at_eos, lock_timeout)


def autoregressive(
    target: Any,
    prompt_ids: Sequence[int],
    sampling: SamplingConfig | None = None,
    max_new_tokens: int = 64,
    seed: int = 0,
    *,
    top_n: int = 20,
    record_softmax: bool = False,
    stop_at_eos: bool = True,
    lock_timeout: float | None = None,
    reference: bool = False,
) -> Iterator[RoundEvent]:
    """Target-only decoding, one ``RoundEvent`` per token (kind "target", mode "autoregressive").

    ``verify_s`` holds the target's decode step; the fields and options are those of
    :func:`generate`.
    """
    cfg = sampling if sampling is not None else SamplingConfig()
    prompt = _check_run(target, prompt_ids, max_new_tokens, top_n)
    run = _Run(cfg, seed, top_n, record_softmax, reference)
    return _autoregressive(target, prompt, run, max_new_tokens, stop_at_eos, lock_timeout)


#: Logit rows: float32 torch tensors from an HF session, float64 numpy from other models.
Rows = torch.Tensor | np.ndarray


# -- the maths of one run ------------------------------------------------------------------------
class _Run:
    """Per-run settings and the rng; turns logit rows into decisions (fast or reference)."""

    def __init__(self, cfg: SamplingConfig, seed: int, top_n: int, softmax: bool, reference: bool) -> None:
        self.cfg = cfg
        self.greedy = cfg.is_greedy_switch
        self.rng = np.random.default_rng(seed)
        self.top_n = top_n
        self.softmax = softmax
        self.reference = reference

    def probs(self, rows: Rows) -> np.ndarray:
        """Exact processed float64 distributions of each row."""
        if self.reference:
            z = float64_rows(rows)
            return np.stack([apply(r, self.cfg).probs for r in z])
        return process_rows(rows, self.cfg)

    def row_probs(self, rows: Any) -> Callable[[int], np.ndarray]:
        """``i → processed float64 row i`` of lazy target rows (``LogitRows`` / ``_EagerRows``)."""
        return lambda i: self.probs(rows.row(i))[0]

    def draw(self, row: Rows) -> tuple[int, np.ndarray | None]:
        """Sample one token from the processed law of `row` (1, V); greedy needs no row."""
        if self.greedy and not self.reference:
            self.rng.random()  # the draw `sample` makes from a one-hot row
            return argmax_rows(row)[0], None
        q = self.probs(row)[0]
        return sample(q, self.rng), q

    def compact(self, probs: np.ndarray | None, token: int | None = None) -> TopTokens | None:
        if self.top_n <= 0:
            return None
        if probs is None:
            return TopTokens.one_hot(token if token is not None else 0)
        return TopTokens.from_probs(probs, self.top_n)

    def softmax_rows(self, rows: Rows | None) -> list[TopTokens]:
        if not self.softmax or rows is None:
            return []
        return [TopTokens.from_probs(softmax(z), max(self.top_n, 1)) for z in float64_rows(rows)]


def _rows(session: Any, ids: list[int], last_only: bool = False) -> Rows:
    """Logit rows: an HF session's fast float32 torch path, else the protocol's ``extend``."""
    fast = getattr(session, "logits", None)
    if fast is not None:
        return fast(ids, last_only=last_only)
    out = np.asarray(session.extend(ids), dtype=np.float64)
    return out[-1:] if last_only else out


class _EagerRows:
    """All logit rows of a forward pass, behind the interface of ``hf.LogitRows``."""

    seconds = 0.0

    def __init__(self, rows: Rows) -> None:
        self._rows = rows

    def row(self, i: int) -> Rows:
        return self._rows[i : i + 1]

    def all(self) -> Rows:
        return self._rows

    def used(self, n: int) -> Rows:
        return self._rows[:n]


def _target_rows(session: Any, ids: list[int]) -> Any:
    """The verification forward: an HF session's rows computed on demand, else all rows now."""
    lazy = getattr(session, "lazy_logits", None)
    if lazy is not None:
        return lazy(ids)
    return _EagerRows(_rows(session, ids))


def _eos_set(target: Any) -> frozenset[int]:
    ids = getattr(target, "eos_token_ids", None)
    if ids:
        return frozenset(int(i) for i in ids)
    eos = getattr(target, "eos_token_id", None)
    return frozenset() if eos is None else frozenset({int(eos)})


def _check_run(target: Any, prompt_ids: Sequence[int], max_new_tokens: int, top_n: int) -> list[int]:
    prompt = [int(t) for t in prompt_ids]
    if not prompt:
        raise ValueError("the prompt needs at least one token (e.g. BOS) for the model to continue.")
    bad = [t for t in prompt if not 0 <= t < target.vocab_size]
    if bad:
        raise ValueError(f"prompt token {bad[0]} is outside the vocabulary 0 … {target.vocab_size - 1}.")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number ≥ 1, got {max_new_tokens!r}.")
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 0:
        raise ValueError(f"top_n must be a whole number ≥ 0, got {top_n!r}.")
    limit = getattr(target, "max_length", None)
    if limit is not None and len(prompt) + max_new_tokens > limit:
        raise ValueError(
            f"{len(prompt)} prompt tokens + {max_new_tokens} new tokens exceed the "
            f"{limit}-token context of {getattr(target, 'name', 'the target')}."
        )
    return prompt


def _finish(
    committed: list[int], kinds: list[str], eos: frozenset[int], stop_at_eos: bool, produced: int, limit: int
) -> tuple[list[int], list[str], str | None]:
    """Cut the round after an EOS token and say why the run stops, if it does."""
    if stop_at_eos:
        for i, tok in enumerate(committed):
            if tok in eos:
                return committed[: i + 1], kinds[: i + 1], "eos"
    if produced + len(committed) >= limit:
        return committed, kinds, "max_new_tokens"
    return committed, kinds, None


# -- drafters ------------------------------------------------------------------------------------
class _ModelDrafter:
    """A draft model with its session; feeds it the committed tokens it has not seen."""

    def __init__(self, draft: Any, prompt: list[int]) -> None:
        self.session = draft.session(prompt[:-1])
        self.pending = [prompt[-1]]
        self.base = 0
        self.fed_before = 0

    def propose(self, g: int, run: _Run) -> tuple[list[int], list[np.ndarray | None], Rows | None, int]:
        self.base = self.session.length
        self.fed_before = len(self.pending)
        tokens: list[int] = []
        qs: list[np.ndarray | None] = []
        raw: list[Rows] = []
        feed = self.pending
        for _ in range(g):
            row = _rows(self.session, feed, last_only=True)
            x, q = run.draw(row)
            tokens.append(x)
            qs.append(q)
            if run.softmax:
                raw.append(row)
            feed = [x]
        return tokens, qs, (np.concatenate([float64_rows(r) for r in raw]) if raw else None), g

    def commit(self, drafts: list[int], accepted: int, last: int) -> None:
        g = len(drafts)
        if g == 0:
            self.pending = [*self.pending, last]
            return
        valid = min(accepted, g - 1)  # the last draft token itself was never fed
        self.session.truncate(self.base + self.fed_before + valid)
        self.pending = [*drafts[valid:accepted], last]


class _LookupDrafter:
    """A proposer (n-gram prompt lookup): its q is one-hot on each proposed token."""

    def __init__(self, draft: Any, prompt: list[int]) -> None:
        self.draft = draft
        self.context = list(prompt)

    def propose(self, g: int, run: _Run) -> tuple[list[int], list[np.ndarray | None], Rows | None, int]:
        tokens = [int(t) for t in self.draft.propose(self.context, g)][:g] if g > 0 else []
        qs: list[np.ndarray | None] = [None] * len(tokens)
        return tokens, qs, None, 0

    def commit(self, drafts: list[int], accepted: int, last: int) -> None:
        self.context.extend(drafts[:accepted])
        self.context.append(last)


# -- the loops -----------------------------------------------------------------------------------
def _speculative(
    target: Any,
    draft: Any,
    prompt: list[int],
    run: _Run,
    controller: GammaController,
    max_new_tokens: int,
    stop_at_eos: bool,
    lock_timeout: float | None,
) -> Iterator[RoundEvent]:
    eos = _eos_set(target)
    vocab = target.vocab_size
    with hold([target, draft], lock_timeout):
        t0 = time.perf_counter()
        t_sess = target.session(prompt[:-1])
        drafter = _LookupDrafter(draft, prompt) if hasattr(draft, "propose") else _ModelDrafter(draft, prompt)
        prefill = time.perf_counter() - t0
        pending = prompt[-1]
        produced = 0
        index = 0
        while True:
            start = time.perf_counter()
            g = max(0, min(controller.next_gamma(), max_new_tokens - produced - 1))
            drafts, q_full, q_raw, draft_forwards = drafter.propose(g, run)
            drafted = time.perf_counter()
            base = t_sess.length
            rows = _target_rows(t_sess, [pending, *drafts])
            verified = time.perf_counter()

            k = len(drafts)
            draft_q = [1.0] * k
            p_used: list[np.ndarray] | None = None
            if run.greedy and not run.reference:
                choice = greedy_choices(rows.row, drafts)
                result = verify_greedy(choice, drafts, run.rng)
            else:
                q_rows = [
                    q if q is not None else _one_hot(vocab, x) for q, x in zip(q_full, drafts, strict=True)
                ]
                if run.reference:
                    p_all = run.probs(rows.all())
                    result = verify_block(
                        p_all, np.stack(q_rows) if k else np.zeros((0, vocab)), drafts, run.rng
                    )
                    p_used = list(p_all[: len(result.tokens)])
                else:
                    result, p_used = verify_rows(run.row_probs(rows), q_rows, drafts, run.rng)
                draft_q = [float(q_rows[i][x]) for i, x in enumerate(drafts)]
                choice = []
            examined = len(result.acceptance_probs)
            if p_used is None:
                draft_p = [1.0 if drafts[i] == choice[i] else 0.0 for i in range(examined)]
            else:
                draft_p = [float(p_used[i][drafts[i]]) for i in range(examined)]

            a = result.accepted
            t_sess.truncate(base + 1 + a)
            drafter.commit(drafts, a, result.tokens[-1])
            pending = result.tokens[-1]
            controller.update(k, a, a < k)

            committed, kinds, stop = _finish(
                result.tokens, result.kinds, eos, stop_at_eos, produced, max_new_tokens
            )
            q_rows_c = [r for r in (run.compact(q, x) for q, x in zip(q_full, drafts, strict=True)) if r]
            if p_used is None:
                p_rows_c = [r for r in (run.compact(None, c) for c in choice) if r]
            else:
                p_rows_c = [r for r in (run.compact(p) for p in p_used) if r]
            p_soft = run.softmax_rows(rows.used(len(result.tokens))) if run.softmax else []
            end = time.perf_counter()
            head_s = rows.seconds  # target rows computed during verification belong to its forward
            event = RoundEvent(
                index=index,
                mode="speculative",
                gamma=g,
                draft_tokens=list(drafts),
                accepted_count=sum(1 for kind in kinds if kind == "accepted"),
                committed=committed,
                kinds=kinds,
                acceptance_probs=list(result.acceptance_probs),
                draft_q=draft_q,
                draft_p=draft_p,
                q_rows=q_rows_c,
                p_rows=p_rows_c,
                draft_s=drafted - start,
                verify_s=verified - drafted + head_s,
                overhead_s=max(end - verified - head_s, 0.0),
                prefill_s=prefill if index == 0 else 0.0,
                draft_forwards=draft_forwards,
                target_forwards=1,
                position=produced,
                stop_reason=stop,
                rejected=a < k,
                p_softmax=p_soft,
                q_softmax=run.softmax_rows(q_raw),
                extra=controller.state(),
            )
            produced += len(committed)
            index += 1
            yield event
            if stop is not None:
                return


def _autoregressive(
    target: Any,
    prompt: list[int],
    run: _Run,
    max_new_tokens: int,
    stop_at_eos: bool,
    lock_timeout: float | None,
) -> Iterator[RoundEvent]:
    eos = _eos_set(target)
    with hold([target], lock_timeout):
        t0 = time.perf_counter()
        sess = target.session(prompt[:-1])
        prefill = time.perf_counter() - t0
        pending = prompt[-1]
        for index in range(max_new_tokens):
            start = time.perf_counter()
            row = _rows(sess, [pending], last_only=True)
            stepped = time.perf_counter()
            token, p = run.draw(row)
            committed, kinds, stop = _finish([token], ["target"], eos, stop_at_eos, index, max_new_tokens)
            p_row = run.compact(p, token)
            end = time.perf_counter()
            yield RoundEvent(
                index=index,
                mode="autoregressive",
                gamma=0,
                draft_tokens=[],
                accepted_count=0,
                committed=committed,
                kinds=kinds,
                acceptance_probs=[],
                draft_q=[],
                draft_p=[],
                q_rows=[],
                p_rows=[p_row] if p_row else [],
                draft_s=0.0,
                verify_s=stepped - start,
                overhead_s=end - stepped,
                prefill_s=prefill if index == 0 else 0.0,
                draft_forwards=0,
                target_forwards=1,
                position=index,
                stop_reason=stop,
                p_softmax=run.softmax_rows(row),
            )
            if stop is not None:
                return
            pending = token


def _one_hot(size: int, index: int) -> np.ndarray:
    out = np.zeros(size)
    out[index] = 1.0
    return out
