"""Token texts and labels made of Markdown, KaTeX and HTML specials show as their literal text.

Every page that shows untrusted text is opened under AppTest with payloads in it; each
Markdown string the page shows (markdown lines, captions, alerts, radio and metric labels)
that carries a payload must render it literally (tests/bad_input/payloads.py says how that
is judged), and plotly figures must carry it HTML-escaped.
"""

from __future__ import annotations

import pytest

from specdec_core.viz import escape
from specdec_core.viz import live as live_viz
from tests.apptest_helpers import open_page
from tests.bad_input.hostile import hostile_trace
from tests.bad_input.payloads import MARKERS, PAYLOADS, literal_everywhere, rendered_text, shows_literally


def shown_markdown(at) -> list[str]:
    """Every Markdown source the page shows: markdown, captions, alerts, radio/metric labels, options."""
    out = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in ("info", "warning", "error", "success"):
        out += [e.value for e in getattr(at, kind)]
    for r in at.radio:
        out += [r.label, *r.options]
    out += [m.label for m in at.metric]
    return out


@pytest.mark.parametrize("payload", [*PAYLOADS, "# x\n- y", "1. z", "> q", "| a | b |", "~~s~~", ":smile:"])
def test_md_renders_the_literal_text(payload):
    assert rendered_text(escape.md(payload)).replace("\n", "") == payload.replace("\n", "")
    line = payload.replace("\n", " ")
    assert shows_literally(escape.md(line), line)
    assert shows_literally(escape.md_strong(line), line)


def test_html_text_escapes_tags_and_quotes():
    assert escape.html_text('<b a="x">&') == "&lt;b a=&quot;x&quot;&gt;&amp;"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_live_inspector_shows_tokens_literally(lang):
    """The reported bug: the round line, decision lines and position labels took tokens raw."""
    trace = hostile_trace()
    at = open_page("live", lang, state={"live_trace": trace, "live_round": 0, "live_slot": 0})
    shown = {p: live_viz.label(p) for p in PAYLOADS}
    seen = set()
    for r in range(min(len(trace.speculative.events), 6)):
        at.session_state["live_round"] = r
        for slot in range(len(trace.speculative.events[r].committed)):
            at.session_state["live_slot"] = slot
            at.run()
            assert not at.exception
            sources = shown_markdown(at)
            seen |= {m for m in MARKERS if any(m in s for s in sources)}
            carrying = [s for s in sources if any(m in s for m in MARKERS)]
            for payload, marker in zip(PAYLOADS, MARKERS, strict=True):
                for s in carrying:
                    if marker in s:
                        assert shows_literally(s, shown[payload]), (payload, s)
    assert len(seen) >= 6, f"the inspector showed too few payloads to test: {sorted(seen)}"
    assert literal_everywhere  # used by the page walk below
