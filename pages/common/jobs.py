"""A run a page starts with its Start button, driven one way for every page (live, race, compare).

The page hands :meth:`Job.panel` a way to build its run, an object with the four methods of
:class:`Run`; :meth:`Job.start` drives it in numbered steps. The job keeps its state in the
session under ``_<prefix>_go`` (Start was pressed), ``_<prefix>_job`` (the run under way and
the :class:`~specdec_core.live.runs.Handoff` that carries its result to the next script run)
and ``_<prefix>_error`` (a message for the next run). A Stop, like any press, ends the
streaming script (:func:`~pages.common.stop.stop_if_pressed`); the next script run may start
at once in another thread and waits for the result (:meth:`Job.collect`). Messages come from
lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, Protocol

import streamlit as st

from pages.common.i18n import strings
from pages.common.urlstate import Param, restore
from specdec_core.live.model_choices import ChoiceError
from specdec_core.live.runs import Handoff, PromptError
from specdec_core.models import ModelBusyError
from specdec_core.viz.escape import md, server_paths_hidden

WAIT_LIMIT = 600.0  # seconds to wait for another session's generation, or for a stopped run


class Refused(ValueError):
    """A run its page refuses before it starts (settings out of bounds); the message is already
    in the page's language and is shown as it is."""


class Run(Protocol):
    """What a page's Start button runs; :meth:`Job.start` calls these in this order."""

    def prepare(self) -> None:
        """Load the models and check the input; raise ``PromptError``, ``ValueError`` or ``OSError``
        to show a message instead of running."""

    def stream(self) -> None:
        """Run the engine, drawing into the page as events come; call ``stop_if_pressed``
        between events. ``ModelBusyError`` or ``ValueError`` become the page's message."""

    def result(self, finished: bool) -> Any:
        """Close the engine's runs and return what to keep (None for nothing); called even after
        a Stop (`finished` False), so it makes no Streamlit call, which would raise again."""

    def keep(self, value: Any) -> None:
        """In the next script run: put `value` (from :meth:`result`) where the page shows it."""


class Job:
    """The Start / Stop job of the page whose session keys start with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self._go = f"_{prefix}_go"
        self._job = f"_{prefix}_job"
        self._error = f"_{prefix}_error"
        self._stop = f"{prefix}_stop"

    def panel(
        self, label: str, key: str, icon: str, make_run: Callable[[], Run], params: Sequence[Param]
    ) -> None:
        """Start (`label`, `key`, `icon`) and Stop, and the run a press starts, in a fragment of
        their own: a press reruns only this part of the page, and nothing after it fades while
        the run streams. A press builds the run with `make_run()` then (reading the controls as
        they are) and :meth:`start` runs it; a pending result is collected first. `params` (the
        page's URL-mirrored controls) are restored first: a control the last whole-page run did
        not draw has no session value left, and the run reads them all. Start is disabled while
        its run goes: a second press could not start a second run anyway."""

        @st.fragment
        def part() -> None:
            restore(params)
            row = st.container(horizontal=True)
            going = bool(st.session_state.get(self._go))
            row.button(label, type="primary", key=key, on_click=self._press, icon=icon, disabled=going)
            row.button(strings("live")["stop"], key=self._stop, disabled=not going, icon=":material/stop:")
            self.collect()
            if st.session_state.pop(self._go, False):
                self.set_error(None)
                self.start(make_run())
            if st.session_state.get(self._error):
                st.error(st.session_state[self._error], icon=":material/error:")

        part()

    def _press(self) -> None:
        st.session_state[self._go] = True

    def set_error(self, message: str | None) -> None:
        """Show `message` as this page's error from now on (None clears it)."""
        if message is None:
            st.session_state.pop(self._error, None)
        else:
            st.session_state[self._error] = message

    def start(self, run: Run) -> NoReturn:
        """Run `run` (a Start press), in the same steps on every page:

        1. ``run.prepare()``: models and input; a failure becomes the page's message;
        2. a :class:`Handoff` in the session, which the next script run waits for;
        3. ``run.stream()``: the engine's events drawn as they come, until the end or a Stop;
        4. ``run.result(finished)``, always, handed over with any error message;
        5. a whole-page rerun, in which :meth:`collect` gives the result to ``run.keep``.
        """
        s = strings("live")
        with self._preparing():
            run.prepare()
        handoff = Handoff()
        st.session_state[self._job] = (run, handoff)
        finished = False
        error = None
        try:
            run.stream()
            finished = True
        except ModelBusyError:
            error = s("busy_timeout", seconds=int(WAIT_LIMIT))
        except ValueError as exc:
            error = s("run_error", message=md(server_paths_hidden(exc)))
        finally:
            handoff.finish(run.result(finished), error)
        st.rerun()

    def collect(self) -> None:
        """Give the last run's result to its ``keep`` (waiting for a stopped run to wind down)."""
        pending = st.session_state.get(self._job)
        if pending is None:
            return
        run, handoff = pending
        if not handoff.done:
            with st.spinner(strings("live")["stopping"]):
                handoff.wait(WAIT_LIMIT)
        del st.session_state[self._job]
        if handoff.value is not None:
            run.keep(handoff.value)
        if handoff.error:
            self.set_error(handoff.error)

    @contextmanager
    def _preparing(self) -> Iterator[None]:
        """Turn a bad prompt, a missing model or a mismatched pair into the page's message."""
        s = strings("live")
        try:
            yield
        except Refused as exc:
            self._fail(str(exc))
        except PromptError as exc:
            params = {k: md(v) if isinstance(v, str) else v for k, v in exc.params.items()}
            self._fail(s(f"prompt_errors.{exc.code}", **params))
        except (ValueError, OSError) as exc:  # a missing model, a mismatched pair, a bad layer count
            self._fail(model_error_text(exc))

    def _fail(self, message: str) -> NoReturn:
        """Keep `message` for the next run and rerun the page, so it comes back idle."""
        self.set_error(message)
        st.rerun()


def error_text(exc: BaseException) -> str:
    """Why a run could not start or ended early, in the page's language: a refused setting, a
    bad prompt, models busy too long, a model that cannot load, or the run's own error."""
    s = strings("live")
    if isinstance(exc, Refused):
        return str(exc)
    if isinstance(exc, PromptError):
        params = {k: md(v) if isinstance(v, str) else v for k, v in exc.params.items()}
        return s(f"prompt_errors.{exc.code}", **params)
    if isinstance(exc, ModelBusyError):
        return s("busy_timeout", seconds=int(WAIT_LIMIT))
    if isinstance(exc, ValueError | OSError):  # a missing model, a mismatched pair, a bad layer count
        return model_error_text(exc)
    return s("run_error", message=md(server_paths_hidden(exc)))


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
