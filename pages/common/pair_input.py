"""The (p, q) pair that the overlap and tree lessons let a learner choose and edit.

An example picker with its seed, a table editor, and the table's problems explained in the
learner's language (strings in lessons/<lang>/pair.toml). Everything is kept in the URL: the
table as JSON in ``<prefix>_table``, or "" while it is the chosen example's own, so that a
link to an example stays short. :class:`PairForm` names these three settings once; a page's own
form nests it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common import form, urlstate
from pages.common.form import Form
from pages.common.i18n import strings
from specdec_core.course import pairs


def _table(raw: str) -> str:
    """The URL's table: "" (the chosen example) or rows as JSON, checked for shape only."""
    return pairs.to_json(pairs.from_json(raw)) if raw else ""


@lru_cache(maxsize=256)
def _example_json(preset: str, seed: int, size: int) -> str:
    """A preset's rows as JSON: the same on every rerun, so built once per (preset, seed)."""
    return pairs.to_json(pairs.preset_rows(preset, seed, size))


class PairForm(Form):
    """The pair's settings: the example, its seed and the table (keys start with the page's prefix)."""

    preset = urlstate.choice_param("abc", pairs.preset_names)
    vocab_seed = urlstate.int_param(0, 0, 9999)
    table = urlstate.Param("", _table)


@dataclass(frozen=True)
class PairInput:
    """One page's pair: its state and URL keys start with `prefix`; its random example has
    `random_size` tokens."""

    prefix: str
    random_size: int

    def key(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    @property
    def form(self) -> PairForm:
        """The example, its seed and the table (restore them before :meth:`pickers`)."""
        return PairForm(self.prefix)

    @property
    def edited(self) -> bool:
        """Whether the table differs from the chosen example."""
        return bool(form.value(self.form.table))

    def _set_table(self, table: str) -> None:
        st.session_state[self.form.table.key] = table

    def _example(self) -> str:
        f = self.form
        return _example_json(form.value(f.preset), form.value(f.vocab_seed), self.random_size)

    def pickers(self, preset_box: DeltaGenerator, seed_box: DeltaGenerator) -> None:
        """The example picker and the random example's seed; changing either drops the edits."""
        s, f = strings("pair"), self.form
        form.select(
            preset_box,
            f.preset,
            s["preset"],
            format_func=lambda k: s(f"presets.{k}", n=self.random_size),
            on_change=self._set_table,
            args=("",),
            help=s["preset_help"],
        )
        form.number(
            seed_box,
            f.vocab_seed,
            s["vocab_seed"],
            step=1,
            on_change=self._set_table,
            args=("",),
            disabled=form.value(f.preset) != pairs.RANDOM,
            help=s("vocab_seed_help", n=self.random_size),
        )

    def note(self) -> None:
        """A caption on what the chosen example shows."""
        preset = form.value(self.form.preset)
        st.caption(strings("pair")(f"preset_notes.{preset}", n=self.random_size))

    def editor(self) -> list[pairs.Row]:
        """The table editor; returns its rows, edits included, and keeps them for the URL.

        The editor is rebuilt (a new widget key) only when the table changes from outside it:
        a link, another example, or a button.
        """
        s, state = strings("pair"), st.session_state
        base, out, version = self.key("editor_base"), self.key("editor_out"), self.key("editor_version")
        example = self._example()
        current = form.value(self.form.table) or example
        if current != state.get(out):
            state[version] = state.get(version, 0) + 1
            state[base] = current
        numbers = {
            c: st.column_config.NumberColumn(s[f"col_{c}"], min_value=0.0, format="%.4f", help=s[f"{c}_help"])
            for c in ("p", "q")
        }
        edited = st.data_editor(
            pd.DataFrame(pairs.from_json(state[base]), columns=["token", "p", "q"]),
            key=self.key(f"editor_{state[version]}"),
            num_rows="dynamic",
            hide_index=True,
            column_config={
                "token": st.column_config.TextColumn(s["col_token"], required=True),
                **numbers,
            },
        )
        st.caption(s("editor_help", max=pairs.MAX_TOKENS))
        rows = pairs.clean_rows(edited.itertuples(index=False))
        state[out] = pairs.to_json(rows)
        self._set_table("" if state[out] == example else state[out])
        return rows

    def edited_note(self) -> None:
        """When the table differs from the example: say so, with a button back to the example."""
        if not self.edited:
            return
        s = strings("pair")
        note, button = st.columns([3, 1], vertical_alignment="center")
        note.info(s["edited"])
        button.button(s["reset_table"], on_click=self._set_table, args=("",), key=self.key("reset_table"))

    def _normalise(self) -> None:
        rows = pairs.from_json(st.session_state[self.key("editor_out")])
        self._set_table(pairs.to_json(pairs.normalise(rows)))

    def valid_pair(self, rows: list[pairs.Row]) -> pairs.Pair | None:
        """The pair in `rows`; or None, after explaining what is wrong (and, when a column
        does not sum to 1, offering a button that scales both)."""
        problem = pairs.check(rows)
        if problem is None:
            return pairs.to_pair(rows)
        s = strings("pair")
        st.error(s("invalid", detail=s(f"errors.{problem.code}", **problem.params)))
        if problem.normalisable:
            st.button(
                s["normalise"],
                on_click=self._normalise,
                key=self.key("normalise"),
                type="primary",
                help=s["normalise_help"],
            )
        return None
