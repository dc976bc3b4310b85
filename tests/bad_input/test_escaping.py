"""Token texts and labels made of Markdown, KaTeX and HTML specials show as their literal text.

Every page that shows untrusted text is opened under AppTest with payloads in it; each
Markdown string the page shows (markdown lines, captions, alerts, radio and metric labels)
that carries a payload must render it literally (tests/bad_input/payloads.py says how that
is judged), and plotly figures must carry it HTML-escaped.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from specdec_core.course import pairs
from specdec_core.course.sampling_lab import format_logit_table
from specdec_core.live.text import readable, token_bytes
from specdec_core.viz import escape
from specdec_core.viz import live as live_viz
from specdec_core.viz.labels import short_label
from support.apptest import open_page, rerun
from tests.bad_input.hostile import hostile_trace
from tests.bad_input.payloads import MARKERS, PAYLOADS, rendered_text, shows_literally


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
    for r in range(min(len(trace.speculative.events), 3)):
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


def _pair_table(labels) -> str:
    """A valid p/q table with these labels: p and q differ, so deficit and surplus sets are not empty."""
    n = len(labels)
    p = [2 * (i + 1) / (n * (n + 1)) for i in range(n)]
    q = list(reversed(p))
    return pairs.to_json([(lab, a, b) for lab, a, b in zip(labels, p, q, strict=True)])


def _charts(at) -> list[str]:
    """The figures' JSON, with the characters plotly writes as \\u escapes read back."""
    out = []
    for c in at.get("plotly_chart"):
        spec = c.proto.spec
        for code, char in (("\\u002f", "/"), ("\\u003c", "<"), ("\\u003e", ">"), ("\\u0026", "&")):
            spec = spec.replace(code, char)
        out.append(spec)
    return out


def _html_blocks(at) -> list[str]:
    return [h.proto.body for h in at.get("html")]


def _check_page(at, shown: dict[str, str] | None = None, least: int = len(PAYLOADS)) -> None:
    """At least `least` payloads appear somewhere, and wherever one does it is literal (Markdown)
    or escaped (HTML blocks, figures)."""
    shown = shown or {}
    absent = []
    sources = shown_markdown(at)
    html_blocks, charts = _html_blocks(at), _charts(at)
    for payload, marker in zip(PAYLOADS, MARKERS, strict=True):
        want = shown.get(payload, payload)
        places = [s for s in sources + html_blocks + charts if marker in s]
        if not places:
            absent.append(payload)
        for s in sources:
            if marker in s:
                assert shows_literally(s, want), (payload, s)
        for body in html_blocks + charts:
            if marker in body and any(c in payload for c in "<>&"):
                assert payload not in body and escape.html_text(want) in body, (payload, body[:300])
    assert len(PAYLOADS) - len(absent) >= least, f"{absent} not shown: the walk would test too little"


PAGE_INPUTS = {
    "sampling_lab": {"logits": format_logit_table(list(PAYLOADS), [float(i) for i in range(len(PAYLOADS))])},
    "tree": {"tree_table": _pair_table(PAYLOADS), "tree_top_n": "8"},
    "overlap": {"ov_table": _pair_table(PAYLOADS)},
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", sorted(PAGE_INPUTS))
def test_user_labels_show_literally_on_every_page_that_takes_them(page, lang):
    at = open_page(page, lang, query=PAGE_INPUTS[page])
    assert not at.warning or all("zq" not in w.value for w in at.warning)
    shown = {p: short_label(p, 10) for p in PAYLOADS} if page == "tree" else None
    _check_page(at, shown, least=8 if page == "tree" else len(PAYLOADS))  # the tree draws its top 8


def test_live_page_shows_a_hostile_trace_literally_everywhere():
    trace = hostile_trace()
    at = open_page("live", state={"live_trace": trace})
    _check_page(at, {p: live_viz.label(p) for p in PAYLOADS})
    picker = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
    assert picker and all("<b>zq6</b>" not in h for h in picker) and any("&lt;b&gt;zq6" in h for h in picker)


def test_race_results_show_draft_names_literally():
    at = open_page("race", state={"race_target": "toy", "race_max": 24, "race_t": 0.0})
    at.button(key="race_run").click()
    rerun(at)
    result = at.session_state["race_results"]["copy"]
    names = {k: PAYLOADS[i % len(PAYLOADS)] for i, k in enumerate(result.names)}
    hostile = replace(result, names=names)
    shown = open_page(
        "race", state={"race_target": "toy", "race_results": {"copy": hostile}, "_race_last": "copy"}
    )
    sources = shown_markdown(shown)
    winner = [s for s in sources if any(m in s for m in MARKERS)]
    assert winner, "the verdict names the winning draft"
    for s in winner:
        assert any(shows_literally(s, p) for p in PAYLOADS), s
    for spec in _charts(shown):
        assert "<b>zq6</b>" not in spec


def test_a_token_that_reads_backslash_x41_stays_so():
    """Only the byte escapes backslashreplace writes (\\x80–\\xff, lower case) are bytes."""
    assert token_bytes("\\x41") == b"\\x41" and token_bytes("\\xE4") == b"\\xE4"
    assert token_bytes("\\xe4\\xb8\\xad") == "中".encode()
    assert readable(["\\x41", "\\xe4\\xb8", "\\xad"], [True, True, True]) == ["\\x41", None, "中"]


def test_server_paths_are_cut_to_their_file_name():
    import sys

    from specdec_core.viz.escape import server_paths_hidden

    message = (
        f"no file {sys.prefix}/lib/python3/site-packages/transformers/x.py; see /home/u/model/config.json"
    )
    assert server_paths_hidden(message) == "no file …/x.py; see /home/u/model/config.json"
    assert server_paths_hidden("/root/.cache/huggingface/hub/models--a/config.json") == "…/config.json"
    assert server_paths_hidden("The folder '/etc' has no weights.") == "The folder '/etc' has no weights."
