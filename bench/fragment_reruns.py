"""AppTest reruns as the server runs them after a control change: scoped to the control's fragment.

When a learner moves a control that sits in an ``st.fragment``, the browser sends the rerun
with that fragment's id, and the server runs the fragment alone, with every page script
compiled once per process (its ``ScriptCache``). AppTest 1.67 always reruns the whole page
and compiles the page afresh on each run. :func:`fragment_reruns` makes it do what the
server does, for the bench only: one script cache for all runs, and each run scoped to the
fragment in ``Scope.fragment_id`` (None: the whole page), which :meth:`Scope.fragment_of`
finds as the browser does, from the ``fragment_id`` of the changed widget's delta.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.testing.v1 import app_test, local_script_runner
from streamlit.testing.v1.local_script_runner import LocalScriptRunner


class Scope:
    """Which fragment the next AppTest runs are scoped to (None: the whole page)."""

    def __init__(self) -> None:
        self.fragment_id: str | None = None
        self.runner: LocalScriptRunner | None = None  # the last run's, for its messages

    def _new_elements(self) -> Iterator[tuple[Any, Any]]:
        """(delta, element) for each element the last run drew."""
        assert self.runner is not None, "no run yet"
        for msg in self.runner.forward_msgs():
            if msg.HasField("delta") and msg.delta.HasField("new_element"):
                yield msg.delta, msg.delta.new_element

    def fragment_of(self, key: str) -> str:
        """The id of the fragment the widget keyed `key` was drawn in by the last run."""
        for delta, element in self._new_elements():
            widget = getattr(element, element.WhichOneof("type") or "", None)
            widget_id = getattr(widget, "id", "")
            if widget_id and widget_id.endswith(f"-{key}") and delta.fragment_id:
                return delta.fragment_id
        raise LookupError(f"no widget keyed {key!r} inside a fragment")

    def plotly_charts(self) -> int:
        """How many plotly charts the last run drew (a fragment run must redraw its figures)."""
        return sum(1 for _, element in self._new_elements() if element.WhichOneof("type") == "plotly_chart")


@contextmanager
def fragment_reruns(server_cache: bool = True) -> Iterator[Scope]:
    """Within this block, AppTest scopes its runs as `Scope` says and (`server_cache`) keeps one
    script cache for all runs, as the server does; without it AppTest compiles every run."""
    scope = Scope()
    cache = ScriptCache()

    class Runner(LocalScriptRunner):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            scope.runner = self

    def rerun_data(**fields: Any) -> RerunData:
        # A runner starts with a pending RerunData() that the run's own request is folded
        # into: both must name the fragment, or the fold becomes a full-page rerun.
        if scope.fragment_id is not None:
            fields["fragment_id_queue"] = [scope.fragment_id]
        return RerunData(**fields)

    patches = [(app_test, "LocalScriptRunner", Runner), (local_script_runner, "RerunData", rerun_data)]
    if server_cache:
        patches += [(module, "ScriptCache", lambda: cache) for module in (app_test, local_script_runner)]
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, value in patches:
        setattr(module, name, value)
    try:
        yield scope
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
