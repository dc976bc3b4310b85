"""The Compare page in a real browser, on the real bundled model: a small grid runs, its heatmap
appears, and the cells download as CSV; Spec-Bench's questions upload (a bad file named by its
line, the questions shown escaped), run, and their answer files give the page's figures."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from transformers import AutoTokenizer

from support.spec_bench_speed import speed_py

pytestmark = pytest.mark.slow

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + runs on a slow, shared CPU


def test_a_small_grid_shows_its_heatmap_and_exports_csv(page: Page, app_url: str):
    page.goto(f"{app_url}/compare?cmp_drafts=ngram&cmp_cats=copy,code&cmp_max=8")
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1").first).to_have_text("Compare drafts", timeout=TIMEOUT)
    run = page.get_by_role("button", name="Run the grid")
    expect(run).to_be_enabled(timeout=TIMEOUT)
    expect(page.get_by_text("Nothing has run in this session yet")).to_be_visible(timeout=TIMEOUT)
    run.click()
    expect(page.get_by_text("Nothing has run in this session yet")).to_have_count(0, timeout=RUN_TIMEOUT)
    expect(page.get_by_text("Greedy decoding: every draft's output equals its target's own")).to_be_visible(
        timeout=RUN_TIMEOUT
    )
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name="Download the cells (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert [(r["target"], r["draft"], r["category"]) for r in rows] == [
        ("bundled", "ngram", "copy"),
        ("bundled", "ngram", "code"),
    ]
    assert all(float(r["tau"]) >= 1.0 and r["greedy_identical"] == "true" for r in rows)


def test_spec_bench_questions_run_and_their_answer_files_give_the_pages_figures(
    page: Page, app_url: str, tmp_path
):
    page.goto(f"{app_url}/compare?cmp_drafts=ngram&cmp_cats=qa,rag&cmp_max=8")
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1").first).to_have_text("Compare drafts", timeout=TIMEOUT)
    expect(page.get_by_text("Nothing has run in this session yet")).to_be_visible(timeout=TIMEOUT)
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="Spec-Bench's questions")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": 1, "category": "qa", "turns": ["x"]}\n{oops\n', encoding="utf-8")
    uploader.locator("input[type=file]").set_input_files(str(bad))
    expect(page.get_by_text("bad.jsonl cannot be used: line 2 is not JSON")).to_be_visible(timeout=TIMEOUT)
    questions = [
        {"question_id": 7, "category": "qa", "turns": ["<b>Bold</b> *star* question: what is the Thames?"]},
        {
            "question_id": 9,
            "category": "rag",
            "turns": ["Context: the cat sat on the mat. Where did the cat sit?"],
        },
    ]
    good = tmp_path / "question.jsonl"
    good.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    uploader.locator("input[type=file]").set_input_files(str(good))
    expect(page.get_by_text("question.jsonl: 2 questions read")).to_be_visible(timeout=TIMEOUT)
    page.get_by_text("The questions the grid will run").click()
    expect(page.get_by_text("<b>Bold</b> *star* question", exact=False)).to_be_visible(timeout=TIMEOUT)
    run = page.get_by_role("button", name="Run the grid")
    expect(run).to_be_enabled(timeout=TIMEOUT)
    run.click()
    expect(page.get_by_text("Nothing has run in this session yet")).to_have_count(0, timeout=RUN_TIMEOUT)
    expect(page.get_by_text("Greedy decoding: every draft's output equals its target's own")).to_be_visible(
        timeout=RUN_TIMEOUT
    )
    assert not page.get_by_test_id("stException").count()
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name="Download the cells (CSV)").click()
    rows = {r["category"]: r for r in csv.DictReader(io.StringIO(Path(info.value.path()).read_text("utf-8")))}
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name="Download Spec-Bench answer files (zip)").click()
    with zipfile.ZipFile(info.value.path()) as z:
        z.extractall(tmp_path / "answers")
    folder = tmp_path / "answers" / "bundled"
    tokenizer = AutoTokenizer.from_pretrained(folder / "tokenizer")
    method, base = ((folder / f).read_text("utf-8") for f in ("ngram.jsonl", "target-only.jsonl"))
    assert [json.loads(x)["question_id"] for x in base.splitlines()] == [7, 9]
    for category, task in (("qa", "qa"), ("rag", "rag")):
        tau, speedup = speed_py(method, base, tokenizer, task)
        assert abs(tau - float(rows[category]["tau"])) < 1e-4
        assert abs(speedup - float(rows[category]["spec_bench_speedup"])) < 1e-4
