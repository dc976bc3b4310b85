"""Spec-Bench's files: its questions in, its answer files out, its figures.

Spec-Bench (Xia et al., 2024; github.com/hemingkx/Spec-Bench) ships its 480 questions as
``data/spec_bench/question.jsonl``: one JSON object per line with ``question_id``, ``category``
and ``turns``. Its categories are MT-bench's eight (``writing`` … ``humanities``, 10 questions
each, reported together as ``mt_bench``) and five tasks of 80 questions each. The workbench
maps them onto its own categories (:data:`PAGE_CATEGORY`), samples a few per category with a
seed, and runs the first turn of each.

Its ``evaluation/speed.py`` reads one answer file per method, one JSON line per question with
``choices[0]`` holding ``turns``, ``new_tokens``, ``wall_time`` and ``accept_lengths``. Per task
it reports the mean of all ``accept_lengths`` (τ, pooled over every target pass) and the
speedup: the mean over questions of tokens per second with the method ÷ the same mean for the
baseline, whose tokens it counts by re-tokenising the answer text (:func:`spec_bench_count`).
:func:`answer_files` writes those files for a grid's runs, so that script reads the figures the
page shows (``Cell.tau`` and ``Cell.spec_bench_speedup``).
"""

from __future__ import annotations

import io
import json
import random
import re
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specdec_core.live.compare import BASELINE, CATEGORIES, Cell, GridSpec, Measured

#: Spec-Bench's six tasks, as ``speed.py`` names them.
TASKS: tuple[str, ...] = ("mt_bench", "translation", "summarization", "qa", "math_reasoning", "rag")
#: MT-bench's eight categories, which ``speed.py`` reports together as ``mt_bench``.
MT_BENCH: tuple[str, ...] = (
    "writing",
    "roleplay",
    "reasoning",
    "math",
    "coding",
    "extraction",
    "stem",
    "humanities",
)
#: The workbench's category for each Spec-Bench task.
PAGE_CATEGORY: dict[str, str] = {
    "mt_bench": "conversation",
    "translation": "translation",
    "summarization": "summarisation",
    "qa": "qa",
    "math_reasoning": "math",
    "rag": "rag",
}
TASK_OF: dict[str, str] = {page: task for task, page in PAGE_CATEGORY.items()}
#: A question file larger than this is refused (Spec-Bench's own is about 0.7 MB).
MAX_FILE_BYTES = 16 * 2**20
#: Questions per category a grid may take from a file (Spec-Bench has 80 per task).
MAX_PER_CATEGORY = 80


class QuestionFileError(ValueError):
    """A question file that cannot be read; ``line`` is the 1-based line at fault (0: the file)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def task_of(category: str) -> str | None:
    """The Spec-Bench task a question file's category belongs to (``mt_bench`` for MT-bench's
    eight); None for a category Spec-Bench does not have."""
    if category in MT_BENCH:
        return "mt_bench"
    return category if category in TASKS and category != "mt_bench" else None


@dataclass(frozen=True)
class Question:
    """One line of a question file: its id, its own category and its turns."""

    question_id: int | str
    category: str
    turns: tuple[str, ...]

    @property
    def page_category(self) -> str:
        """The workbench category it runs under."""
        return PAGE_CATEGORY[task_of(self.category) or ""]


def _question(line: str, n: int) -> Question:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(f"line {n} is not JSON ({exc.msg}).", n) from None
    if not isinstance(data, dict):
        raise QuestionFileError(f"line {n} is not a JSON object.", n)
    qid, category, turns = data.get("question_id"), data.get("category"), data.get("turns")
    if isinstance(qid, bool) or not isinstance(qid, int | str) or qid == "":
        raise QuestionFileError(f"line {n} has no question_id (a number or a string).", n)
    if not isinstance(category, str) or task_of(category) is None:
        known = ", ".join((*MT_BENCH, *TASKS[1:]))
        raise QuestionFileError(f"line {n}: category {category!r} is not one of Spec-Bench's ({known}).", n)
    if not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns):
        raise QuestionFileError(f"line {n}: turns must be a non-empty list of strings.", n)
    if not turns[0].strip():
        raise QuestionFileError(f"line {n}: the first turn is empty.", n)
    return Question(qid, category, tuple(turns))


def read_questions(data: str | bytes) -> list[Question]:
    """The questions of a Spec-Bench ``question.jsonl`` (blank lines skipped), in file order.
    QuestionFileError naming the line for a line that is not a question, a repeated id, an
    unknown category, a file that is not UTF-8, too large or holds none."""
    if len(data) > MAX_FILE_BYTES:
        raise QuestionFileError(f"the file is larger than {MAX_FILE_BYTES // 2**20} MB.")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise QuestionFileError(f"line {line} is not UTF-8 text.", line) from None
    out: list[Question] = []
    seen: dict[int | str, int] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        q = _question(line, n)
        if q.question_id in seen:
            raise QuestionFileError(
                f"line {n} repeats question_id {q.question_id!r} of line {seen[q.question_id]}.", n
            )
        seen[q.question_id] = n
        out.append(q)
    if not out:
        raise QuestionFileError("the file holds no question.")
    return out


@dataclass(frozen=True)
class QuestionSample:
    """The questions a grid runs: per workbench category, its prompts (each question's first
    turn) and their (question id, category) pairs, ready for :class:`GridSpec`."""

    categories: tuple[str, ...]
    own_prompts: tuple[tuple[str, tuple[str, ...]], ...]
    questions: tuple[tuple[str, tuple[tuple[int | str, str], ...]], ...]

    @property
    def counts(self) -> dict[str, int]:
        return {c: len(p) for c, p in self.own_prompts}


def sample(questions: Sequence[Question], per_category: int, seed: int) -> QuestionSample:
    """`per_category` questions of each workbench category the file has (all of them where it
    has fewer), drawn with `seed` and kept in file order; categories in the workbench's order."""
    if not 1 <= per_category <= MAX_PER_CATEGORY:
        raise ValueError(f"questions per category must be 1 to {MAX_PER_CATEGORY}.")
    rng = random.Random(seed)
    cats, prompts, ids = [], [], []
    for c in CATEGORIES:
        mine = [q for q in questions if q.page_category == c]
        if not mine:
            continue
        chosen = sorted(rng.sample(range(len(mine)), min(per_category, len(mine))))
        cats.append(c)
        prompts.append((c, tuple(mine[i].turns[0] for i in chosen)))
        ids.append((c, tuple((mine[i].question_id, mine[i].category) for i in chosen)))
    return QuestionSample(tuple(cats), tuple(prompts), tuple(ids))


