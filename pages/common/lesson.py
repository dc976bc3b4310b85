"""Lesson text: Markdown files with front matter, split into named sections.

A lesson file looks like::

    ---
    title: Sampling lab
    ---
    <!-- section: intro -->
    Text with $KaTeX$ formulas …
    <!-- section: temperature -->
    …

Pages render one section at a time between their widgets. A section may hold ``{{name}}``
placeholders for figures that depend on the machine (this machine's profile fills them:
``pages/common/profile.py``); :meth:`Lesson.show` fills them from the values it is given and
refuses a section left with one unfilled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import streamlit as st

from pages.common.i18n import LESSONS, current_lang

_SECTION = re.compile(r"^<!--\s*section:\s*([\w-]+)\s*-->\s*$", re.MULTILINE)
#: A figure the page fills in: ``{{c_bf16}}``.
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Lesson:
    meta: dict[str, str]
    sections: dict[str, str]

    def show(self, section: str, heading: str | None = None, values: dict[str, str] | None = None) -> None:
        """Render one section as Markdown (KaTeX formulas included), under `heading` when
        given: a Markdown heading in the same element draws as ``st.header`` does, and a
        lesson fragment sends one element fewer on every rerun. `values` fill the section's
        ``{{name}}`` placeholders (KeyError for one not given)."""
        body = fill(self.sections[section], values or {})
        st.markdown(f"## {heading}\n\n{body}" if heading else body)


def fill(body: str, values: dict[str, str]) -> str:
    """`body` with each ``{{name}}`` replaced by ``values[name]`` (KeyError for a name not given)."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], body)


def parse(text: str) -> Lesson:
    """Split front matter (``key: value`` lines) and ``<!-- section: name -->`` blocks."""
    meta: dict[str, str] = {}
    if text.startswith("---\n"):
        head, _, text = text[4:].partition("\n---\n")
        for line in head.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip()] = value.strip()
    parts = _SECTION.split(text)
    sections = {"_preamble": parts[0].strip()} if parts[0].strip() else {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in sections:
            raise ValueError(f"section {name!r} appears twice")
        sections[name] = body.strip()
    return Lesson(meta=meta, sections=sections)


@cache
def _load(lang: str, name: str) -> Lesson:
    return parse((LESSONS / lang / f"{name}.md").read_text(encoding="utf-8"))


def lesson(name: str) -> Lesson:
    """The lesson `name` (lessons/<lang>/<name>.md) in the current language."""
    return _load(current_lang(), name)
