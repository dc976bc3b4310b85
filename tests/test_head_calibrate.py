"""train/calibrate.py's replay: the engine's chain stop and γ controller along held-out answers."""

import numpy as np
import pytest

from specdec_core.engine.gamma import default_verify_cost
from train.calibrate import DEPTHS, replay


def _answer(conf: float, hits: bool, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    return np.full((n, DEPTHS), conf), np.full((n, DEPTHS), hits)


def test_a_floor_of_one_keeps_only_the_first_draft_and_prices_the_one_left_out():
    out = replay([_answer(0.9, True)], 1.0, 0.1)
    assert out["alpha"] == 1.0  # every kept draft is right
    # γ starts at 4: each round keeps 1 draft, runs 2 forwards, commits 2 tokens
    assert out["tokens_per_step"] == pytest.approx(2 / (default_verify_cost(1) + 2 * 0.1))


def test_without_a_floor_confident_right_drafts_make_long_rounds():
    sure = replay([_answer(0.99, True)], 0.0, 0.05)
    doubtful = replay([_answer(0.99, True)], 0.975, 0.05)  # 0.99² ≥ 0.975 > 0.99³: chains of 2
    assert sure["tokens_per_step"] > doubtful["tokens_per_step"] > 1.0


def test_wrong_drafts_lower_alpha_and_the_floor_cuts_their_waste():
    wrong = [_answer(0.3, False)]
    assert replay(wrong, 0.0, 0.05)["alpha"] == 0.0
    assert replay(wrong, 0.2, 0.05)["tokens_per_step"] >= replay(wrong, 0.0, 0.05)["tokens_per_step"]
