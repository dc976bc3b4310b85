"""Classroom mode's rules (specdec_core.live.access) and reading a model's layer count without
loading it (specdec_core.models.layer_count)."""

import hmac
import json
import struct
import sys
import time

import pytest

from specdec_core.live import access
from specdec_core.live.access import (
    DEFAULT_MAX_MODELS,
    Access,
    check_draft,
    check_target,
    drafts,
    from_env,
    may_unload,
    parse_preload,
    passcode_ok,
    source_allowed,
)
from specdec_core.live.job_models import PreloadJob
from specdec_core.live.model_choices import (
    ChoiceError,
    DraftSpec,
    TargetSpec,
    target_key,
    target_layers,
    targets,
)
from specdec_core.live.run_service import DONE, RunService
from specdec_core.live.shelf import ModelShelf
from specdec_core.models import layer_count
from specdec_core.models.catalog import drafts_for

CLASS = {
    "SPECDEC_CLASSROOM": "1",
    "SPECDEC_PRELOAD": "toy, /srv/models/small ,toy",
    "SPECDEC_TEACHER_PASSCODE": "owl",
}


def test_outside_classroom_mode_everything_is_as_before():
    rules = from_env({})
    assert rules == Access() and not rules.classroom and rules.preload == ()
    assert rules.targets == targets() and rules.free_sources and rules.unload == "open"
    assert may_unload(rules) and may_unload(rules, "anything")
    assert source_allowed(rules, "/etc") and source_allowed(rules, "/nonexistent")
    check_target(rules, TargetSpec("custom", "/anywhere"))  # loading decides, as before
    check_draft(rules, DraftSpec("custom", source="/anywhere"))
    assert drafts(rules, "bundled") == drafts_for("bundled")
    # the teacher's variables mean nothing unless classroom mode is on
    off = from_env({**CLASS, "SPECDEC_CLASSROOM": "0"})
    assert not off.classroom and off.passcode == "" and off.preload == ()


def test_classroom_mode_offers_only_the_teachers_models():
    rules = from_env(CLASS)
    assert rules.classroom and not rules.free_sources
    assert rules.preload == (TargetSpec("toy"), TargetSpec("custom", "/srv/models/small"))
    assert rules.targets == ("toy", "custom") and rules.sources == ("/srv/models/small",)
    check_target(rules, TargetSpec("toy"))
    check_target(rules, TargetSpec("custom", " /srv/models/small "))
    check_draft(rules, DraftSpec("custom", source="/srv/models/small"))
    check_draft(rules, DraftSpec("layerskip", 3))
    for spec in (TargetSpec("bundled"), TargetSpec("custom", "/etc"), TargetSpec("custom", "")):
        with pytest.raises(ChoiceError) as err:
            check_target(rules, spec)
        assert err.value.code == "not_allowed"
    with pytest.raises(ChoiceError, match="teacher") as err:
        check_draft(rules, DraftSpec("custom", source="/srv/models"))
    assert err.value.code == "not_allowed"


def test_a_refusal_says_the_same_for_an_existing_and_a_missing_path(tmp_path):
    rules = from_env(CLASS)
    messages = []
    for path in (tmp_path, tmp_path / "missing", "/etc", "/nonexistent/x"):
        with pytest.raises(ChoiceError) as err:
            check_target(rules, TargetSpec("custom", str(path)))
        messages.append(str(err.value))
    assert len(set(messages)) == 1 and "etc" not in messages[0]


def test_default_preload_and_no_custom_draft_without_custom_models():
    rules = from_env({"SPECDEC_CLASSROOM": "yes"})
    assert rules.preload == (TargetSpec("bundled"), TargetSpec("toy")) and rules.sources == ()
    assert rules.targets == ("bundled", "toy") and "custom" not in drafts(rules, "bundled")
    assert rules.unload == "hidden" and not may_unload(rules) and not may_unload(rules, "")


def test_the_passcode_is_compared_in_constant_time(monkeypatch):
    rules = from_env(CLASS)
    assert rules.unload == "passcode"
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    assert passcode_ok(rules, "owl") and may_unload(rules, "owl")
    assert not passcode_ok(rules, "owl ") and not passcode_ok(rules, "") and not may_unload(rules, "OWL")
    assert len(calls) == 5 and all(isinstance(a, bytes) for a, _ in calls)
    assert not passcode_ok(Access(classroom=True), "")  # no passcode set: nothing passes
    assert passcode_ok(
        from_env({**CLASS, "SPECDEC_TEACHER_PASSCODE": "chouette hibou 猫头鹰"}), "chouette hibou 猫头鹰"
    )


