"""Language choice and the UI strings of each page, read from lessons/<lang>/<page>.toml."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
LANGUAGES: dict[str, str] = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"


def current_lang() -> str:
    """The session's language: session state, else the URL's ``lang``, else English."""
    lang = st.session_state.get("lang")
    if lang not in LANGUAGES:
        lang = st.query_params.get("lang", DEFAULT_LANG)
        lang = lang if lang in LANGUAGES else DEFAULT_LANG
        st.session_state["lang"] = lang
    return lang


@cache
def _table(lang: str, name: str) -> dict[str, Any]:
    path = LESSONS / lang / f"{name}.toml"
    with path.open("rb") as f:
        return tomllib.load(f)


class Strings:
    """UI strings of one page in the current language: ``s["key"]`` or ``s("key", n=3)``.

    Lookup falls back to the page's English table, then to common.toml, so a missing
    translation shows English rather than crashing a lesson.
    """

    def __init__(self, name: str, lang: str) -> None:
        self.name = name
        self.lang = lang
        self.tables = [_table(lang, name), _table(DEFAULT_LANG, name)]
        if name != "common":
            self.tables += [_table(lang, "common"), _table(DEFAULT_LANG, "common")]

    def get(self, key: str) -> Any:
        for table in self.tables:
            node: Any = table
            for part in key.split("."):
                if not isinstance(node, dict) or part not in node:
                    break
                node = node[part]
            else:
                return node
        raise KeyError(f"no UI string {key!r} for page {self.name!r}")

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def __call__(self, key: str, **params: Any) -> str:
        return str(self.get(key)).format(**params)


def strings(name: str) -> Strings:
    """The strings of page `name` (lessons/<lang>/<name>.toml) in the current language."""
    return Strings(name, current_lang())
