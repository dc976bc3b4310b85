"""The engine's thread count: chosen by measurement once per machine key, unless the environment
names it."""

from __future__ import annotations

import json

import pytest
import torch

from specdec_core.models.hf import loading, thread_choice
from specdec_core.models.user_cache import CACHE_ENV


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process whose thread count is not settled yet, with an empty cache folder; torch's count
    is restored afterwards."""
    before = torch.get_num_threads()
    monkeypatch.setattr(loading, "_threads_done", False)
    monkeypatch.setattr(thread_choice, "_last", None)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(loading.THREADS_ENV, raising=False)
    yield
    torch.set_num_threads(before)


def test_the_candidates_double_up_to_the_default():
    assert thread_choice.candidates(1) == [1]
    assert thread_choice.candidates(2) == [1, 2]
    assert thread_choice.candidates(6) == [1, 2, 4, 6]
    assert thread_choice.candidates(8) == [1, 2, 4, 8]


def test_a_larger_count_must_win_by_more_than_the_tie():
    assert thread_choice.pick({1: 10.0, 2: 9.8}) == 1
    assert thread_choice.pick({1: 10.0, 2: 9.0}) == 2
    assert thread_choice.pick({1: 10.0, 2: 6.0, 4: 5.9}) == 2
    assert thread_choice.pick({1: 5.0, 2: 9.0}) == 1


def test_measuring_times_every_count_and_restores_torchs(fresh):
    torch.set_num_threads(1)
    got = thread_choice.measure([1, 2], samples=1)
    assert set(got) == {1, 2} and all(t > 0 for t in got.values())
    assert torch.get_num_threads() == 1


def test_the_choice_is_measured_once_and_then_read(fresh, monkeypatch):
    n = thread_choice.choose()
    saved = json.loads(thread_choice.cache_file().read_text())
    assert saved["threads"] == n == torch.get_num_threads() == thread_choice.last()["threads"]
    assert str(n) in saved["timings_ms"] and all(t > 0 for t in saved["timings_ms"].values())
    monkeypatch.setattr(loading, "_threads_done", False)
    monkeypatch.setattr(thread_choice, "measure", lambda counts: pytest.fail("measured twice"))
    assert thread_choice.choose() == n


def test_the_environment_names_the_count(fresh, monkeypatch):
    monkeypatch.setenv(loading.THREADS_ENV, "1")
    monkeypatch.setattr(thread_choice, "measure", lambda counts: pytest.fail("measured"))
    assert thread_choice.choose() == 1 and thread_choice.last() is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_about_page_shows_the_choice(lang, fresh):
    from specdec_core.models.hf import kernels
    from support.apptest import open_page

    n = thread_choice.choose()
    saved = dict(kernels._CHOICES)
    kernels.record((8, 4), torch.float32, {1: "linear"})  # as a model's load records its kernels
    try:
        at = open_page("about", lang=lang)
    finally:
        kernels.forget_choices()
        kernels._CHOICES.update(saved)
    shown = " ".join(c.value for c in at.caption)
    assert not at.exception and f" {n} " in shown
    assert all(f"{k}: " in shown for k in thread_choice.last()["timings_ms"])
