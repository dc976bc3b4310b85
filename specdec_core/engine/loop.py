"""The generation loops: speculative ``generate`` and the target-only ``autoregressive`` baseline.

Both are generators of ``RoundEvent``s. They validate their inputs when called (so a bad
pair fails at once), take the models' locks when the first event is requested, and give
them back when the run ends or the consumer stops iterating (``break`` out of the loop or
``close()`` the generator).

One round of ``generate``: the draft proposes up to γ tokens (:mod:`.drafters`), sampling
each from exactly the processed q it reports; the target scores the last committed token
plus all drafts in one forward pass (γ + 1 positions); its logit rows are computed (by an
HF model's head, in blocks) and processed with the same ``SamplingConfig`` only as
verification reads them, left to right (:mod:`.verification`), so rows past the first
rejection cost nothing; both KV caches are rolled back to the committed tokens and the
round's event is built (:mod:`.round_events`). Temperature 0 makes p and q one-hot at
their argmax (lowest index), so the output equals target-only greedy decoding.

Nothing here imports torch: a run on Markov chains never loads it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from specdec_core.engine.drafters import make_drafter
from specdec_core.engine.events import RoundEvent
from specdec_core.engine.gamma import (
    GammaController,
    draft_cost_ratio,
    make_controller,
    target_verify_cost,
)
from specdec_core.engine.held import HeldSessions, check_held
from specdec_core.engine.round_events import (
    RoundClock,
    RoundInside,
    autoregressive_event,
    speculative_event,
)
from specdec_core.engine.rows import RunMaths, logit_rows, target_rows
from specdec_core.engine.rules import check_rule, verify_broken_round
from specdec_core.engine.stopping import eos_set, finish_round
from specdec_core.engine.verification import verify_round
from specdec_core.models.base import Draft, LanguageModel
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.locking import hold
from specdec_core.models.pairing import paired_draft
from specdec_core.sampling import SamplingConfig, one_hot


def generate(
    target: LanguageModel,
    draft: Draft,
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
    stop_at_eos: bool = True,
    lock_timeout: float | None = None,
    reference: bool = False,
    tree: Sequence[int] | None = None,
    sessions: HeldSessions | None = None,
    rule: str = "exact",
) -> Iterator[RoundEvent]:
    """Speculative decoding of `target` with `draft`; yields one ``RoundEvent`` per round.

    `draft` is any model of the protocol (a Markov chain, ``HFCausalLM``, ``LayerSkipDraft``,
    a bf16 copy) or a proposer with ``propose(context, k)`` such as ``NGramDraft``; a draft
    with another tokenizer drafts in the target's vocabulary (``models.paired_draft``).
    `sampling` (default: temperature 1, no filters) is applied identically to p and q;
    ``temperature=0`` is greedy. `gamma` drafts per round, or the first round's γ when
    `adaptive_gamma` is set: True / "theory" picks each round the γ (0 … upper bound) that
    ``theory.speedup`` predicts best for the recent acceptance rate and the draft's cost
    (`draft_cost` target steps per draft step; estimated from the models when None);
    "heuristic" is transformers' +2 / −1 rule within `gamma_bounds`; or pass a
    ``GammaController``. Controllers use no timings, so runs stay deterministic.
    Each round commits 1 … γ+1 tokens, never more than `max_new_tokens` in total, and the
    run stops after an EOS token of the target unless ``stop_at_eos=False``.
    `top_n` probabilities per row are kept in the events (0 keeps none). `lock_timeout`
    (seconds, None = wait) bounds the wait for a model another generation holds (``ModelBusyError``).
    ``reference=True`` uses the slow reference maths (``sampling.apply`` and
    ``verify.verify_block`` on every row) instead of the fast paths; for tests.

    ``tree=(b_1, …, b_D)`` drafts a token tree instead of a chain (:mod:`.tree_rounds`): b_d
    distinct children under every node of depth d − 1, one target forward with a tree
    mask, 1 … D + 1 tokens a round; `gamma` and `adaptive_gamma` do not apply then.

    ``sessions`` (an :class:`~specdec_core.engine.held.HeldSessions` of this target, draft and
    prompt) runs on sessions kept across runs: the prompt's cache is reused, and both sessions
    are truncated back to it when the run ends; the events are those of fresh sessions (tested).
    ``rule`` "exact" (the default) verifies exactly; "accept_all" and "resample_from_p" are
    broken rules (:mod:`.rules`) for showing what a test of the output's law catches. Both
    apply to chains only.

    Same seed and inputs → the same events (timings aside).
    """
    cfg = sampling if sampling is not None else SamplingConfig()
    prompt = _check_run(target, prompt_ids, max_new_tokens, top_n)
    check_rule(rule)
    held = check_held(sessions, target, draft, prompt) if sessions is not None else None
    draft = held.draft if held is not None else paired_draft(target, draft)  # across two tokenizers
    if tree is not None and (held is not None or rule != "exact"):
        raise ValueError("held sessions and broken rules run chains only: leave the tree out.")
    if tree is not None:
        if isinstance(draft, CrossVocabularyDraft) and draft.to_draft is not None:
            raise ValueError("a draft over another tokenizer drafts chains only: leave the tree out.")
        from specdec_core.engine.tree_rounds import tree_rounds
        from specdec_core.token_tree import check_branching

        if adaptive_gamma:
            raise ValueError("a tree has a fixed shape: adaptive γ applies to chains only.")
        shape = check_branching(tree)
        run = RunMaths(cfg, seed, top_n, reference)
        return tree_rounds(target, draft, prompt, run, shape, max_new_tokens, stop_at_eos, lock_timeout)
    cost = draft_cost_ratio(target, draft) if draft_cost is None else draft_cost
    controller = make_controller(gamma, adaptive_gamma, gamma_bounds, cost, target_verify_cost(target))
    run = RunMaths(cfg, seed, top_n, reference)
    loop = _Loop(controller, max_new_tokens, stop_at_eos, lock_timeout, held, rule)
    return _speculative(target, draft, prompt, run, loop)


def autoregressive(
    target: LanguageModel,
    prompt_ids: Sequence[int],
    sampling: SamplingConfig | None = None,
    max_new_tokens: int = 64,
    seed: int = 0,
    *,
    top_n: int = 20,
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
    run = RunMaths(cfg, seed, top_n, reference)
    return _autoregressive(target, prompt, run, max_new_tokens, stop_at_eos, lock_timeout)


# -- checks -------------------------------------------------------------------------------------
def _check_run(
    target: LanguageModel, prompt_ids: Sequence[int], max_new_tokens: int, top_n: int
) -> list[int]:
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


# -- the loops -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Loop:
    """How a chain run goes: γ, its length and EOS, the lock wait, held sessions, the rule."""

    controller: GammaController
    max_new_tokens: int
    stop_at_eos: bool
    lock_timeout: float | None
    held: HeldSessions | None
    rule: str


def _speculative(
    target: LanguageModel, draft: Draft, prompt: list[int], run: RunMaths, loop: _Loop
) -> Iterator[RoundEvent]:
    with hold([target, draft], loop.lock_timeout):
        held = loop.held
        try:
            yield from _rounds(target, draft, prompt, run, loop)
        finally:
            if held is not None:
                held.reset()


def _rounds(
    target: LanguageModel, draft: Draft, prompt: list[int], run: RunMaths, loop: _Loop
) -> Iterator[RoundEvent]:
    eos = eos_set(target)
    vocab = target.vocab_size
    controller, max_new_tokens, stop_at_eos = loop.controller, loop.max_new_tokens, loop.stop_at_eos
    t0 = time.perf_counter()
    if loop.held is None:
        t_sess = target.session(prompt[:-1])
        drafter = make_drafter(draft, prompt, t_sess)
    else:
        t_sess, drafter = loop.held.open()
    prefill = time.perf_counter() - t0
    pending = prompt[-1]
    produced = 0
    index = 0
    while True:
        start = time.perf_counter()
        g = max(0, min(controller.next_gamma(), max_new_tokens - produced - 1))
        draft_before = drafter.length
        drafts, qs, draft_forwards = drafter.propose(g, run)
        drafted = time.perf_counter()
        draft_peak = drafter.length
        base = t_sess.length
        rows = target_rows(t_sess, [pending, *drafts])
        verified = time.perf_counter()
        target_peak = t_sess.length

        with run.noting_draws() as draws:
            if loop.rule == "exact":
                verdict = verify_round(rows, drafts, qs, run, vocab)
            else:
                q_full = [q if q is not None else one_hot(vocab, x) for q, x in zip(qs, drafts, strict=True)]
                verdict = verify_broken_round(rows, drafts, q_full, run, loop.rule)
        result = verdict.result
        a, k = result.accepted, len(drafts)
        t_sess.truncate(base + 1 + a)
        drafter.commit(drafts, a, result.tokens[-1])
        cache = {"target": [base, target_peak, t_sess.length]}
        if draft_before is not None and draft_peak is not None and drafter.length is not None:
            cache["draft"] = [draft_before, draft_peak, drafter.length]
        examined = len(result.acceptance_probs)
        pending = result.tokens[-1]
        controller.update(k, a, a < k)

        committed, kinds, stop = finish_round(
            result.tokens, result.kinds, eos, stop_at_eos, produced, max_new_tokens
        )
        event = speculative_event(
            index=index,
            gamma=g,
            drafts=drafts,
            qs=qs,
            verdict=verdict,
            committed=committed,
            kinds=kinds,
            stop=stop,
            run=run,
            clock=RoundClock(start, drafted, verified, rows.seconds, prefill if index == 0 else 0.0),
            draft_forwards=draft_forwards,
            position=produced,
            extra=controller.state(),
            inside=RoundInside(
                draws[:examined] if len(draws) >= examined else [], list(drafter.step_s), cache
            ),
        )
        produced += len(committed)
        index += 1
        yield event
        if stop is not None:
            return


def _autoregressive(
    target: LanguageModel,
    prompt: list[int],
    run: RunMaths,
    max_new_tokens: int,
    stop_at_eos: bool,
    lock_timeout: float | None,
) -> Iterator[RoundEvent]:
    eos = eos_set(target)
    with hold([target], lock_timeout):
        t0 = time.perf_counter()
        sess = target.session(prompt[:-1])
        prefill = time.perf_counter() - t0
        pending = prompt[-1]
        for index in range(max_new_tokens):
            start = time.perf_counter()
            row = logit_rows(sess, [pending], last_only=True)
            stepped = time.perf_counter()
            token, p = run.draw(row)
            committed, kinds, stop = finish_round(
                [token], ["target"], eos, stop_at_eos, index, max_new_tokens
            )
            yield autoregressive_event(
                index=index,
                committed=committed,
                kinds=kinds,
                stop=stop,
                p=p,
                run=run,
                start=start,
                stepped=stepped,
                prefill_s=prefill if index == 0 else 0.0,
            )
            if stop is not None:
                return
            pending = token
