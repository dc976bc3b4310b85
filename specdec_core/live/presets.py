"""Preset prompts of the live pages (assets/presets/prompts.json): copy, summarise, open chat.

The tasks differ in how much of the answer is already in the prompt, which decides which
draft wins: a copy makes n-gram lookup nearly free and right, open chat gives it nothing.
Each preset has an English and a Chinese text for real models and a text in the toy
pair's words.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

PRESETS_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets" / "prompts.json"
PRESETS: tuple[str, ...] = ("copy", "summarise", "chat")


@cache
def _data() -> dict[str, Any]:
    with PRESETS_FILE.open(encoding="utf-8") as f:
        return json.load(f)


def preset_prompt(key: str, lang: str, toy: bool = False) -> str:
    """The prompt of preset `key`: in `lang` ("en" / "zh", else English), or the toy text."""
    if key not in PRESETS:
        raise ValueError(f"unknown preset {key!r}; choose one of {', '.join(PRESETS)}.")
    entry = _data()[key]
    if toy:
        return entry["toy"]
    return entry.get(lang, entry["en"])