def spec_bench_count(tokenizer: Any, turns: Iterable[str]) -> int:
    """The tokens of an answer as ``speed.py`` counts a baseline's: Σ over turns of
    ``len(tokenizer(turn).input_ids) - 1`` (its tokenizer adds BOS where the model has one)."""
    return sum(len(tokenizer(t).input_ids) - 1 for t in turns)


def file_name(method: str) -> str:
    """A method's answer file name: its key with anything but letters, digits, ``.``, ``-``
    and ``_`` as ``_`` (``bf16~tree`` → ``bf16_tree.jsonl``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", method) + ".jsonl"


def answer_line(spec: GridSpec, run: Measured) -> dict[str, Any] | None:
    """One answer file line for `run`, in Spec-Bench's format; None for a prompt that did not
    come from a question file."""
    question = spec.question_of(run.category, run.prompt)
    if question is None:
        return None
    qid, category = question
    return {
        "question_id": qid,
        "category": category,
        "answer_id": f"{run.target}-{run.draft}-{qid}",
        "model_id": f"{run.target}-{run.draft}",
        "choices": [
            {
                "index": 0,
                "turns": [run.answer],
                "decoding_steps": [run.target_passes],
                "new_tokens": [run.tokens],
                "wall_time": [run.wall_s],
                "accept_lengths": list(run.accept_lengths),
            }
        ],
    }


def answer_files(spec: GridSpec, runs: Iterable[Measured]) -> dict[str, str]:
    """``{"<target>/<method>.jsonl": text}`` for every target and method (the target alone as
    ``target-only.jsonl``) with a run on a Spec-Bench question, lines in question order."""
    by_file: dict[str, list[tuple[int, int, str]]] = {}
    order = {c: i for i, c in enumerate(spec.categories)}
    for run in runs:
        line = answer_line(spec, run)
        if line is not None:
            key = f"{run.target}/{file_name(run.draft)}"
            sort = (order.get(run.category, len(order)), run.prompt)
            by_file.setdefault(key, []).append((*sort, json.dumps(line, ensure_ascii=False)))
    return {k: "".join(text + "\n" for *_, text in sorted(v)) for k, v in sorted(by_file.items())}


def answers_zip(files: Mapping[str, str], tokenizers: Mapping[str, Any] | None = None) -> bytes:
    """:func:`answer_files` in one zip archive, with each given target's tokenizer saved as
    ``<target>/tokenizer/`` (``save_pretrained``) for ``speed.py`` to count the baseline's tokens."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text)
        for target, tokenizer in (tokenizers or {}).items():
            with tempfile.TemporaryDirectory() as folder:
                tokenizer.save_pretrained(folder)
                for path in sorted(Path(folder).iterdir()):
                    z.write(path, f"{target}/tokenizer/{path.name}")
    return out.getvalue()


def figures(cells_: Iterable[Cell]) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """``{target: {method: {task: {"tau": …, "speedup": …}}}}`` for every cell of a Spec-Bench
    category: the pooled τ and Spec-Bench's speedup, as ``speed.py`` computes them from
    :func:`answer_files`."""
    out: dict[str, dict[str, dict[str, dict[str, float | None]]]] = {}
    for cell in cells_:
        task = TASK_OF.get(cell.category)
        if task is None or cell.draft == BASELINE:
            continue
        sp = cell.spec_bench_speedup
        out.setdefault(cell.target, {}).setdefault(cell.draft, {})[task] = {
            "tau": round(cell.tau, 4),
            "speedup": None if sp is None else round(sp, 4),
        }
    return out
