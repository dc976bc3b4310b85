"""The bad-input catalogue: each case is one input a learner (or a link, or a file) can give a
page, and the message that input must get.

A case opens a fresh AppTest of `page` in `lang` with its URL `query` and session `state`,
optionally presses a button (`act`: "generate" on the live page, "race" on the race page)
and then expects an alert of `kind` ("warning", "error", "info") whose text contains the
string `table`.`key` of lessons/<lang>/*.toml (its fixed parts) and each of `extra`; or, for
kind "ok", no error at all (`check`, when given, then inspects the page). Every case also
requires a usable page: no exception, no traceback or server path in anything shown
(tests/bad_input/test_catalogue.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from specdec_core.course.sampling_lab import format_logit_table
from specdec_core.live.limits import MAX_PAIR_ROWS, MAX_PROMPT_CHARS, MAX_SOURCE_CHARS, MAX_TRACE_BYTES
from specdec_core.live.trace import to_json
from tests.bad_input.hostile import hostile_trace, toy_trace


@dataclass(frozen=True)
class Case:
    name: str
    page: str
    kind: str  # "warning", "error", "info" or "ok"
    table: str = ""
    key: str = ""
    query: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    act: str | None = None
    extra: tuple[str, ...] = ()
    check: Callable[[Any], None] | None = None
    lang: str = "en"


def url(page: str, param: str, raw: str, lang: str = "en", **query: str) -> Case:
    """A link whose `param` cannot be read: the page warns, names it, and resets it."""
    return Case(f"url-{page}-{param}={raw[:12]}", page, "warning", "common", "url_rejected",
                query={param: raw, **query}, extra=(param,), lang=lang)  # fmt: skip


URL_CASES = [
    url("sampling_lab", "preset", "nope"),
    url("sampling_lab", "seed", "-1", "zh"),
    url("sampling_lab", "size", "999"),
    url("sampling_lab", "T", "abc"),
    url("sampling_lab", "k", "99", "zh"),
    url("sampling_lab", "p", "0"),
    url("sampling_lab", "p", "2.5"),
    url("sampling_lab", "min_keep", "0", "zh"),
    url("sampling_lab", "order", "xyz"),
    url("sampling_lab", "T0", "yes"),
    url("tree", "tree_top_n", "0"),
    url("tree", "tree_seed", "1e99", "zh"),
    url("tree", "tree_preset", "<script>"),
    url("overlap", "ov_variant", "magic"),
    url("overlap", "ov_mc_seed", "-3", "zh"),
    url("overlap", "ov_mc_law", "[x](y)"),
    url("block", "block_round", "99999"),
    url("block", "block_k", "0", "zh"),
    url("block", "block_t", "nan"),
    url("block", "block_chain", "**bold**"),
    url("cost", "cost_alpha", "1.5"),
    url("cost", "cost_gamma", "inf", "zh"),
    url("cost", "cost_verify", "quadratic"),
    url("live", "live_target", "evil"),
    url("live", "live_max", "100000", "zh"),
    url("live", "live_topp", "0"),
    url("live", "live_topk", "-1"),
    url("live", "live_t", "1e308"),
    url("live", "live_target_src", "a" * (MAX_SOURCE_CHARS + 1), "zh"),
    url("race", "race_depths", "1," * 60),
    url("race", "race_max", "9999"),
    url("race", "race_repeats", "0", "zh"),
]


def _lang_case(page: str, lang: str) -> Case:
    def check(at) -> None:
        assert at.title and at.title[0].value, "the page still has its title"
        assert at.session_state["lang"] == "en", "an unknown language falls back to English"

    return Case(f"url-{page}-lang={lang}", page, "ok", query={"lang": lang}, check=check)


LANG_CASES = [_lang_case("home", "xx"), _lang_case("overlap", "<b>"), _lang_case("live", "")]


def _pair(rows: list[list[Any]] | str) -> str:
    return rows if isinstance(rows, str) else json.dumps(rows)


def table(name: str, rows, kind: str, key: str, page: str = "overlap", lang: str = "en", **extra) -> Case:
    """A p/q table (it reaches the editor through the link, like a shared example)."""
    param = "ov_table" if page == "overlap" else "tree_table"
    table_name = "common" if key == "url_rejected" else "pair"
    return Case(f"table-{page}-{name}", page, kind, table_name, key, query={param: _pair(rows)},
                extra=(param,) if key == "url_rejected" else tuple(extra.values()), lang=lang)  # fmt: skip


def _one_row(at) -> None:
    assert any("R = 0" in i.value or "R = 0" in i.value for i in at.info), "one token: nothing is rejected"


TABLE_CASES = [
    table("nan", '[["a",NaN,0.5],["b",1,0.5]]', "error", "errors.missing"),
    table("inf", '[["a",Infinity,0.5],["b",0,0.5]]', "error", "errors.missing", "tree", "zh"),
    table("negative", [["a", -0.5, 0.5], ["b", 1.5, 0.5]], "error", "errors.negative"),
    table("text", [["a", "abc", 0.5], ["b", 0.5, 0.5]], "warning", "url_rejected", "tree"),
    table("sum", [["a", 0.5, 0.5], ["b", 0.4, 0.5]], "error", "errors.sum", lang="zh"),
    table("empty", [], "error", "errors.empty"),
    table("blank-label", [["", 0.5, 0.5], ["b", 0.5, 0.5]], "error", "errors.blank_label", "tree"),
    table("zero-column", [["a", 0, 0.5], ["b", 0, 0.5]], "error", "errors.zero"),
    table("missing-cell", [["a", 1.0, None]], "error", "errors.missing", lang="zh"),
    table("short-row", [["a", 0.5, 0.5], ["b", 0.5]], "warning", "url_rejected"),
    table("hundreds", [[f"t{i}", 1 / 300, 1 / 300] for i in range(300)], "warning", "url_rejected"),
    table("not-json", "{{{", "warning", "url_rejected", "tree", "zh"),
    Case("table-overlap-one-row", "overlap", "ok", query={"ov_table": '[["a",1,1]]'}, check=_one_row),
    Case(
        "table-tree-max-rows",
        "tree",
        "ok",
        query={
            "tree_table": json.dumps(
                [[f"t{i}", 1 / MAX_PAIR_ROWS, 1 / MAX_PAIR_ROWS] for i in range(MAX_PAIR_ROWS)]
            )
        },
    ),
]


def logits(name: str, raw: str, lang: str = "en") -> Case:
    return Case(f"logits-{name}", "sampling_lab", "warning", "common", "url_rejected",
                query={"logits": raw}, extra=("logits",), lang=lang)  # fmt: skip


LOGIT_CASES = [
    logits("nan", "a:nan,b:1,c:2"),
    logits("inf", "a:inf,b:1,c:2", "zh"),
    logits("1e308", "a:1e308,b:1,c:2"),
    logits("text", "a:abc,b:1,c:2"),
    logits("two-rows", "a:1,b:2", "zh"),
    logits("thirteen-rows", format_logit_table([f"t{i}" for i in range(13)], [0.0] * 13)),
    logits("no-colon", "garbage"),
]


def _greedy_check(at) -> None:
    assert at.metric, "the lab still shows its metrics"


SAMPLING_CASES = [
    Case("sampling-T-tiny", "sampling_lab", "ok", query={"T": "1e-9"}, check=_greedy_check),
    Case("sampling-T-huge", "sampling_lab", "ok", query={"T": "1e6"}, check=_greedy_check),
    Case("sampling-topk-all", "sampling_lab", "ok", query={"k": "12", "min_keep": "12"}),
    Case("sampling-topp-smallest", "sampling_lab", "ok", query={"p": "0.01"}, check=_greedy_check),
    Case("sampling-ties", "sampling_lab", "ok", query={"logits": "a:1,b:1,c:1", "p": "0.3", "k": "1"}),
]

TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 24}


def live(name: str, kind: str, key: str, lang: str = "en", act: str | None = "generate", **state) -> Case:
    return Case(f"live-{name}", "live", kind, "live", key, state={**TOY, **state}, act=act, lang=lang)


def _generated(at) -> None:
    assert "live_trace" in at.session_state, "the run finished and was kept"


PROMPT_CASES = [
    live("prompt-empty", "error", "prompt_errors.empty", live_prompt=""),
    live("prompt-whitespace", "error", "prompt_errors.empty", "zh", live_prompt=" \n\t  \n"),
    live("prompt-100k", "error", "prompt_errors.too_long", live_prompt="the cat " * 12_500),
    live(
        "prompt-just-over", "error", "prompt_errors.too_long", "zh", live_prompt="x" * (MAX_PROMPT_CHARS + 1)
    ),
    live("prompt-control-chars", "error", "prompt_errors.encode", live_prompt="the \x00\x07\x1b[31m cat"),
    live("prompt-unknown-words", "error", "prompt_errors.encode", "zh", live_prompt="the zebra **sat**"),
    live("prompt-markdown-words", "error", "prompt_errors.encode", live_prompt="[x](javascript:alert) $x$"),
]
PROMPT_CASES += [
    replace(live("sampling-T-max", "ok", "", live_t=2.0, live_prompt="the cat sat"), check=_generated),
    replace(
        live("sampling-topk-1", "ok", "", live_t=1.0, live_topk=1, live_prompt="the cat"), check=_generated
    ),
    replace(live("sampling-topk-1000", "ok", "", live_t=1.0, live_topk=1000), check=_generated),
    replace(live("sampling-topp-min", "ok", "", live_t=1.0, live_topp=0.05), check=_generated),
    replace(live("max-new-limit", "ok", "", live_max=512, live_prompt="the cat"), check=_generated),
]


def trace_case(name: str, raw: bytes | str, lang: str = "en", kind: str = "error", **extra: Any) -> Case:
    data = raw.encode() if isinstance(raw, str) else raw
    return Case(f"trace-{name}", "live", kind, "live", "import_error" if kind == "error" else "",
                state={"_live_import": data}, lang=lang, **extra)  # fmt: skip


def _edited(change: Callable[[dict], None]) -> str:
    data = json.loads(to_json(toy_trace()))
    change(data)
    return json.dumps(data)


def _nan_q(data: dict) -> None:
    for event in data["speculative"]["events"]:
        event["draft_q"] = [float("nan")] * len(event["draft_q"])


def _short_row(data: dict) -> None:
    row = data["speculative"]["events"][0]["p_rows"][0]
    row["probs"] = row["probs"][:-1]


def _texts(text: str) -> str:
    return _edited(lambda d: d.update(token_texts=dict.fromkeys(d["token_texts"], text)))


def _shows(fragment: str, absent: str) -> Callable[[Any], None]:
    def check(at) -> None:
        assert "live_trace" in at.session_state and not at.error
        picker = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
        assert picker and fragment in picker[0] and absent not in picker[0], picker[0][:400]

    return check


def _literal_trace(at) -> None:
    assert "live_trace" in at.session_state and not at.error
    blocks = [h.proto.body for h in at.get("html")]
    assert all("<b>zq6</b>" not in b for b in blocks)


TRACE_CASES = [
    trace_case("not-json", "{not json"),
    trace_case("not-utf8", b"\xff\xfe\x00garbage", "zh"),
    trace_case("a-list", "[]"),
    trace_case("other-format", json.dumps({"format": "something-else", "version": 1})),
    trace_case("version-99", _edited(lambda d: d.update(version=99)), "zh"),
    trace_case("version-text", _edited(lambda d: d.update(version="1"))),
    trace_case("no-events", _edited(lambda d: d["speculative"].update(events=[]))),
    trace_case("event-garbage", _edited(lambda d: d["speculative"]["events"].__setitem__(0, {"x": 1})), "zh"),
    trace_case("ids-outside-vocab", _edited(lambda d: d["models"].update(vocab_size=2))),
    trace_case("texts-missing", _edited(lambda d: d.update(token_texts={}))),
    trace_case("settings-bad", _edited(lambda d: d["settings"].update(temperature=-1)), "zh"),
    trace_case("nan-probability", _edited(_nan_q)),
    trace_case("huge", b" " * (MAX_TRACE_BYTES + 1)),
    trace_case("wall-time-negative", _edited(lambda d: d["speculative"].update(wall_s=-1)), "zh"),
    trace_case("row-lengths-differ", _edited(_short_row)),
    trace_case("html-markdown-tokens", to_json(hostile_trace()), kind="ok", check=_literal_trace),
    trace_case("token-literal-x41", _texts("\\x41"), kind="ok", check=_shows("\\x41", ">A<")),
    trace_case("token-invalid-utf8", _texts("\\xff"), "zh", kind="ok", check=_shows("\\xff", "\ufffd")),
]

# -- custom models: sources are filled in by the test ({target}, {other}, {alien}, {broken}, {noconf}) --
CUSTOM = {"live_target": "custom", "live_draft": "ngram", "live_max": 8, "live_prompt": "the quick brown fox"}


def model(name: str, key: str, lang: str = "en", extra: tuple[str, ...] = (), **state: Any) -> Case:
    return Case(f"model-live-{name}", "live", "error", "live", f"model_errors.{key}",
                state={**CUSTOM, **state}, act="generate", extra=extra, lang=lang)  # fmt: skip


def race(name: str, key: str, lang: str = "en", extra: tuple[str, ...] = (), **state: Any) -> Case:
    return Case(f"model-race-{name}", "race", "error", "live", f"model_errors.{key}",
                state={"race_max": 8, **state}, act="race", extra=extra, lang=lang)  # fmt: skip


MODEL_CASES = [
    model("missing-id", "no_target_source", live_target_src=""),
    model("blank-id", "no_target_source", "zh", live_target_src="   "),
    model("etc", "cannot_load", extra=("/etc",), live_target_src="/etc"),
    model("broken-config", "cannot_load", "zh", extra=("config",), live_target_src="{broken}"),
    model("no-config", "cannot_load", live_target_src="{noconf}"),
    model("no-such-folder", "not_available", live_target_src="/no/such/folder"),
    model("server-folder", "cannot_load", "zh", extra=("…/lib",), live_target_src=f"{sys.prefix}/lib"),
    model("not-cached-id", "not_available", "zh", live_target_src="nobody/not-cached-anywhere"),
    model("dot-dot-path", "not_available", live_target_src="../../etc/passwd"),
    model("markdown-id", "not_available", live_target_src="[x](http://e.vil)"),
    model(
        "draft-missing-id",
        "no_draft_source",
        live_target_src="{target}",
        live_draft="custom",
        live_draft_src="",
    ),
    model(
        "no-shared-token",
        "mismatch",
        "zh",
        live_target_src="{target}",
        live_draft="custom",
        live_draft_src="{alien}",
    ),
    Case(
        "model-live-layer-count",
        "live",
        "warning",
        "live",
        "k_lowered",
        state={**CUSTOM, "live_target_src": "{target}", "live_draft": "layerskip", "live_k": 99},
        act=None,
        extra=("99",),
    ),
    race("missing-id", "no_target_source", race_target="custom", race_target_src=""),
    race("etc", "cannot_load", "zh", race_target="custom", race_target_src="/etc"),
    race(
        "depths-text",
        "other",
        extra=("is not a list of layer counts",),
        race_drafts=["layerskip"],
        race_depths="abc",
    ),
    race(
        "depths-zero",
        "other",
        extra=("is not a list of layer counts",),
        race_drafts=["layerskip"],
        race_depths="0",
    ),
    race("no-drafts", "other", extra=("Choose at least one draft",), race_target="toy", race_drafts=[]),
]

LAW_TOY = {"law_target": "toy", "law_draft": "toy_draft", "law_n": 20}


def law(name: str, key: str, lang: str = "en", **state: Any) -> Case:
    """A lab ("Exact on a real model") run on the toy pair that must be refused with its message."""
    return Case(
        f"law-{name}", "law_live", "error", "law_live", key, state={**LAW_TOY, **state}, act="law", lang=lang
    )


LAW_CASES = [
    law("greedy", "problems.greedy", law_t=0.0),
    law("top-k-one", "problems.top_k_one", "zh", law_topk=1),
    Case(
        "law-prompt-empty",
        "law_live",
        "error",
        "live",
        "prompt_errors.empty",
        state={**LAW_TOY, "law_prompt": "  "},
        act="law",
    ),
    Case(
        "law-draft-unfit",
        "law_live",
        "warning",
        "law_live",
        "draft_unfit",
        state={**LAW_TOY, "law_draft": "head"},
    ),
    url("law_live", "law_n", "5000"),
    url("law_live", "law_t", "-1", "zh"),
]

CASES: list[Case] = [
    *URL_CASES,
    *LANG_CASES,
    *TABLE_CASES,
    *LOGIT_CASES,
    *SAMPLING_CASES,
    *PROMPT_CASES,
    *TRACE_CASES,
    *MODEL_CASES,
    *LAW_CASES,
]
