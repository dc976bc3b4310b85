"""The TOML files are the only source of figure strings: every key a viz builder reads exists
in English and Chinese, with the same placeholders, and no figure string goes unread."""

import importlib
import pkgutil
import string as fmt
from types import ModuleType

import pytest

from specdec_core import viz
from specdec_core.viz import (
    answers,
    block,
    compare,
    cost,
    draft_pieces,
    law_live,
    live,
    overlap,
    probability_tree,
    probability_tree_sankey,
    race,
    roofline,
    rounds,
    sampling,
    self_spec,
    speedup_maps,
    tree_drafts,
)
from specdec_core.viz import round as round_figures
from specdec_core.viz.strings import pick
from tests.figure_strings import LANGS, TABLES, figure_text

#: Which strings the pages hand to each builder (module, builder, source in TABLES).
USES: list[tuple[ModuleType, str, str]] = [
    *((answers, name, "answers") for name in answers.KEYS),
    *((block, name, "block") for name in block.KEYS),
    *((rounds, name, "block") for name in rounds.KEYS),
    (rounds, "tokens_histogram", "live.histogram"),
    *((cost, name, "cost") for name in cost.KEYS),
    *((speedup_maps, name, "cost") for name in speedup_maps.KEYS),
    (overlap, "overlap_bars", "overlap.overlap"),
    (overlap, "conservation_bar", "overlap.conservation"),
    (overlap, "residual_bars", "overlap.residual"),
    (overlap, "emitted_bars", "overlap.emitted"),
    (overlap, "law_comparison", "overlap.comparison"),
    (overlap, "alpha_temperature", "overlap.alpha_temperature"),
    *((sampling, name, "sampling_lab") for name in sampling.KEYS),
    *((probability_tree, name, "tree") for name in probability_tree.KEYS),
    *((probability_tree_sankey, name, "tree") for name in probability_tree_sankey.KEYS),
    *((tree_drafts, name, "tree_drafts") for name in tree_drafts.KEYS),
    *((self_spec, name, "self_spec") for name in self_spec.KEYS),
    (tree_drafts, "draft_tree_figure", "live.tree"),
    *((live, name, "live") for name in live.KEYS),
    *((race, name, "race") for name in race.KEYS),
    *((compare, name, "compare") for name in compare.KEYS),
    *((draft_pieces, name, "live.pieces") for name in draft_pieces.KEYS),
    *((law_live, name, "law_live") for name in law_live.KEYS),
    *((round_figures, name, "round") for name in round_figures.KEYS),
    *((roofline, name, "roofline") for name in roofline.KEYS),
]
#: Every figure module: each one lists the strings its builders read in KEYS.
_ALL = [importlib.import_module(f"specdec_core.viz.{m.name}") for m in pkgutil.iter_modules(viz.__path__)]
MODULES = tuple(module for module in _ALL if hasattr(module, "KEYS"))


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in fmt.Formatter().parse(template) if name}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("module", "builder", "source"), USES, ids=lambda v: getattr(v, "__name__", v))
def test_every_key_a_builder_reads_is_in_the_toml(module, builder, source, lang):
    text = figure_text(source, lang)
    missing = [key for key in module.KEYS[builder] if key not in text]
    assert not missing, f"{lang}: {TABLES[source]} lacks {missing} for {module.__name__}.{builder}"
    assert set(pick(text, module.KEYS, builder)) == set(module.KEYS[builder])


@pytest.mark.parametrize("source", sorted(TABLES))
def test_both_languages_have_the_same_figure_strings_and_placeholders(source):
    en, zh = figure_text(source, "en"), figure_text(source, "zh")
    assert set(en) == set(zh)
    for key, template in en.items():
        assert _fields(zh[key]) == _fields(template), (source, key)


@pytest.mark.parametrize("source", sorted(TABLES))
def test_no_figure_string_goes_unread(source):
    read = {key for module, builder, src in USES if src == source for key in module.KEYS[builder]}
    assert set(figure_text(source)) - read == set()


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_builder_says_where_its_strings_come_from(module):
    """A new figure module or builder needs a row in USES, so its strings are checked too."""
    assert {builder for mod, builder, _ in USES if mod is module} == set(module.KEYS)
    for builder in module.KEYS:
        assert callable(getattr(module, builder)), builder


def test_pick_names_the_missing_keys_and_hands_over_only_those_listed():
    keys = {"fig": ("a", "b")}
    assert pick({"a": "A", "b": "B", "c": "C"}, keys, "fig") == {"a": "A", "b": "B"}
    with pytest.raises(KeyError, match="fig needs the figure strings b"):
        pick({"a": "A"}, keys, "fig")
