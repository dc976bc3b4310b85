"""The bad-input catalogue (tests/bad_input/catalogue.py): every case gets its message, in the
page's language, on a page that stays usable — no traceback, no server path."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support.apptest import ROOT, open_page, rerun
from tests.bad_input.catalogue import CASES, Case
from tests.conftest import TINY_TEXT, build_alien_tokenizer, build_tiny_model, build_tiny_tokenizer

#: What a learner must never see: a traceback, or where the server keeps its files.
FORBIDDEN = ("Traceback", 'File "', "site-packages", ".venv", str(ROOT))


@cache
def _table(lang: str, name: str) -> dict[str, Any]:
    with (ROOT / "lessons" / lang / f"{name}.toml").open("rb") as f:
        return tomllib.load(f)


def fragments(lang: str, table: str, key: str) -> list[str]:
    """The fixed parts of a UI string (between its {placeholders}), those long enough to find."""
    node: Any = _table(lang, table)
    for part in key.split("."):
        node = node[part]
    return [f.strip() for f in re.split(r"\{[^}]*\}", node) if len(f.strip()) >= 4]


def shown_texts(at) -> list[str]:
    """Everything textual the page shows."""
    out = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.title]
    for kind in ("info", "warning", "error", "success", "exception", "code", "text"):
        out += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    out += [h.proto.body for h in at.get("html")]
    return [re.sub(r"\\(.)", r"\1", t) for t in out]  # as read: Markdown escapes undone


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    """Model folders for the custom-model cases: a tiny model, one with another tokenizer, one
    whose tokenizer shares no token with the first, a folder whose config.json is broken, and
    one with weights but no config or tokenizer."""
    root = tmp_path_factory.mktemp("bad_models")
    tok = build_tiny_tokenizer()
    other = build_tiny_tokenizer(TINY_TEXT.upper() + "0123456789 xyz!?", vocab_size=len(tok))
    broken, noconf = root / "broken", root / "noconf"
    for folder in (broken, noconf):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"")
    (broken / "config.json").write_text('{"model_type": "llama", "hidden_size": ')
    return {
        "target": str(build_tiny_model(root / "target", tok, layers=2, seed=0)),
        "other": str(build_tiny_model(root / "other", other, layers=2, seed=2)),
        "alien": str(build_tiny_model(root / "alien", build_alien_tokenizer(), layers=1, seed=3)),
        "broken": str(broken),
        "noconf": str(noconf),
    }


def _fill(value: Any, sources: dict[str, str]) -> Any:
    return value.format(**sources) if isinstance(value, str) and "{" in value else value


def _alerts(at, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


def run_case(case: Case, sources: dict[str, str]):
    state = {k: _fill(v, sources) for k, v in case.state.items()}
    at = open_page(case.page, case.lang, query=case.query, state=state)
    if case.act:
        at.button(key={"generate": "live_generate", "race": "race_run", "law": "law_run"}[case.act]).click()
        rerun(at)
    return at


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gets_a_clear_message_on_a_usable_page(case: Case, sources):
    at = run_case(case, sources)
    shown = shown_texts(at)  # read as the learner reads it
    for text in shown:
        for bad in FORBIDDEN:
            assert bad not in text, f"{bad!r} shown to the learner: {text[:300]!r}"
    assert at.title, "the page is still drawn"
    if case.kind == "ok":
        assert not at.error, _alerts(at, "error")
    else:
        alerts = [re.sub(r"\\(.)", r"\1", a) for a in _alerts(at, case.kind)]
        want = fragments(case.lang, case.table, case.key) + list(case.extra)
        assert any(all(w in a for w in want) for a in alerts), (want, alerts, _alerts(at, "error"))
    if case.check is not None:
        case.check(at)


def test_the_catalogue_is_big_and_names_are_unique():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)) and len(names) >= 60, len(names)
    assert {c.lang for c in CASES} == {"en", "zh"}
    assert {c.page for c in CASES} >= {
        "sampling_lab",
        "tree",
        "overlap",
        "block",
        "cost",
        "live",
        "race",
        "home",
    }


def test_upload_limit_agrees_with_the_server_config():
    from specdec_core.live.limits import MAX_UPLOAD_MB

    config = tomllib.loads(Path(ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_limits_are_stated_where_the_input_is(lang):
    """Each limit of specdec_core/live/limits.py is shown by the input it bounds."""
    from specdec_core.live import limits

    live = open_page("live", lang)
    assert f"{limits.MAX_PROMPT_CHARS:,}" in live.text_area(key="live_prompt").help
    assert live.slider(key="live_max").max == limits.MAX_NEW_TOKENS
    assert str(limits.MAX_NEW_TOKENS) in live.slider(key="live_max").help
    uploader = [u for u in live.get("file_uploader") if "live_upload" in u.proto.id]
    assert uploader and uploader[0].proto.max_upload_size_mb == limits.MAX_UPLOAD_MB
    assert f"{limits.MAX_UPLOAD_MB} MB" in uploader[0].proto.help
    race = open_page("race", lang)
    assert race.slider(key="race_max").max == limits.MAX_RACE_NEW_TOKENS
    assert f"{limits.MAX_PROMPT_CHARS:,}" in race.text_area(key="race_prompt").help
    overlap = open_page("overlap", lang)
    assert any(str(limits.MAX_PAIR_ROWS) in c.value for c in overlap.caption)
    lab = open_page("sampling_lab", lang)
    assert any(
        f"{limits.MIN_LOGIT_ROWS}" in c.value and f"{limits.MAX_LOGIT_ROWS}" in c.value for c in lab.caption
    )
