"""The generation loops: speculative ``generate`` and the target-only ``autoregressive`` baseline.

Both are generators of ``RoundEvent``s. They validate their inputs when called (so a bad
pair fails at once), open their sessions when the first event is requested, and end the run
when it finishes or the consumer stops iterating (``break`` out of the loop or ``close()`` the
generator). One run uses the models at a time: the app runs every model use as a job of its
run service's one worker.

One speculative round is :func:`speculative_round`, read top to bottom: the draft proposes
a chain of up to γ tokens, or a token tree (:mod:`.drafters`), sampling each from exactly
the processed q it reports; the target scores the last committed token plus every draft in
ONE forward pass (a tree with a tree attention mask); its logit rows are computed (by an HF
model's head, in blocks) and processed with the same ``SamplingConfig`` only as verification
reads them (:mod:`.verification`), so rows past the first rejection cost nothing; both KV
caches are rolled back to the committed tokens; the round's event is built. Temperature 0
makes p and q one-hot at their argmax (lowest index), so the output equals target-only
greedy decoding.

Nothing here imports torch: a run on Markov chains never loads it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from specdec_core.engine.drafters import Drafter, Tree, make_drafter
from specdec_core.engine.events import RoundEvent
from specdec_core.engine.gamma import GammaController, draft_cost_ratio, make_controller, target_verify_cost
from specdec_core.engine.held import HeldSessions, check_held
from specdec_core.engine.rows import RunMaths, logit_rows, target_rows, tree_rows
from specdec_core.engine.rules import check_rule, verify_broken_round
from specdec_core.engine.verification import tree_record, verify_round, verify_tree
from specdec_core.models.base import Draft, LanguageModel, Session
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.pairing import paired_draft
from specdec_core.sampling import SamplingConfig
from specdec_core.token_tree import check_branching


@dataclass(frozen=True)
class RunOptions:
    """Everything a run may set beyond the positional form of :func:`generate`.

    ``rule``: "exact" (the default) verifies exactly; "accept_all" and "resample_from_p" are
    broken rules (:mod:`.rules`) for showing what a test of the output's law catches.
    ``sessions``: an :class:`~specdec_core.engine.held.HeldSessions` of this target, draft and
    prompt: the prompt's cache is reused, and both sessions are truncated back to it when the
    run ends; the events are those of fresh sessions (tested). Both apply to chains only.
    ``stop_at_eos``: stop after an EOS token of the target. ``top_n``: probabilities per row
    kept in the events (0 keeps none). ``gamma_bounds`` and ``draft_cost`` (target steps per
    draft step; estimated from the models when None) price adaptive γ. ``reference=True`` uses
    the slow reference maths (``sampling.apply`` and ``verify.verify_block`` on every row)
    instead of the fast paths.
    """

    rule: str = "exact"
    sessions: HeldSessions | None = None
    stop_at_eos: bool = True
    top_n: int = 20
    gamma_bounds: tuple[int, int] = (1, 16)
    draft_cost: float | None = None
    reference: bool = False


DEFAULT = RunOptions()


def generate(
    target: LanguageModel,
    draft: Draft,
    /,
    prompt_ids: Sequence[int],
    sampling: SamplingConfig | None = None,
    gamma: int = 4,
    max_new_tokens: int = 64,
    seed: int = 0,
    adaptive_gamma: bool | str | GammaController = False,
    *,
    tree: Sequence[int] | None = None,
    options: RunOptions = DEFAULT,
) -> Iterator[RoundEvent]:
    """Speculative decoding of `target` with `draft`; yields one ``RoundEvent`` per round.

    `draft` is any model of the protocol (a Markov chain, ``HFCausalLM``, ``LayerSkipDraft``,
    a bf16 copy) or a proposer with ``propose(context, k)`` such as ``NGramDraft``; a draft
    with another tokenizer drafts in the target's vocabulary (``models.paired_draft``).
    `sampling` (default: temperature 1, no filters) is applied identically to p and q;
    ``temperature=0`` is greedy. `gamma` drafts per round, or the first round's γ when
    `adaptive_gamma` is set: True / "theory" picks each round the γ (0 … upper bound) that
    ``theory.speedup`` predicts best for the recent acceptance rate and the draft's cost;
    "heuristic" is transformers' +2 / −1 rule within ``options.gamma_bounds``; or pass a
    ``GammaController``. Controllers use no timings, so runs stay deterministic.
    Each round commits 1 … γ+1 tokens, never more than `max_new_tokens` in total.

    ``tree=(b_1, …, b_D)`` drafts a token tree instead of a chain: b_d distinct children
    under every node of depth d − 1, one target forward with a tree mask, 1 … D + 1 tokens a
    round; `gamma` and `adaptive_gamma` do not apply then. `options`: :class:`RunOptions`.

    Same seed and inputs → the same events (timings aside).
    """
    cfg = sampling if sampling is not None else SamplingConfig()
    prompt = _check_run(target, prompt_ids, max_new_tokens, options.top_n)
    check_rule(options.rule)
    held = options.sessions
    held = check_held(held, target, draft, prompt) if held is not None else None
    draft = held.draft if held is not None else paired_draft(target, draft)  # across two tokenizers
    shape: tuple[int, ...] | None = None
    if tree is not None:
        if held is not None or options.rule != "exact":
            raise ValueError("held sessions and broken rules run chains only: leave the tree out.")
        if isinstance(draft, CrossVocabularyDraft) and draft.to_draft is not None:
            raise ValueError("a draft over another tokenizer drafts chains only: leave the tree out.")
        if adaptive_gamma:
            raise ValueError("a tree has a fixed shape: adaptive γ applies to chains only.")
        shape = tuple(check_branching(tree))
    controller = None
    if shape is None:
        cost = draft_cost_ratio(target, draft) if options.draft_cost is None else options.draft_cost
        controller = make_controller(
            gamma, adaptive_gamma, options.gamma_bounds, cost, target_verify_cost(target)
        )
    run = RunMaths(cfg, seed, options.top_n, options.reference)
    return _speculative(target, draft, prompt, run, _Plan(controller, shape, max_new_tokens, options, held))


def autoregressive(
    target: LanguageModel,
    /,
    prompt_ids: Sequence[int],
    sampling: SamplingConfig | None = None,
    max_new_tokens: int = 64,
    seed: int = 0,
    *,
    options: RunOptions = DEFAULT,
) -> Iterator[RoundEvent]:
    """Target-only decoding, one ``RoundEvent`` per token (kind "target", mode "autoregressive").

    ``verify_s`` holds the target's decode step; the fields and options (``stop_at_eos``,
    ``top_n``, ``reference``) are those of :func:`generate`.
    """
    cfg = sampling if sampling is not None else SamplingConfig()
    prompt = _check_run(target, prompt_ids, max_new_tokens, options.top_n)
    run = RunMaths(cfg, seed, options.top_n, options.reference)
    return _autoregressive(target, prompt, run, max_new_tokens, options)


# -- checks and stopping --------------------------------------------------------------------------
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


def eos_set(target: LanguageModel) -> frozenset[int]:
    """The token ids that end a run for `target` (its list of EOS ids, else its one EOS id)."""
    ids = getattr(target, "eos_token_ids", None)
    if ids:
        return frozenset(int(i) for i in ids)
    eos = getattr(target, "eos_token_id", None)
    return frozenset() if eos is None else frozenset({int(eos)})


def _cut(
    tokens: list[int], kinds: list[str], eos: frozenset[int], stop_at_eos: bool, produced: int, limit: int
) -> tuple[list[int], list[str], str | None]:
    """A round's tokens cut after an EOS token, and why the run stops there, if it does."""
    if stop_at_eos:
        for i, tok in enumerate(tokens):
            if tok in eos:
                return tokens[: i + 1], kinds[: i + 1], "eos"
    if produced + len(tokens) >= limit:
        return tokens, kinds, "max_new_tokens"
    return tokens, kinds, None


