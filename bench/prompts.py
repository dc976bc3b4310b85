"""The speed benches' prompts by category, and ``--prompts FILE``, which replaces them.

``bench.speedup``, ``bench.cross`` and ``bench.compare`` take ``--prompts FILE``: a JSON object
``{category: [prompt, …]}`` used in place of the shipped prompts; a category missing from the
file keeps its shipped prompts. :func:`copy_share` measures how much of a target's own greedy
continuation is copied from its prompt, so a copy prompt can be seen to make the target copy.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

PARAGRAPH = (
    "The river Thames flows through the heart of London. It passes under Tower Bridge, past the "
    "Houses of Parliament and the London Eye, and reaches the North Sea at its wide estuary. Every "
    "day, boats carry visitors from Westminster to Greenwich and back again."
)
#: A copy prompt a base model (Gemma-3-270M, no chat template) copies from: one worked pair
#: shows the task, since an instruction alone makes a base model go on writing about the text.
DEMO = "The cat sat on the mat by the door."
BASE_COPY = f"Text: {DEMO}\nCopy: {DEMO}\n\nText: {PARAGRAPH}\nCopy:"
#: An instruction a chat model (SmolLM2-135M-Instruct, chat template on) follows.
CHAT_COPY = "Repeat the following paragraph exactly, word for word:\n\n" + PARAGRAPH
CHAT = "Write a short poem about autumn leaves falling in a quiet park."
#: n of the n-grams :func:`copy_share` looks up in the prompt.
COPY_NGRAM = 4


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--prompts FILE`` to a bench's command line."""
    parser.add_argument(
        "--prompts",
        type=Path,
        metavar="FILE",
        help="a JSON object {category: [prompt, ...]} used in place of the shipped prompts; "
        "categories missing from the file keep theirs",
    )


def load(path: Path) -> dict[str, list[str]]:
    """The prompts of a ``--prompts`` file, checked: a JSON object of non-empty lists of
    non-empty strings. ValueError with a plain message otherwise."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the prompts file {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path} must hold a JSON object {{category: [prompt, ...]}} with at least one category."
        )
    out: dict[str, list[str]] = {}
    for category, prompts in data.items():
        if not isinstance(prompts, list) or not prompts:
            raise ValueError(f"{path}: category {category!r} must be a non-empty list of prompts.")
        if not all(isinstance(p, str) and p.strip() for p in prompts):
            raise ValueError(f"{path}: every prompt of {category!r} must be a non-empty string.")
        out[str(category)] = list(prompts)
    return out


def merged(shipped: Mapping[str, Sequence[str]], path: Path | None) -> dict[str, list[str]]:
    """`shipped` with each category the file at `path` names replaced by the file's list (the
    file's other categories added); `shipped` alone without a file."""
    out = {k: list(v) for k, v in shipped.items()}
    if path is not None:
        out.update(load(path))
    return out


def copy_share(prompt_ids: Sequence[int], continuation: Sequence[int], n: int = COPY_NGRAM) -> float:
    """Share of `continuation`'s tokens that end an n-gram (over prompt + continuation) found in
    the prompt: 1.0 when the target copies its prompt throughout, near 0 when it writes anew."""
    if not continuation:
        return 0.0
    seen = {tuple(prompt_ids[i : i + n]) for i in range(len(prompt_ids) - n + 1)}
    text = [*prompt_ids, *continuation]
    start = len(prompt_ids)
    hits = sum(tuple(text[i - n + 1 : i + 1]) in seen for i in range(start, len(text)) if i >= n - 1)
    return hits / len(continuation)
