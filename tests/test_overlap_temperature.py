"""α against T (overlap lesson): the course function's maths and its figure builder."""

import tomllib

import numpy as np
import pytest
from hypothesis import given, settings

from specdec_core.course.overlap import alpha_by_temperature
from specdec_core.sampling import softmax
from specdec_core.verify import decompose
from specdec_core.viz import overlap as viz
from specdec_core.viz import palette
from support.apptest import ROOT
from tests.strategies import pairs as pq_pairs

TEXT = {
    lang: tomllib.loads((ROOT / "lessons" / lang / "overlap.toml").read_text("utf-8"))["chart"][
        "alpha_temperature"
    ]
    for lang in ("en", "zh")
}


@settings(max_examples=80, deadline=None)
@given(pq_pairs(max_size=24))
def test_the_sweep_in_one_pass_equals_each_temperature_re_tempered_alone(pair):
    """The fast path (all temperatures as rows of one array) against the plain walk, bit for bit."""
    p, q = pair
    sweep = alpha_by_temperature(p, q)
    d = decompose(p, q)
    log_p, log_q = np.full(d.p.size, -np.inf), np.full(d.q.size, -np.inf)
    np.log(d.p, out=log_p, where=d.p > 0)
    np.log(d.q, out=log_q, where=d.q > 0)
    walk = [np.minimum(softmax(log_p / t), softmax(log_q / t)).sum() for t in sweep.temperatures]
    assert np.array_equal(sweep.alpha, np.clip(np.array(walk), 0.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(pq_pairs(max_size=12))
def test_alpha_at_t1_is_the_acceptance_rate_and_stays_in_0_1(pair):
    p, q = pair
    sweep = alpha_by_temperature(p, q, np.array([0.01, 0.3, 1.0, 3.0, 100.0]))
    assert sweep.alpha.dtype == np.float64 and np.all(np.isfinite(sweep.alpha))
    assert np.all((sweep.alpha >= 0) & (sweep.alpha <= 1))
    assert sweep.alpha[2] == pytest.approx(decompose(p, q).acceptance_rate, abs=1e-12)


def test_alpha_tends_to_one_as_t_grows_when_both_laws_cover_every_token():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        sweep = alpha_by_temperature(p, q, np.array([1.0, 10.0, 1e3, 1e6]))
        assert sweep.limit_hot == 1.0
        assert np.all(np.diff(sweep.alpha[1:]) > 0) and sweep.alpha[-1] > 1 - 1e-5


def test_a_u_shape_exists_and_the_limits_are_exact():
    p, q = [0.6, 0.3, 0.1], [0.5, 0.1, 0.4]
    sweep = alpha_by_temperature(p, q, np.array([1e-3, 0.5, 1.0, 2.0, 10.0, 1e4]))
    np.testing.assert_allclose(sweep.alpha, [1.0, 0.640787, 0.7, 0.811027, 0.956252, 0.999955], atol=1e-6)
    assert sweep.alpha[1] < sweep.alpha[0] and sweep.alpha[1] < sweep.alpha[-1]  # down, then up
    assert (sweep.limit_cold, sweep.limit_hot) == (1.0, 1.0)
    # A/B/C: p ties B and C at the top, q's favourite is C -> cold limit 1/2.
    abc = alpha_by_temperature([0.2, 0.4, 0.4], [0.1, 0.1, 0.8], np.array([1e-4, 0.4, 10.0]))
    np.testing.assert_allclose(abc.alpha, [0.5, 0.470323, 0.959920], atol=1e-6)
    # Different supports: p gives C nothing, so the hot limit is |{A, B}| / 3 and α falls there.
    pz = alpha_by_temperature([0.5, 0.5, 0.0], [0.4, 0.3, 0.3], np.array([0.4, 1e5]))
    assert pz.limit_hot == pytest.approx(2 / 3) and pz.alpha[1] == pytest.approx(2 / 3, abs=1e-5)
    assert pz.alpha[0] > pz.alpha[1]  # here a higher temperature does lower α


@pytest.mark.parametrize("temps", [np.array([]), np.array([0.0, 1.0]), np.array([np.nan]), np.ones((2, 2))])
def test_bad_temperatures_raise(temps):
    with pytest.raises(ValueError, match="temperatures"):
        alpha_by_temperature([0.5, 0.5], [0.5, 0.5], temps)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figure_draws_the_sweep_the_limit_and_the_chosen_t(lang):
    sweep = alpha_by_temperature([0.6, 0.3, 0.1], [0.5, 0.1, 0.4])
    fig = viz.alpha_temperature(sweep.temperatures, sweep.alpha, sweep.limit_hot, (0.5, 0.640787), TEXT[lang])
    line, marker = fig.data
    np.testing.assert_array_equal(np.asarray(line.x), sweep.temperatures)
    np.testing.assert_array_equal(np.asarray(line.y), sweep.alpha)
    assert line.name == TEXT[lang]["alpha"] and line.line.color == palette.OVERLAP
    assert list(marker.x) == [0.5] and marker.y[0] == pytest.approx(0.640787, abs=1e-5)
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.title.text == TEXT[lang]["xaxis"]
    assert fig.layout.shapes[0].y0 == 1.0 and fig.layout.annotations[0].text == TEXT[lang]["limit_hot"]


def test_the_figure_refuses_nan_and_mismatched_arrays():
    with pytest.raises(ValueError):
        viz.alpha_temperature([1.0, 2.0], [0.5, float("nan")], 1.0, (1.0, 0.5), TEXT["en"])
    with pytest.raises(ValueError):
        viz.alpha_temperature([1.0, 2.0], [0.5], 1.0, (1.0, 0.5), TEXT["en"])
    with pytest.raises(KeyError, match="alpha_temperature"):
        viz.alpha_temperature([1.0], [0.5], 1.0, (1.0, 0.5), {"alpha": "a"})