# -- the loops -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    """How a run goes: γ, the tree's shape (None: chains), its length, its options, held sessions."""

    controller: GammaController | None  # None for trees
    shape: tuple[int, ...] | None
    max_new_tokens: int
    options: RunOptions
    held: HeldSessions | None


@dataclass
class RunState:
    """What carries from one round to the next: the target's session, the drafter, the token
    fed next (committed, not yet in either cache), the tokens produced and the round's index."""

    session: Session
    drafter: Drafter
    pending: int
    eos: frozenset[int]
    produced: int = 0
    index: int = 0
    prefill_s: float = 0.0


def _speculative(
    target: LanguageModel, draft: Draft, prompt: list[int], run: RunMaths, plan: _Plan
) -> Iterator[RoundEvent]:
    try:
        t0 = time.perf_counter()
        if plan.held is None:
            t_sess = target.session(prompt[:-1])
            drafter = make_drafter(draft, prompt, t_sess, tree=plan.shape is not None)
        else:
            t_sess, drafter = plan.held.open()
        state = RunState(t_sess, drafter, prompt[-1], eos_set(target))
        state.prefill_s = time.perf_counter() - t0
        while True:
            event = speculative_round(state, run, plan, target.vocab_size)
            yield event
            if event.stop_reason is not None:
                return
    finally:
        if plan.held is not None:
            plan.held.reset()


