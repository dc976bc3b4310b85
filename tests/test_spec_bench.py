"""Spec-Bench's files: a question file in its format read (and a bad one refused naming the
line), a seeded sample mapped onto the workbench's categories, and a grid's answer files read
back the way Spec-Bench's ``evaluation/speed.py`` reads them, giving the page's figures."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from statistics import fmean

import pytest
from transformers import AutoTokenizer

from specdec_core.engine import estimate_cost_ratio
from specdec_core.live import spec_bench as sb
from specdec_core.live.compare import BASELINE, GridSpec, cells
from specdec_core.live.compare_run import GridRun
from specdec_core.live.compare_saved import GridResult, grid_from_json, grid_json
from specdec_core.live.compare_tables import MARKDOWN_COLUMNS, markdown_table
from specdec_core.live.settings import DecodeSettings
from support.spec_bench_speed import speed_py
from tests.test_live_compare import TinyModels

TEXTS = ["the cat sat on the mat", "a dog ran in the park", "the sun is hot", "we read a book", "it rains"]


def question_file(per_task: int = 3) -> str:
    """A small question file in Spec-Bench's format: MT-bench lines of two of its eight
    categories (two turns each), then `per_task` lines of each of its five tasks."""
    lines, qid = [], 1
    for cat in ("writing", "math"):
        for i in range(2):
            lines.append({"question_id": qid, "category": cat, "turns": [TEXTS[i], "now shorter"]})
            qid += 1
    for task in sb.TASKS[1:]:
        for i in range(per_task):
            lines.append(
                {"question_id": qid, "category": task, "turns": [f"{TEXTS[i]} {task}"], "reference": []}
            )
            qid += 1
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def test_a_question_file_maps_onto_the_workbench_categories():
    qs = sb.read_questions(question_file().encode())
    assert len(qs) == 4 + 5 * 3
    assert [q.page_category for q in qs[:4]] == ["conversation"] * 4
    assert {q.page_category for q in qs[4:]} == {"translation", "summarisation", "qa", "math", "rag"}
    assert sb.task_of("humanities") == "mt_bench" and sb.task_of("math_reasoning") == "math_reasoning"
    assert sb.task_of("poetry") is None and sb.task_of("mt_bench") is None


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is not a JSON object"),
        ('{"category": "qa", "turns": ["x"]}', "line 2 has no question_id"),
        ('{"question_id": 9, "category": "poetry", "turns": ["x"]}', "line 2: category 'poetry'"),
        ('{"question_id": 9, "category": "qa", "turns": []}', "line 2: turns must be"),
        ('{"question_id": 9, "category": "qa", "turns": ["  "]}', "line 2: the first turn is empty"),
        ('{"question_id": 1, "category": "qa", "turns": ["x"]}', "line 2 repeats question_id 1 of line 1"),
    ],
)
def test_a_malformed_line_is_named(line, words):
    first = json.dumps({"question_id": 1, "category": "rag", "turns": ["ok"]})
    with pytest.raises(sb.QuestionFileError) as err:
        sb.read_questions(f"{first}\n{line}\n")
    assert words in str(err.value) and err.value.line == 2


def test_an_empty_or_binary_file_is_refused():
    with pytest.raises(sb.QuestionFileError, match="no question"):
        sb.read_questions("\n\n")
    with pytest.raises(sb.QuestionFileError, match="line 2 is not UTF-8") as err:
        sb.read_questions(b'{"question_id": 1, "category": "qa", "turns": ["x"]}\n\xff\xfe')
    assert err.value.line == 2


def test_the_sample_is_seeded_in_file_order_and_takes_the_first_turn():
    qs = sb.read_questions(question_file(per_task=5))
    one, again, other = sb.sample(qs, 2, seed=1), sb.sample(qs, 2, seed=1), sb.sample(qs, 2, seed=7)
    assert one == again and one != other
    assert one.categories == ("conversation", "translation", "summarisation", "qa", "math", "rag")
    assert one.counts == dict.fromkeys(one.categories, 2)
    for (_, prompts), (_, ids) in zip(one.own_prompts, one.questions, strict=True):
        by_id = {q.question_id: q for q in qs}
        assert [by_id[i].turns[0] for i, _ in ids] == list(prompts)
        assert [i for i, _ in ids] == sorted(i for i, _ in ids)  # file order
        assert all(by_id[i].category == c for i, c in ids)
    assert sb.sample(qs, 80, seed=0).counts["qa"] == 5  # all where the file has fewer
    with pytest.raises(ValueError):
        sb.sample(qs, 0, seed=0)


@pytest.fixture(scope="module")
def grid(tiny_hf_folders):
    picked = sb.sample(sb.read_questions(question_file()), 2, seed=3)
    spec = GridSpec(
        ("tiny",),
        ("ngram", "small"),
        picked.categories,
        per_category=2,
        settings=DecodeSettings(gamma=3, max_new_tokens=10),
        own_prompts=picked.own_prompts,
        questions=picked.questions,
    )
    models = TinyModels(tiny_hf_folders)
    run = GridRun(spec, models)
    list(run)
    return spec, run.measured, models


def test_answer_files_give_speed_pys_figures_equal_to_the_page(grid, tiny_hf_folders):
    spec, runs, _ = grid
    files = sb.answer_files(spec, runs)
    assert set(files) == {"tiny/target-only.jsonl", "tiny/ngram.jsonl", "tiny/small.jsonl"}
    tokenizer = AutoTokenizer.from_pretrained(tiny_hf_folders["target"])
    table = {(c.draft, c.category): c for c in cells(spec, runs)}
    figures = sb.figures(table.values())
    for draft in ("ngram", "small"):
        for task in sb.TASKS:
            tau, speedup = speed_py(
                files[f"tiny/{draft}.jsonl"], files["tiny/target-only.jsonl"], tokenizer, task
            )
            cell = table[(draft, sb.PAGE_CATEGORY[task])]
            assert tau == pytest.approx(cell.tau, rel=1e-12)
            assert speedup == pytest.approx(cell.spec_bench_speedup, rel=1e-12)
            assert figures["tiny"][draft][task] == {"tau": round(cell.tau, 4), "speedup": round(speedup, 4)}
    line = json.loads(files["tiny/small.jsonl"].splitlines()[0])
    assert line["category"] in sb.MT_BENCH  # MT-bench's own subcategory, which speed.py's filter finds
    choice = line["choices"][0]
    assert len(choice["turns"]) == len(choice["new_tokens"]) == len(choice["wall_time"]) == 1
    assert sum(choice["accept_lengths"]) == choice["new_tokens"][0]


def test_the_pooled_figures_are_recomputed_from_the_runs(grid):
    spec, runs, _ = grid
    for cell in cells(spec, runs):
        assert cell.tau == pytest.approx(fmean(cell.accept_lengths))
        assert len(cell.accept_lengths) == sum(r.target_passes for r in cell.runs)
        for attr, prop in (("decode_s", "decode_speedup"), ("wall_s", "wall_speedup")):
            rate = sum(r.tokens for r in cell.runs) / sum(getattr(r, attr) for r in cell.runs)
            base = sum(b.tokens for b in cell.baselines) / sum(getattr(b, attr) for b in cell.baselines)
            assert getattr(cell, prop) == pytest.approx(rate / base)
        mine = fmean(r.tokens / r.wall_s for r in cell.runs)
        theirs = fmean(b.answer_tokens / b.wall_s for b in cell.baselines)
        assert cell.spec_bench_speedup == pytest.approx(mine / theirs)


def test_each_draft_carries_its_own_cost(grid):
    spec, runs, models = grid
    target = models.target("tiny")
    small = models.draft("tiny", "small", target)
    for cell in cells(spec, runs):
        if cell.draft == "ngram":
            assert cell.c_estimate == 0.0 and cell.c_measured == 0.0
        else:
            assert (
                cell.c_estimate == pytest.approx(estimate_cost_ratio(target, small)) and cell.c_estimate > 0
            )
            assert cell.c_measured == pytest.approx(small.step_seconds / target.step_seconds)
        assert cell.projected() == pytest.approx(cell.projected(cell.c_estimate))
    assert all(r.c_estimate is None for r in runs if r.draft == BASELINE)


def test_a_saved_grid_keeps_its_questions_and_the_answers_zip_holds_every_file(grid):
    spec, runs, models = grid
    loaded = grid_from_json(grid_json(GridResult(spec, tuple(runs), True)))
    assert loaded.spec == spec and loaded.spec.question_of("qa", 1) == spec.question_of("qa", 1)
    assert sb.answer_files(loaded.spec, loaded.runs) == sb.answer_files(spec, runs)
    blob = sb.answers_zip(sb.answer_files(spec, runs), {"tiny": models.target("tiny").tokenizer})
    with zipfile.ZipFile(io.BytesIO(blob)) as z, tempfile.TemporaryDirectory() as folder:
        names = z.namelist()
        assert set(sb.answer_files(spec, runs)) < set(names)
        z.extractall(folder)
        again = AutoTokenizer.from_pretrained(Path(folder) / "tiny" / "tokenizer")
        assert again("the cat sat").input_ids == models.target("tiny").tokenizer("the cat sat").input_ids
    shipped = GridSpec(("tiny",), ("ngram",), ("copy",))
    assert sb.answer_files(shipped, [r for r in runs]) == {}  # no question ids: no answer file
    assert (
        sb.file_name("bf16~tree") == "bf16_tree.jsonl"
        and sb.file_name("smollm2@4096") == "smollm2_4096.jsonl"
    )


def test_the_markdown_table_has_a_row_per_cell_and_escapes_pipes(grid):
    spec, runs, _ = grid
    table = cells(spec, runs)
    headers = {k: k.replace("_", " ") for k in MARKDOWN_COLUMNS}
    text = markdown_table(table, headers, {"ngram": "n|gram"})
    lines = text.strip().splitlines()
    assert len(lines) == 2 + len(table)
    assert all(line.count(" | ") == len(MARKDOWN_COLUMNS) - 1 for line in lines[2:] if "n\\|gram" not in line)
    assert any("n\\|gram" in line for line in lines)
    assert "nan" not in text.lower()
