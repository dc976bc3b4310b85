"""The lab's run (a :class:`~pages.common.jobs.Run`): N samples of each rule, drawn in turn, the
view repainted as counts arrive; a Stop keeps the counts so far."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import Refused
from pages.common.models import get_draft, get_target
from pages.common.stop import stop_if_pressed
from pages.law_live_parts.controls import problem, settings
from pages.law_live_parts.view import RESULT_KEY, show
from specdec_core.live.law import LawLab, eta_s
from specdec_core.live.law_view import LawSnapshot, snapshot
from specdec_core.live.runs import Pacer, encode_prompt
from specdec_core.viz.escape import md

#: Repaint the counts at most this often (a repaint redraws the charts and the tests).
PAINT_EVERY = 1.0


class LawLabRun:
    """Draw's run: the controls' settings and prompt, refused with a message when out of bounds."""

    def __init__(self) -> None:
        self.settings = settings()
        self.prompt: str = st.session_state["law_prompt"]
        self.problem = problem(self.settings)
        self.strings = strings("law_live")  # read now: result() makes no Streamlit call
        self.target: Any = None
        self.draft: Any = None
        self.ids: list[int] = []
        self.lab: LawLab | None = None

    def prepare(self) -> None:
        """Refuse settings out of bounds; load the models and encode the prompt."""
        if self.problem is not None:
            raise Refused(self.problem)
        s = self.settings
        self.target = get_target(s.target)
        self.draft = get_draft(s.target, self.target, s.draft)
        self.ids = encode_prompt(self.target, self.prompt, s.chat, s.max_new_tokens)

    def stream(self) -> None:
        """Prefill and the first token's law, then the samples, repainting as they come."""
        s = self.strings
        status = st.empty()
        bar = st.progress(0.0, text=s["progress_start"])
        board = st.empty()
        waited = [time.perf_counter()]

        def wait() -> None:  # another session holds the models: say so, and let Stop through
            stop_if_pressed()
            status.info(s("busy", seconds=time.perf_counter() - waited[0]), icon=":material/hourglass_top:")

        lab = self.lab = LawLab(self.target, self.draft, self.ids, self.settings, wait)
        lab.prime()
        start, pacer, paints = time.perf_counter(), Pacer(PAINT_EVERY), 0
        for rule in lab.order():
            stop_if_pressed()
            waited[0] = time.perf_counter()
            lab.draw(rule)
            status.empty()
            last = lab.done == lab.total
            if not pacer.due(last):
                continue
            left = eta_s(lab.done, lab.total, time.perf_counter() - start)
            counts = {r: t.n for r, t in lab.tallies.items()}
            text = s(
                "progress",
                done=lab.done,
                total=lab.total,
                exact=counts["exact"],
                broken=counts[self.settings.broken],
                rule=s[f"rules.{self.settings.broken}"],
                eta=left or 0.0,
            )
            bar.progress(lab.done / lab.total, text=md(text))
            paints += 1
            with board.container():
                show(self.settings, snapshot(lab, self.target.token_text), key=f"law_live_{paints}")

    def result(self, finished: bool) -> tuple[Any, LawSnapshot] | None:
        """The counts so far and what they show (None before the first sample)."""
        lab = self.lab
        if lab is None or lab.done == 0:
            return None
        return (self.settings, snapshot(lab, self.target.token_text, finished))

    def keep(self, value: Any) -> None:
        st.session_state[RESULT_KEY] = value