def speculative_round(state: RunState, run: RunMaths, plan: _Plan, vocab: int) -> RoundEvent:
    """One round, chain or tree: draft → one target pass → verify → commit and roll back both
    caches → the round's event. Advances `state` to the next round."""
    drafter, t_sess, left = state.drafter, state.session, plan.max_new_tokens - state.produced
    start = time.perf_counter()
    # 1. draft: a chain of g tokens, or a tree whose depth leaves room for the bonus token
    if plan.controller is not None:
        g = max(0, min(plan.controller.next_gamma(), left - 1))
        draft_before = drafter.length
        drafts, qs, draft_forwards = drafter.propose(g, run)
        draft_peak = drafter.length
    else:
        shape = plan.shape[: max(0, min(len(plan.shape), left - 1))]
        g = len(shape)
        tree: Tree
        tree, draft_forwards = drafter.propose(shape, run)
    drafted = time.perf_counter()

    # 2. one target pass over the last committed token and every draft
    base = t_sess.length
    if plan.shape is None:
        rows = target_rows(t_sess, [state.pending, *drafts])
    else:
        rows = tree_rows(t_sess, list(tree.tokens), list(tree.parents))
    verified = time.perf_counter()
    target_peak = t_sess.length

    # 3. verify, noting the accept tests' uniform draws
    with run.noting_draws() as draws:
        if plan.shape is not None:
            verdict = verify_tree(rows, tree, run, vocab, drafter.point_mass)
        elif plan.options.rule == "exact":
            verdict = verify_round(rows, drafts, qs, run, vocab)
        else:
            verdict = verify_broken_round(rows, drafts, qs, run, vocab, plan.options.rule)

    # 4. commit, and roll both caches back to the committed text (the last token is fed next round)
    last = verdict.tokens[-1]
    if plan.controller is not None:
        a = verdict.accepted
        t_sess.truncate(base + 1 + a)
        drafter.commit(drafts, a, last)
        plan.controller.update(len(drafts), a, a < len(drafts))
        cache = {"target": [base, target_peak, t_sess.length]}
        if draft_before is not None and draft_peak is not None and drafter.length is not None:
            cache["draft"] = [draft_before, draft_peak, drafter.length]
        examined = len(verdict.alphas)
        draft_u = draws[:examined] if len(draws) >= examined else []
        draft_step_s, extra = list(drafter.step_s), plan.controller.state()
    else:
        t_sess.compact(verdict.path)
        drafter.commit(tree, verdict.path, last)
        cache, draft_u, draft_step_s, extra = {}, [], [], {"tree_nodes": tree.size - 1}
    committed, kinds, stop = _cut(
        verdict.tokens,
        verdict.kinds,
        state.eos,
        plan.options.stop_at_eos,
        state.produced,
        plan.max_new_tokens,
    )

    # 5. the event: the drafts, q and p rows read, the decisions, timings, and the tree
    q_rows = [
        r for r in (run.compact(q, x) for q, x in zip(verdict.q_rows, verdict.drafts, strict=True)) if r
    ]
    if verdict.p_used is None:
        p_rows = [r for r in (run.compact(None, c) for c in verdict.choice) if r]
    else:
        p_rows = [r for r in (run.compact(p) for p in verdict.p_used) if r]
    head_s = getattr(rows, "seconds", 0.0)  # the target's rows, computed as verification read them
    end = time.perf_counter()
    event = RoundEvent(
        index=state.index,
        mode="speculative",
        gamma=g,
        draft_tokens=list(verdict.drafts),
        accepted_count=sum(1 for kind in kinds if kind == "accepted"),
        committed=committed,
        kinds=kinds,
        acceptance_probs=list(verdict.alphas),
        draft_q=verdict.draft_q,
        draft_p=verdict.draft_p,
        q_rows=q_rows,
        p_rows=p_rows,
        draft_s=drafted - start,
        verify_s=verified - drafted + head_s,
        overhead_s=max(end - verified - head_s, 0.0),
        prefill_s=state.prefill_s if state.index == 0 else 0.0,
        draft_forwards=draft_forwards,
        target_forwards=1,
        position=state.produced,
        stop_reason=stop,
        rejected=verdict.kinds[-1] == "corrected",
        extra=extra,
        tree=None if plan.shape is None else tree_record(tree, verdict, shape, run),
        draft_u=draft_u,
        draft_step_s=draft_step_s,
        cache=cache,
    )
    state.pending = last
    state.produced += len(committed)
    state.index += 1
    return event


def _autoregressive(
    target: LanguageModel, prompt: list[int], run: RunMaths, max_new_tokens: int, options: RunOptions
) -> Iterator[RoundEvent]:
    eos = eos_set(target)
    t0 = time.perf_counter()
    sess = target.session(prompt[:-1])
    prefill = time.perf_counter() - t0
    pending = prompt[-1]
    for index in range(max_new_tokens):
        start = time.perf_counter()
        row = logit_rows(sess, [pending], last_only=True)
        stepped = time.perf_counter()
        token, p = run.draw(row)
        committed, kinds, stop = _cut([token], ["target"], eos, options.stop_at_eos, index, max_new_tokens)
        p_row = run.compact(p, committed[0])
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
            overhead_s=time.perf_counter() - stepped,
            prefill_s=prefill if index == 0 else 0.0,
            draft_forwards=0,
            target_forwards=1,
            position=index,
            stop_reason=stop,
        )
        if stop is not None:
            return
        pending = token
