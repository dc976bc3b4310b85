"""The draft race's run: every chosen draft on one prompt, after one target-only run.

:class:`RaceRun` is the page's :class:`~pages.common.jobs.Run` (prepare, stream, result, keep),
with a progress bar while it streams; finished races are kept per task under ``RESULTS_KEY``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages.common.i18n import Strings, strings
from pages.common.jobs import WAIT_LIMIT
from pages.common.model_form import chat_on, decoding_values, layer_bound, preset_text, target_spec
from pages.common.models import get_draft, get_target, wait_notice
from pages.common.stop import stop_if_pressed
from specdec_core.live.model_choices import DraftSpec
from specdec_core.live.race import (
    BASELINE,
    TREE_SUFFIX,
    Race,
    RaceResult,
    RaceSettings,
    layerskip_depth,
    race_entries,
    race_task,
)
from specdec_core.live.runs import Pacer, encode_prompt

# Update the bar at most this often, so the page's work does not weigh on the timed runs
# (the baseline has one event per token, a draft's run one per round).
PAINT_EVERY = 0.2
RESULTS_KEY = "race_results"
LAST_KEY = "_race_last"


def entries() -> list[tuple[str, DraftSpec]]:
    """The chosen drafts as (race key, spec); a bad depth list or a layer-skip deeper than the
    target is refused (ValueError with the page's message) before any model loads."""
    s, ss = strings("race"), st.session_state
    try:
        chosen = race_entries(ss["race_drafts"], ss["race_depths"], ss["race_draft_src"])
    except ValueError:  # only the depths can be wrong
        raise ValueError(s("bad_depths", raw=ss["race_depths"])) from None
    layers = layer_bound("race")
    deepest = max((d.k for _, d in chosen if d.kind == "layerskip"), default=0)
    if layers is not None and deepest > layers:
        raise ValueError(s("too_deep", k=deepest, n=layers))
    return chosen


def name(s: Strings, key: str, tree: tuple[int, ...] = ()) -> str:
    """A run's name in `s` (race.toml): the baseline, a draft, a layer-skip depth or a tree."""
    if key == BASELINE:
        return s["baseline"]
    if key.endswith(TREE_SUFFIX):
        shape = "-".join(str(b) for b in tree)
        return s("tree_name", draft=name(s, key.removesuffix(TREE_SUFFIX)), shape=shape)
    depth = layerskip_depth(key)
    return s[f"short.{key}"] if depth is None else s("layerskip_name", k=depth)


class RaceRun:
    """The race a press on "Run the race" starts (a :class:`~pages.common.jobs.Run`), as the controls say."""

    def __init__(self) -> None:
        ss = st.session_state
        self.settings = RaceSettings(
            **decoding_values("race"),
            seed=int(ss["race_seed"]),
            max_new_tokens=int(ss["race_max"]),
            repeats=int(ss["race_repeats"]),
        )
        self.spec = target_spec("race")
        self.prompt: str = ss["race_prompt"]
        self.task = race_task(self.prompt, ss["race_preset"], preset_text("race"))
        self.chat = chat_on("race")
        self.strings = strings("race")  # read now: result() makes no Streamlit call
        self.target: Any = None
        self.drafts: list[tuple[str, Any]] = []
        self.ids: list[int] = []
        self.race: Race | None = None
        self._events: Any = None  # the race's iterator, closed by result()

    def prepare(self) -> None:
        """Check the drafts, load the models, encode the prompt."""
        chosen = entries()
        if not chosen:
            raise ValueError(strings("race")["no_drafts"])
        self.target = get_target(self.spec)
        self.drafts = [(key, get_draft(self.spec, self.target, draft)) for key, draft in chosen]
        self.ids = encode_prompt(self.target, self.prompt, self.chat, self.settings.max_new_tokens)

    def stream(self) -> None:
        """Run the baseline and every draft in turn, with a progress bar."""
        s = self.strings
        status = st.empty()
        bar = st.progress(0.0)
        self.race = Race(
            self.target, self.drafts, self.ids, self.settings, on_wait=wait_notice(status), timeout=WAIT_LIMIT
        )
        self._events = iter(self.race)
        pacer = Pacer(PAINT_EVERY)
        for key, event in self._events:
            stop_if_pressed()
            if pacer.due(event.finished):
                produced = event.position + len(event.committed)
                bar.progress(
                    self.race.progress(key, produced),
                    text=s("progress", name=name(s, key, self.settings.tree), n=produced),
                )

    def result(self, finished: bool) -> RaceResult | None:
        """Close the race; what finished so far, named in the page's language."""
        if self._events is not None:
            self._events.close()
        if self.race is None or not self.race.records:
            return None
        names = {k: name(self.strings, k, self.settings.tree) for k in self.race.keys}
        return RaceResult(
            self.task,
            self.prompt,
            str(self.target.name),
            self.spec.kind,
            names,
            self.settings,
            dict(self.race.records),
            stopped=not finished,
        )

    def keep(self, value: RaceResult) -> None:
        st.session_state.setdefault(RESULTS_KEY, {})[value.task] = value
        st.session_state[LAST_KEY] = value.task
