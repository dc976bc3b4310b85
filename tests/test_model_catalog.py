"""The model catalog: the built-in kinds as the pages offer them, the one key grammar, and a new
draft kind and a new target each registered in one call, which then appear on every page that
offers drafts (or targets) and run there with no other change; no page branches on a kind."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from specdec_core.live.compare import default_drafts, default_targets, draft_keys, target_keys
from specdec_core.live.law import law_drafts, law_targets
from specdec_core.live.model_choices import (
    DraftSpec,
    TargetSpec,
    drafts_for,
    load_draft,
    load_target,
    target_layers,
    targets,
)
from specdec_core.live.race import key_depth, race_choices, race_entries
from specdec_core.models import NGramDraft, catalog
from specdec_core.models.hf import HFCausalLM
from support.apptest import open_page, rerun

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "the quick brown fox jumps over the lazy dog. the quick brown fox"


def test_the_built_in_kinds_are_what_the_pages_offered():
    assert targets() == ("bundled", "gemma", "toy", "custom")
    assert [t.key for t in catalog.targets() if not t.chat] == ["gemma", "toy"]
    assert [t.key for t in catalog.targets() if t.needs_source] == ["custom"]
    assert target_keys() == ("bundled", "gemma", "custom")  # the toy chain encodes only its words
    assert drafts_for("toy") == ("toy_draft", "ngram", "custom")
    assert drafts_for("bundled") == ("ngram", "bf16", "layerskip", "head", "medusa", "custom")
    assert drafts_for("gemma") == ("ngram", "bf16", "layerskip", "smollm2", "custom")
    assert law_targets() == ("bundled", "gemma", "toy") and "custom" not in law_drafts("bundled")
    assert race_choices(drafts_for("toy"), "toy") == ("toy_draft", "ngram")  # no typed draft on its words
    assert race_choices(drafts_for("bundled"), "bundled") == drafts_for("bundled")
    assert default_targets() == ("bundled",) and default_drafts() == ("ngram", "bf16", "head")
    assert [catalog.default_target(p) for p in ("live", "race", "law")] == ["bundled"] * 3
    assert catalog.default_drafts("live") == ("ngram",) and catalog.default_drafts("law") == ("head",)
    assert target_layers(TargetSpec("toy")) is None
    with pytest.raises(KeyError, match="unknown target 'nope'"):
        catalog.target("nope")


def test_one_key_grammar_round_trips_on_every_page_and_bench():
    for key in draft_keys():
        spec, tree = catalog.parse_draft_key(key)
        assert catalog.draft_key(spec, tree) == key and spec.kind in drafts_for("bundled") + drafts_for(
            "gemma"
        )
    assert catalog.parse_draft_key("layerskip-8@16384~tree") == (DraftSpec("layerskip", 8, vocab=16384), True)
    assert catalog.parse_draft_key("custom", " ./d ") == (DraftSpec("custom", source="./d"), False)
    entries = race_entries(["ngram", "layerskip", "custom"], "20, 10", " ./d ")
    assert entries == [
        ("ngram", DraftSpec("ngram")),
        ("layerskip-10", DraftSpec("layerskip", 10)),
        ("layerskip-20", DraftSpec("layerskip", 20)),
        ("custom", DraftSpec("custom", source="./d")),
    ]
    assert [catalog.parse_draft_key(k, " ./d ")[0] for k, _ in entries] == [s for _, s in entries]
    assert [key_depth(k) for k, _ in entries] == [None, 10, 20, None]


def test_the_target_draft_and_chat_rules_are_written_once():
    assert catalog.target_spec("custom", "  org/m ") == TargetSpec("custom", "org/m")
    assert catalog.target_spec("bundled", "ignored") == TargetSpec("bundled")
    assert catalog.parse_target("toy") == TargetSpec("toy")
    assert catalog.parse_target("/srv/m") == TargetSpec("custom", "/srv/m")
    assert catalog.chat_for("bundled", True) and not catalog.chat_for("gemma", True)
    assert not catalog.chat_for("bundled", False)
    assert catalog.draft_spec("ngram", 8, " x ", 4096) == DraftSpec("ngram")
    assert catalog.draft_spec("layerskip", 8, " x ", 4096) == DraftSpec("layerskip", 8, vocab=4096)
    assert catalog.draft_spec("custom", 8, " x ", 0) == DraftSpec("custom", source="x")


@pytest.fixture
def new_draft():
    """A draft kind registered the way a new kind is: one call (its label shows where the
    lessons' TOML has no string for it)."""
    catalog.register(
        catalog.DraftKind(
            "echo",
            "Echo test draft",
            lambda target, spec: NGramDraft.for_model(target),
            warm=False,
            grid=("echo",),
        )
    )
    yield "echo"
    catalog.unregister("echo")


@pytest.fixture
def new_target(tiny_hf_folders):
    """A target kind of tiny random Llamas, registered in one call."""
    folder = tiny_hf_folders["target"]
    catalog.register(
        catalog.TargetKind(
            "tinyfam",
            "Tiny test family",
            lambda source: HFCausalLM.load(folder, device="cpu"),
            lambda s: 4,
            chat=False,
        )
    )
    yield "tinyfam"
    catalog.unregister("tinyfam")


def test_a_new_target_is_offered_everywhere_and_loads(new_target):
    assert new_target in targets() and targets()[-1] == "custom"  # the sourced kind stays last
    assert new_target in target_keys() and new_target in law_targets()
    assert drafts_for(new_target) == ("ngram", "bf16", "layerskip", "custom")
    assert target_layers(TargetSpec(new_target)) == 4
    model = load_target(TargetSpec(new_target))
    assert isinstance(model, HFCausalLM) and isinstance(load_draft(model, DraftSpec("ngram")), NGramDraft)


def test_the_law_lab_offers_a_new_target(new_target):
    at = open_page("law_live", state={"law_target": new_target, "law_draft": "ngram"})
    assert "Tiny test family" in at.selectbox(key="law_target").options
    assert at.selectbox(key="law_target").value == new_target and not at.warning


def test_a_new_draft_runs_on_the_live_page(new_draft):
    state = {"live_target": "toy", "live_draft": new_draft, "live_max": 12}
    at = open_page("live", state=state)
    assert "Echo test draft" in at.selectbox(key="live_draft").options
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["live_trace"].settings.draft.kind == new_draft
    assert at.session_state["live_trace"].speculative.events


def test_a_new_draft_runs_in_the_race(new_draft):
    at = open_page("race", state={"race_target": "toy", "race_drafts": [new_draft], "race_max": 12})
    assert "Echo test draft" in at.multiselect(key="race_drafts").options
    at.button(key="race_run").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    assert set(at.session_state["race_results"][at.session_state["_race_last"]].records) == {
        "baseline",
        new_draft,
    }


def test_a_new_draft_runs_in_the_law_lab(new_draft):
    at = open_page("law_live", state={"law_target": "toy", "law_draft": new_draft, "law_n": 20})
    assert "Echo test draft" in at.selectbox(key="law_draft").options
    at.button(key="law_run").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    _, snap = at.session_state["_law_result"]
    assert snap.finished and snap.counts == {"exact": 20, "accept_all": 20}


def test_a_new_draft_and_target_run_on_the_compare_page(new_draft, new_target):
    state = {"cmp_targets": [new_target], "cmp_drafts": [new_draft], "cmp_cats": ["copy"], "cmp_max": 8}
    at = open_page("compare", state=state)
    assert new_target in at.multiselect(key="cmp_targets").options
    assert new_draft in at.multiselect(key="cmp_drafts").options
    at.button(key="cmp_run").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    result = at.session_state["_cmp_result"]
    assert result.complete and {(r.target, r.draft) for r in result.runs} == {
        (new_target, "target-only"),
        (new_target, new_draft),
    }


def _kind_branches(path: Path, kinds: set[str]) -> list[str]:
    """Comparisons in `path` with a kind's name (``== "toy"``, ``in ("custom", …)``) and kind
    names imported as constants (``TOY_WORDS``, ``HEAD_DRAFTS``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                if any(isinstance(i, ast.Constant) and i.value in kinds for i in items):
                    out.append(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.ImportFrom):  # a kind's constant (TOY_WORDS) or a list of kinds
            named = [
                a.name
                for a in node.names
                if (a.name.isupper() and "_" in a.name and a.name.split("_")[0].lower() in kinds)
                or a.name.endswith(("_DRAFTS", "_TARGETS", "_WORDS"))
            ]
            out += [f"{path.name}:{node.lineno} imports {n}" for n in named]
    return out


def test_no_page_branches_on_a_model_kind(tmp_path):
    kinds = {t.key for t in catalog.targets()} | {d.key for d in catalog.drafts()}
    files = [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))]
    found = [hit for f in files for hit in _kind_branches(f, kinds)]
    assert not found, found
    planted = tmp_path / "planted.py"  # the check itself sees a branch and an imported kind constant
    planted.write_text('from x import TOY_WORDS\nif kind == "toy":\n    pass\n', encoding="utf-8")
    assert len(_kind_branches(planted, kinds)) == 2
