"""``--prompts FILE`` of the speed benches: one loader, checked input, the shipped prompts kept
for categories the file leaves out; and the copy share that tells whether a target copies."""

from __future__ import annotations

import json

import pytest

from bench import compare, cross, floor, speedup
from bench import prompts as prompt_sets
from specdec_core.live.compare import CATEGORIES, GridError, GridSpec, prompts


def _file(tmp_path, data, name="p.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_a_file_replaces_the_categories_it_names_and_keeps_the_others(tmp_path):
    path = _file(tmp_path, {"copy": ["one", "two"], "poems": ["a poem"]})
    got = prompt_sets.merged({"copy": ["shipped copy"], "chat": ["shipped chat"]}, path)
    assert got == {"copy": ["one", "two"], "chat": ["shipped chat"], "poems": ["a poem"]}
    assert prompt_sets.merged({"chat": ["x"]}, None) == {"chat": ["x"]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "is not JSON"),
        (["a", "b"], "must hold a JSON object"),
        ({}, "must hold a JSON object"),
        ({"copy": "just a string"}, "non-empty list"),
        ({"copy": []}, "non-empty list"),
        ({"copy": ["ok", "  "]}, "non-empty string"),
    ],
)
def test_bad_prompt_files_are_refused_with_a_plain_message(tmp_path, data, message):
    with pytest.raises(ValueError, match=message):
        prompt_sets.load(_file(tmp_path, data))
    with pytest.raises(ValueError, match="cannot read"):
        prompt_sets.load(tmp_path / "missing.json")


@pytest.mark.parametrize("bench", [speedup, cross, compare])
def test_every_speed_bench_takes_prompts_from_a_file(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--help"])
    assert "--prompts FILE" in capsys.readouterr().out


def test_the_floor_bench_has_a_quick_mode(capsys):
    with pytest.raises(SystemExit):
        floor.main(["--help"])
    assert "--quick" in capsys.readouterr().out


def test_copy_share_counts_the_continuation_found_in_the_prompt():
    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3]  # the copy has begun: …1 2 3
    assert prompt_sets.copy_share(prompt, [4, 5, 6, 7, 8]) == pytest.approx(1.0)  # 4-grams over the join
    assert prompt_sets.copy_share(prompt, [9, 10, 11, 12]) == 0.0
    assert prompt_sets.copy_share(prompt, [4, 5, 9, 9]) == pytest.approx(0.5)  # 2 copied, then new
    assert prompt_sets.copy_share(prompt, []) == 0.0


def test_a_grid_runs_its_own_prompts_where_it_brought_some():
    own = GridSpec(("toy",), ("ngram",), ("copy", "poems"), 2, own_prompts=(("poems", ("p1", "p2")),))
    own.check()
    assert own.prompts_of("poems") == ("p1", "p2") and own.prompts_of("copy") == prompts("copy")
    with pytest.raises(GridError, match="only 1 prompts"):
        GridSpec(("toy",), ("ngram",), ("poems",), 2, own_prompts=(("poems", ("p1",)),)).check()
    with pytest.raises(GridError, match="unknown category"):
        GridSpec(("toy",), ("ngram",), ("poems",), 1).check()
    assert "copy" in CATEGORIES
