"""Spec-Bench's evaluation/speed.py, re-typed for tests (CI reaches no repository): what it
computes per task from an answer file and its baseline's."""

from __future__ import annotations

import json

import numpy as np

MT_BENCH_LIST = ["writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities"]


def speed_py(method_file: str, base_file: str, tokenizer, task: str) -> tuple[float, float]:
    """(mean accepted tokens, speedup) of one task from the two files' texts, as its `speed`
    function computes them: the mean of every ``accept_lengths``, and the mean of per-question
    tokens per second ÷ the baseline's, whose tokens it counts by re-tokenising each turn."""

    def rows(text):
        data = [json.loads(line) for line in text.splitlines()]
        if task == "mt_bench":
            return [d for d in data if d["category"] in MT_BENCH_LIST]
        return [d for d in data if d["category"] == task]

    speeds, accept = [], []
    for d in rows(method_file):
        accept.extend(d["choices"][0]["accept_lengths"])
        speeds.append(sum(d["choices"][0]["new_tokens"]) / sum(d["choices"][0]["wall_time"]))
    speeds0 = []
    for d in rows(base_file):
        tokens = sum(len(tokenizer(t).input_ids) - 1 for t in d["choices"][0]["turns"])
        speeds0.append(tokens / sum(d["choices"][0]["wall_time"]))
    return float(np.mean(accept)), float(np.array(speeds).mean() / np.array(speeds0).mean())
