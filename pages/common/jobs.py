"""A generation job of the live pages that survives Stop and reruns: start, run, collect, fail.

A page makes one :class:`Job` per script run, named by its key prefix; the job keeps its
state in the session under ``_<prefix>_go`` (Start was pressed), ``_<prefix>_job`` (the
:class:`~specdec_core.live.runs.Handoff` of a run under way) and ``_<prefix>_error`` (a
message for the next run). Start, Stop and the run sit in a fragment of their own
(:meth:`Job.panel`). A Stop, like any rerun, interrupts the script that is streaming
(:func:`stop_if_pressed`); the run hands what it made to the next script run, which may start
at once in another thread and waits for it (:meth:`Job.step`). Messages come from
lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from pages.common.i18n import strings
from pages.common.urlstate import Param, restore
from specdec_core.live.model_choices import ChoiceError
from specdec_core.live.runs import Handoff, PromptError
from specdec_core.models import ModelBusyError
from specdec_core.viz.escape import md, server_paths_hidden

WAIT_LIMIT = 600.0  # seconds to wait for another session's generation, or for a stopped run


class Job:
    """The generation job of the page whose session keys start with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self._go = f"_{prefix}_go"
        self._job = f"_{prefix}_job"
        self._error = f"_{prefix}_error"
        self._stop = f"{prefix}_stop"

    def _buttons(self, label: str, key: str, icon: str) -> None:
        """The Start button (`label`, `key`, `icon`) and Stop, side by side at the left: one
        row element, not columns (four elements), as each element is a message the browser
        renders while the models start."""
        row = st.container(horizontal=True)
        going = bool(st.session_state.get(self._go))
        row.button(label, type="primary", key=key, on_click=self._press, icon=icon)
        row.button(
            strings("live")["stop"],
            key=self._stop,
            disabled=not going,
            icon=":material/stop:",
        )

    def panel(
        self,
        label: str,
        key: str,
        icon: str,
        keep: Callable[[Any], None],
        run: Callable[[], NoReturn],
        params: Sequence[Param],
    ) -> None:
        """Start and Stop (:meth:`_buttons`) and the run they start (:meth:`step`) in a fragment
        of their own: a press reruns only this part of the page, so the browser redraws little
        while the models start (a whole-page redraw took it a core for about 0.2 s, the length
        of a prompt's prefill), and the elements after it never turn stale and fade while the
        run streams. :meth:`run` asks for a whole-page run at its end, which shows the result.
        Stop sits in the same fragment, where Streamlit would let its press wait for the run's
        end: the run's loops call :func:`stop_if_pressed` to stop at once all the same.
        `params` (the page's URL-mirrored controls) are restored first: a control the last
        whole-page run did not draw has no session value left, and only the page's own
        :func:`~pages.common.urlstate.restore` would have put it back."""

        @st.fragment
        def part() -> None:
            restore(params)
            self._buttons(label, key, icon)
            self.step(keep, run)

        part()

    def _press(self) -> None:
        st.session_state[self._go] = True

    def set_error(self, message: str | None) -> None:
        """Show `message` as this page's error from now on (None clears it)."""
        if message is None:
            st.session_state.pop(self._error, None)
        else:
            st.session_state[self._error] = message

    def step(self, keep: Callable[[Any], None], run: Callable[[], NoReturn]) -> None:
        """Collect the last run's result (`keep` stores it), `run` if Start was pressed, show the error."""
        self._collect(keep)
        if st.session_state.pop(self._go, False):
            self.set_error(None)
            run()
        if st.session_state.get(self._error):
            st.error(st.session_state[self._error], icon=":material/error:")

    def _collect(self, keep: Callable[[Any], None]) -> None:
        """Take over the result of the last run (waiting for an interrupted one to wind down)."""
        job = st.session_state.get(self._job)
        if job is None:
            return
        if not job.done:
            with st.spinner(strings("live")["stopping"]):
                job.wait(WAIT_LIMIT)
        del st.session_state[self._job]
        if job.value is not None:
            keep(job.value)
        if job.error:
            self.set_error(job.error)

    def _fail(self, message: str) -> NoReturn:
        """Keep `message` for the next run and rerun, so the page comes back usable."""
        self.set_error(message)
        st.rerun()

    @contextmanager
    def preparing(self) -> Iterator[None]:
        """Turn a bad prompt, a missing model or a mismatched pair into a message (and a rerun)."""
        s = strings("live")
        try:
            yield
        except PromptError as exc:
            self._fail(
                s(
                    f"prompt_errors.{exc.code}",
                    **{k: md(v) if isinstance(v, str) else v for k, v in exc.params.items()},
                )
            )
        except (ValueError, OSError) as exc:  # a missing model, a mismatched pair, a bad layer count
            self._fail(model_error_text(exc))

    def run(self, stream: Callable[[], None], result: Callable[[bool], Any]) -> NoReturn:
        """Run `stream` (it draws into the page), then hand ``result(finished)`` to the next run.

        A Stop (or any rerun) interrupts `stream`; `result` is called all the same, in
        ``finally``, with `finished` False: it closes the runs and returns what they made
        (None for nothing) and must make no Streamlit call, since after a Stop each one would
        raise again. A busy model or a failed run becomes the next run's error message.
        """
        s = strings("live")
        job = Handoff()
        st.session_state[self._job] = job
        finished = False
        error = None
        try:
            stream()
            finished = True
        except ModelBusyError:
            error = s("busy_timeout", seconds=int(WAIT_LIMIT))
        except ValueError as exc:
            error = s("run_error", message=md(server_paths_hidden(exc)))
        finally:
            job.finish(result(finished), error)
        st.rerun()


def stop_if_pressed() -> None:
    """End this run as any press ends it (a rerun), if the browser has asked for one meanwhile:
    a press inside a fragment (Stop in :meth:`Job.panel`) does not interrupt the fragment's run
    by itself, so a run's loops call this between rounds."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    if getattr(requests, "_state", None) == ScriptRequestType.RERUN:
        st.rerun()


#: Model errors by class name (the loading errors live with torch, imported only when a real
#: model loads, so they are matched by name) → their message in lessons/<lang>/live.toml.
_MODEL_ERRORS = {
    "TokenizerMismatchError": "mismatch",
    "ModelNotAvailableError": "not_available",
    "ModelLoadError": "cannot_load",
}


def model_error_text(exc: Exception) -> str:
    """Why the models could not be prepared, in the page's language; the core's own (English)
    detail follows, escaped, since it names the model or folder at fault."""
    s = strings("live")
    code = getattr(exc, "code", None) if isinstance(exc, ChoiceError) else None
    for cls in type(exc).__mro__:
        code = code or _MODEL_ERRORS.get(cls.__name__)
    return s(f"model_errors.{code or 'other'}", detail=md(server_paths_hidden(exc)))
