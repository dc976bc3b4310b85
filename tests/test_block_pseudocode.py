"""The block lesson's pseudocode names real engine functions, the same in both languages."""

from __future__ import annotations

import importlib
import re

import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse

# `engine/loop.py:generate`, `verify/one_draft.py:verify_rows`, `engine/drafters.py:ModelDrafter.propose`
_NAMED = re.compile(r"\b((?:[a-z_]+/)*[a-z_]+)\.py:([A-Za-z_][\w.]*\w)")


def _named(lang: str, section: str) -> list[tuple[str, str]]:
    text = parse((LESSONS / lang / "block.md").read_text("utf-8")).sections[section]
    return _NAMED.findall(text)


def _resolve(path: str, qualname: str) -> object:
    obj: object = importlib.import_module("specdec_core." + path.replace("/", "."))
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_function_the_pseudocode_and_the_proof_name_exists(lang):
    named = _named(lang, "loop")
    assert len(named) >= 10, named  # one per step of the loop, and the variants after it
    for path, qualname in named + _named(lang, "proof"):
        obj = _resolve(path, qualname)
        assert callable(obj), f"{path}.py:{qualname}"
        # defined in the file named, not only imported there (verify/__init__.py imports sample)
        assert obj.__module__ == "specdec_core." + path.replace("/", "."), f"{path}.py:{qualname}"


@pytest.mark.parametrize("section", ["loop", "proof"])
def test_both_languages_name_the_same_functions_in_the_same_order(section):
    assert _named("en", section) == _named("zh", section)


def test_the_pseudocode_covers_every_step_of_a_round():
    names = {f"{path}.py:{qualname}" for path, qualname in _named("en", "loop")}
    for step in (
        "engine/drafters.py:ModelDrafter.propose",  # draft
        "engine/rows.py:target_rows",  # one target forward
        "engine/verification.py:verify_round",  # accept or resample
        "verify/basics.py:sample",  # bonus
        "models/base.py:Session.truncate",  # target cache rollback
        "engine/drafters.py:ModelDrafter.commit",  # draft cache rollback
    ):
        assert step in names, step


def test_the_name_check_tells_a_definition_from_an_import():
    assert _resolve("verify", "sample").__module__ == "specdec_core.verify.basics"


def test_the_name_check_fails_on_a_name_that_is_gone():
    with pytest.raises(AttributeError):
        _resolve("engine/loop", "generate_fast")
    with pytest.raises(ModuleNotFoundError):
        _resolve("engine/looping", "generate")
