"""The lab "Exact on a real model" on the real bundled SmolLM2-135M-Instruct with its shipped
trained head: the lab's default run, fixed seed, so a fixed outcome: the speculative counts fit
the target's law and "keep every draft token" does not; and held sessions give the events of
fresh ones. Slow (a real model on CPU); CI runs it. Speed is measured in bench/law_live.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import RunOptions, generate
from specdec_core.engine.held import HeldSessions
from specdec_core.engine.processing import float64_rows
from specdec_core.live.law import TIE_LOGITS, LawLab, LawSettings
from specdec_core.live.law_view import joint_test, snapshot
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.presets import preset_prompt
from specdec_core.models.head import HeadDraft
from specdec_core.sampling import SamplingConfig

pytestmark = pytest.mark.slow

HOT = SamplingConfig(temperature=1.0)


@pytest.fixture(scope="module")
def pair(bundled_model):
    target = bundled_model
    return target, HeadDraft(target), target.encode(preset_prompt("copy", "en"), chat=True)


def test_the_default_lab_run_fits_the_targets_law_and_catches_keep_every_draft(pair):
    target, head, ids = pair
    settings = LawSettings(TargetSpec("bundled"), DraftSpec("head"), samples=300)
    lab = LawLab(target, head, ids, settings)
    lab.prime()
    for rule in lab.order():
        lab.draw(rule)
    exact, broken = (joint_test(lab.tallies[r], lab.law, i) for i, r in enumerate(lab.rules))
    assert exact is not None and broken is not None
    assert exact.n == broken.n == 300 and exact.cells >= 3
    assert exact.p_value > 1e-3, exact
    assert broken.p_value < 1e-6, broken
    assert exact.tv < exact.tv_noise < broken.tv
    assert lab.held.prefills == 1
    snap = snapshot(lab, target.token_text, finished=True)
    assert snap.takeaway == "shown"
    # the first token's law is the target's own softmax after the prompt (T = 1, nothing cut)
    row = target.session(ids[:-1]).extend([ids[-1]])[0]
    law = np.exp(row - row.max())
    np.testing.assert_allclose(lab.law.first, law / law.sum(), atol=1e-5)


def test_held_sessions_give_the_events_of_fresh_ones_with_the_trained_head(pair):
    target, head, ids = pair
    held = HeldSessions(target, head, ids)
    for seed in range(8):
        runs = [
            [
                e.to_dict(timings=False)
                for e in generate(
                    target, head, ids, HOT, 2, 3, seed, options=RunOptions(sessions=s, stop_at_eos=False)
                )
            ]
            for s in (held, None)
        ]
        pick = [[(e["committed"], e["kinds"], e["draft_tokens"]) for e in r] for r in runs]
        assert pick[0] == pick[1], seed
        for field in ("draft_p", "draft_q"):  # the head's q agrees to rounding (other kernels)
            np.testing.assert_allclose(
                [p for e in runs[0] for p in e[field]], [p for e in runs[1] for p in e[field]], rtol=1e-4
            )
    assert held.prefills == 1 and held.runs == 8


def test_a_top_k_between_near_tied_tokens_does_not_fail_the_exact_rule(pair):
    """A top-k that cuts between two tokens whose logits tie to rounding: the lab's one-row law
    and the run's three-row verification may keep either, and the counts treat them as one."""
    target, head, ids = pair
    row = float64_rows(target.session(ids[:-1]).extend([ids[-1]]))[0]
    order = np.argsort(-row, kind="stable")
    gaps = row[order[1:200]] - row[order[2:201]]  # between the k-th and (k+1)-th, k = 2 … 200
    k = int(np.argmin(gaps)) + 2
    assert gaps[k - 2] < TIE_LOGITS, "the first 200 logits hold a near-tie"
    settings = LawSettings(TargetSpec("bundled"), DraftSpec("head"), top_k=k, samples=200)
    lab = LawLab(target, head, ids, settings)
    kept, cut = int(order[k - 1]), int(order[k])
    assert lab.law.first[cut] == 0 < lab.law.first[kept]
    assert lab.law.stand_in(None, cut) == kept
    lab.prime()
    for _ in range(settings.samples):
        lab.draw("exact")
    test = joint_test(lab.tallies["exact"], lab.law)
    assert test is not None and test.p_value > 1e-3, test