@pytest.mark.parametrize(
    ("raw", "bound"), [(None, DEFAULT_MAX_MODELS), ("3", 3), ("0", None), ("none", None), ("-2", 1), ("x", 6)]
)
def test_the_bound_on_loaded_models_comes_from_the_environment(raw, bound):
    env = {} if raw is None else {"SPECDEC_MAX_MODELS": raw}
    assert from_env(env).max_models == bound


def test_parse_preload_keeps_order_and_drops_repeats():
    assert parse_preload(" bundled,, HuggingFaceTB/x ,bundled") == (
        TargetSpec("bundled"),
        TargetSpec("custom", "HuggingFaceTB/x"),
    )


def test_the_preload_job_pins_the_teachers_models_and_reports_failures(tmp_path):
    rules = from_env({"SPECDEC_CLASSROOM": "1", "SPECDEC_PRELOAD": f"toy,{tmp_path / 'gone'}"})
    shelf, service = ModelShelf(limit=1), RunService()
    try:
        ticket = service.submit(PreloadJob(rules, shelf))
        deadline = time.monotonic() + 30
        while not (snap := service.snapshot(ticket)).ended_already:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        service.close()
    assert snap.state == DONE and snap.result.done == snap.result.n == 2
    toy = shelf.peek(target_key(TargetSpec("toy")))
    assert toy is not None and shelf.pinned(toy)
    assert [what for what, _ in snap.result.failed] == [str(tmp_path / "gone")]
    shelf.put("other", object())  # over the bound of 1: the pinned toy stays, the newcomer too
    assert shelf.peek(target_key(TargetSpec("toy"))) is toy


# -- layer counts, read without loading weights ---------------------------------------------
def _gguf(path, entries):
    """A GGUF header with (key, type, packed value) entries and no tensors."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries))
    for key, kind, value in entries:
        raw = key.encode()
        out += struct.pack("<Q", len(raw)) + raw + struct.pack("<I", kind) + value
    path.write_bytes(out)
    return path


def test_layer_counts_from_a_gguf_header_and_a_config(tmp_path):
    name = b"tiny"
    array = struct.pack("<IQ", 8, 2) + struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 2) + b"bc"
    gguf = _gguf(
        tmp_path / "m.gguf",
        [
            ("general.name", 8, struct.pack("<Q", len(name)) + name),
            ("tokenizer.tokens", 9, array),
            ("llama.block_count", 4, struct.pack("<I", 7)),
        ],
    )
    assert layer_count.gguf_layers(gguf) == 7
    assert layer_count.folder_layers(gguf) == 7
    assert layer_count.folder_layers(tmp_path) == 7  # the folder's one GGUF file
    assert layer_count.gguf_layers(_gguf(tmp_path / "none.gguf", [])) is None
    (tmp_path / "bad.gguf").write_bytes(b"GGUF\x03")
    assert layer_count.gguf_layers(tmp_path / "bad.gguf") is None
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"n_layer": 12}))
    assert layer_count.folder_layers(folder) == 12 == layer_count.source_layers(str(folder))
    assert layer_count.source_layers(str(tmp_path / "missing")) is None
    assert layer_count.source_layers("") is None


def test_the_bundled_model_has_30_layers_read_without_torch():
    had_torch = "torch" in sys.modules
    assert layer_count.bundled_layers() == 30
    assert target_layers(TargetSpec("bundled")) == 30 and target_layers(TargetSpec("toy")) is None
    if not had_torch:
        assert "torch" not in sys.modules, "reading a layer count must not import torch"


def test_a_loaded_model_tells_its_own_count(tiny_hf_folders):
    folder = tiny_hf_folders["target"]
    assert target_layers(TargetSpec("custom", str(folder))) == 4  # from config.json

    class Loaded:
        num_layers = 9

    assert target_layers(TargetSpec("custom", str(folder)), Loaded()) == 9


def test_layer_counts_name_the_same_bundled_files_as_the_loader():
    from specdec_core.models import bundled

    assert (layer_count.WHEEL_MODULE, layer_count.GGUF_FILE) == (bundled.WHEEL_MODULE, bundled.GGUF_FILE)
