"""Runs on held sessions (engine.held) and the broken verification rules (engine.rules).

Held sessions reuse the prompt's cache across runs: a run on them gives the events a run on
fresh sessions gives for the same seed (Markov pair, tiny transformers, a random trained head),
the prompt is prefilled once, and a run stopped early leaves them ready for the next. Without
``sessions`` and ``rule``, ``generate`` opens fresh sessions per run and verifies exactly, as
before. The broken rules emit the laws ``variants.emitted_law`` gives them, which a χ² test
tells from the target's.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import RunOptions, generate
from specdec_core.engine.held import HeldSessions
from specdec_core.models import HFCausalLM, LayerSkipDraft
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.stats import chisquare
from specdec_core.variants import emitted_law
from tests.markov_pair import DRAFT, START, TARGET, V

HOT = SamplingConfig(temperature=1.0)


def _events(target, draft, prompt, seed, held=None, rule="exact", cfg=HOT, gamma=2, new=3):
    run = generate(
        target,
        draft,
        prompt,
        cfg,
        gamma,
        new,
        seed,
        options=RunOptions(sessions=held, rule=rule, stop_at_eos=False),
    )
    return [e.to_dict(timings=False) for e in run]


class CountingTarget:
    """A Markov target that counts the sessions opened on it."""

    def __init__(self, model) -> None:
        self.model = model
        self.opened = 0
        self.vocab_size = model.vocab_size
        self.eos_token_id = model.eos_token_id

    def session(self, prompt_ids):
        self.opened += 1
        return self.model.session(prompt_ids)


def test_held_sessions_give_the_events_of_fresh_ones_on_the_markov_pair():
    prompt = [START, 2, 1]
    held = HeldSessions(TARGET, DRAFT, prompt)
    for seed in range(40):
        assert _events(TARGET, DRAFT, prompt, seed, held) == _events(TARGET, DRAFT, prompt, seed), seed
    assert held.prefills == 1 and held.runs == 40


def test_default_generate_opens_fresh_sessions_and_verifies_exactly():
    counting = CountingTarget(TARGET)
    prompt = [START, 1]
    for seed in range(3):
        default = [e.to_dict(timings=False) for e in generate(counting, DRAFT, prompt, HOT, 2, 6, seed)]
        explicit = [
            e.to_dict(timings=False)
            for e in generate(
                TARGET, DRAFT, prompt, HOT, 2, 6, seed, options=RunOptions(sessions=None, rule="exact")
            )
        ]
        reference = [
            e.to_dict(timings=False)
            for e in generate(TARGET, DRAFT, prompt, HOT, 2, 6, seed, options=RunOptions(reference=True))
        ]
        assert default == explicit == reference
    assert counting.opened == 3, "one fresh target session per run"
    held_counting = CountingTarget(TARGET)
    held = HeldSessions(held_counting, DRAFT, prompt)
    for seed in range(3):
        list(generate(held_counting, DRAFT, prompt, HOT, 2, 6, seed, options=RunOptions(sessions=held)))
    assert held_counting.opened == 1, "held sessions prefill once"


def test_a_run_closed_early_leaves_the_held_sessions_ready():
    prompt = [START, 3]
    held = HeldSessions(TARGET, DRAFT, prompt)
    run = generate(TARGET, DRAFT, prompt, HOT, 4, 20, 7, options=RunOptions(sessions=held))
    next(run)
    run.close()
    assert held._target.length == held.base == held._draft.length
    assert _events(TARGET, DRAFT, prompt, 9, held, gamma=4, new=20) == _events(
        TARGET, DRAFT, prompt, 9, gamma=4, new=20
    )


def test_scores_give_the_targets_rows_and_restore_the_cache():
    prompt = [START, 2]
    held = HeldSessions(TARGET, DRAFT, prompt)
    rows = held.scores([1, 3])
    expected = np.stack([TARGET.next_logits(t) for t in (2, 1, 3)])
    np.testing.assert_allclose(rows, expected)
    assert held._target.length == held.base
    assert _events(TARGET, DRAFT, prompt, 1, held) == _events(TARGET, DRAFT, prompt, 1)


def test_held_sessions_refuse_other_models_prompts_and_trees():
    held = HeldSessions(TARGET, DRAFT, [START, 1])
    with pytest.raises(ValueError, match="another prompt"):
        list(generate(TARGET, DRAFT, [START, 2], options=RunOptions(sessions=held)))
    with pytest.raises(ValueError, match="another target or draft"):
        list(generate(DRAFT, TARGET, [START, 1], options=RunOptions(sessions=held)))
    with pytest.raises(ValueError, match="chains only"):
        list(generate(TARGET, DRAFT, [START, 1], options=RunOptions(sessions=held), tree=(2, 1)))
    with pytest.raises(ValueError, match="chains only"):
        list(generate(TARGET, DRAFT, [START, 1], options=RunOptions(rule="accept_all"), tree=(2, 1)))
    with pytest.raises(ValueError, match="unknown verification rule"):
        generate(TARGET, DRAFT, [START, 1], options=RunOptions(rule="keep_some"))


def _first_two(rule: str, n: int, held: HeldSessions | None = None) -> np.ndarray:
    counts = np.zeros(V * V)
    for seed in range(n):
        toks = []
        for e in generate(
            TARGET,
            DRAFT,
            [START],
            HOT,
            2,
            3,
            seed,
            options=RunOptions(sessions=held, rule=rule, stop_at_eos=False),
        ):
            toks += e.committed
            if len(toks) >= 2:
                break
        counts[toks[0] * V + toks[1]] += 1
    return counts


def _joint(rows_from) -> np.ndarray:
    p = [apply(TARGET.next_logits(t), HOT).probs for t in range(V)]
    return np.array([p[START][a] * rows_from[a][b] for a in range(V) for b in range(V)])


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_broken_rules_break_the_law_and_the_exact_rule_on_held_sessions_keeps_it():
    p = [apply(TARGET.next_logits(t), HOT).probs for t in range(V)]
    law = _joint(p)
    held = HeldSessions(TARGET, DRAFT, [START])
    assert chisquare(_first_two("exact", 2000, held), law).p_value > 1e-3
    for rule in ("accept_all", "resample_from_p"):
        assert chisquare(_first_two(rule, 2000), law).p_value < 1e-6, rule


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize("rule", ["accept_all", "resample_from_p"])
def test_the_first_token_of_a_broken_rule_follows_its_single_position_law(rule):
    p = apply(TARGET.next_logits(START), HOT).probs
    q = apply(DRAFT.next_logits(START), HOT).probs
    counts = _first_two(rule, 3000).reshape(V, V).sum(axis=1)
    assert chisquare(counts, emitted_law(p, q, rule)).p_value > 1e-3


@pytest.fixture(scope="module")
def tiny_pair(tiny_hf_folders):
    target = HFCausalLM.load(tiny_hf_folders["target"], device="cpu")
    return target, HFCausalLM.load(tiny_hf_folders["draft"], device="cpu")


@pytest.mark.parametrize("which", ["model", "layerskip"])
def test_held_sessions_give_the_events_of_fresh_ones_on_tiny_transformers(tiny_pair, which):
    target, model_draft = tiny_pair
    draft = model_draft if which == "model" else LayerSkipDraft(target, 2)
    prompt = target.encode("the quick brown fox jumps over")
    held = HeldSessions(target, draft, prompt)
    for seed in range(6):
        assert _events(target, draft, prompt, seed, held, gamma=3, new=5) == _events(
            target, draft, prompt, seed, gamma=3, new=5
        ), seed
    assert held.prefills == 1


def test_a_trained_head_stays_bound_on_held_sessions(tiny_pair, tmp_path):
    import torch

    from specdec_core.models.head import EagleHead, HeadConfig, HeadDraft, save_head

    target, _ = tiny_pair
    torch.manual_seed(3)
    head = EagleHead(HeadConfig.for_target(target.module, target.name))
    for w in head.parameters():
        if w.dim() == 2:
            torch.nn.init.normal_(w, std=0.2)
    path = tmp_path / "tiny-head.safetensors"
    save_head(head, torch.arange(0, target.vocab_size, 2), path, {"steps": 0})
    draft = HeadDraft(target, path)
    prompt = target.encode("the quick brown fox jumps over")
    held = HeldSessions(target, draft, prompt)
    for seed in range(6):
        a = _events(target, draft, prompt, seed, held, gamma=3, new=5)
        b = _events(target, draft, prompt, seed, gamma=3, new=5)
        # the head runs the prompt's last token alone on held sessions, with the prefix on fresh
        # ones: other kernels, so its probabilities agree to rounding, its decisions exactly
        assert [(e["committed"], e["kinds"], e["draft_tokens"]) for e in a] == [
            (e["committed"], e["kinds"], e["draft_tokens"]) for e in b
        ], seed
        np.testing.assert_allclose(
            [q for e in a for q in e["draft_q"]], [q for e in b for q in e["draft_q"]], rtol=1e-4
        )
    assert held.prefills == 1 and held._draft.target is held._target
