"""``stats.chisquare`` holds its level: exact samples from long-tailed laws are rejected no more
often than the level says (20,000 simulated runs), its Monte Carlo p-value is reproducible, and a
broken rule is still caught at the lab's default number of samples."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.live.law import DEFAULT_SAMPLES, LawLab, LawSettings
from specdec_core.live.law_view import FAILS, joint_test
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.stats import MC_BAND, _cells, chi2_sf, chisquare

RUNS = 20_000


def _zipf(s: float, size: int) -> np.ndarray:
    law = 1.0 / np.arange(1, size + 1) ** s
    return law / law.sum()


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize("n", [300, 2000])
@pytest.mark.parametrize("law", [_zipf(0.8, 1000), _zipf(1.0, 49_152)], ids=["zipf0.8_V1000", "zipf1_V49152"])
def test_exact_samples_from_long_tailed_laws_are_rejected_at_the_nominal_rate(law, n):
    cells = _cells(law, n, 5.0)
    pooled = np.array([law[c].sum() for c in cells])
    # the counts of the pooled cells are drawn directly (the same law as pooling drawn tokens)
    rows = np.random.default_rng(1).multinomial(n, pooled / pooled.sum(), size=RUNS)
    full = np.zeros(law.size)
    full[[c[0] for c in cells[:-1]]] = rows[0, :-1]
    full[cells[-1][0]] = rows[0, -1]
    assert chisquare(full, law).p_value == chisquare(rows[0], pooled).p_value  # pooling is the same
    p = np.array([chisquare(row, pooled).p_value for row in rows])
    assert len(cells) >= 3
    assert np.mean(p < 0.01) <= 0.0115
    assert np.mean(p < 0.001) <= 0.0014
    # the χ² approximation alone would not hold these levels on the same runs
    dof = len(cells) - 1
    e = pooled / pooled.sum() * n
    approx = np.array([chi2_sf(float(np.sum((r - e) ** 2 / e)), dof) for r in rows])
    assert np.mean(approx < 0.001) > np.mean(p < 0.001)


def test_the_monte_carlo_p_value_is_reproducible_and_keeps_tiny_p_values():
    law = np.array([0.5, 0.3, 0.15, 0.05])
    counts = np.array([38, 36, 14, 12])  # χ² ≈ 13.9 on 3 dof: inside the simulated band
    first = chisquare(counts, law)
    assert MC_BAND[0] <= chi2_sf(first.statistic, first.dof) < MC_BAND[1]
    assert first.p_value == chisquare(counts, law).p_value
    assert first.p_value != pytest.approx(chi2_sf(first.statistic, first.dof), rel=1e-6)
    far = chisquare(np.array([10, 10, 10, 70]), law)
    assert far.p_value == chi2_sf(far.statistic, far.dof) < 1e-12  # no sample reaches it


def test_a_broken_rule_is_still_caught_at_the_labs_default_n():
    settings = LawSettings(TargetSpec("toy"), DraftSpec("toy_draft"))
    assert settings.samples == DEFAULT_SAMPLES and settings.broken == "accept_all"
    target = toy_target()
    lab = LawLab(target, toy_draft(), target.encode("the cat sat on the"), settings)
    lab.prime()
    for rule in lab.order():
        lab.draw(rule)
    exact, broken = (joint_test(lab.tallies[r], lab.law, i) for i, r in enumerate(lab.rules))
    assert exact is not None and broken is not None
    assert exact.p_value >= 0.01
    assert broken.p_value < FAILS
