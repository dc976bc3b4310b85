"""One notation across the course: the notation page lists every symbol once and the lessons
write γ for the draft length. (One zh term per concept: tests/test_zh_glossary.py.)"""

from __future__ import annotations

import re
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from pages.common.nav import PAGES, SECTIONS
from specdec_core.live.profile_quotes import course_costs
from specdec_core.theory import expected_tokens, linear_verify_cost, measured_alpha, speedup
from specdec_core.verify import decompose
from support.apptest import open_page
from tests.profile_text import rendered

# ---------------------------------------------------------------- the notation page's list

LANGS = ("en", "zh")


def _symbols(lang: str) -> list[dict]:
    return tomllib.loads((LESSONS / lang / "notation.toml").read_text("utf-8"))["symbol"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_symbol_on_the_notation_page_is_defined_once(lang):
    items = _symbols(lang)
    for field in ("key", "tex", "name"):
        values = [item[field] for item in items]
        duplicated = {v for v in values if values.count(v) > 1}
        assert not duplicated, f"{lang}: {field} {duplicated} defined twice"
    assert all(item["meaning"].strip() for item in items)
    pages = {p.key for p in PAGES}
    assert all(set(item["lessons"]) <= pages for item in items)


def test_both_languages_list_the_same_symbols_in_the_same_order():
    en, zh = _symbols("en"), _symbols("zh")
    assert [(i["key"], i["tex"], i["lessons"]) for i in en] == [
        (i["key"], i["tex"], i["lessons"]) for i in zh
    ]


def test_the_three_rates_have_three_symbols():
    by_key = {item["key"]: item for item in _symbols("en")}
    assert by_key["alpha"]["tex"] == "\\alpha" and "min" in by_key["alpha"]["meaning"]
    assert by_key["alpha_hat"]["name"] == "measured acceptance rate"
    assert by_key["mu"]["name"] == "greedy match rate"
    assert by_key["gamma"]["name"] == "draft length" and by_key["tau"]["tex"] == "\\tau"


def test_the_notation_page_is_in_the_first_section_of_the_course_map():
    (page,) = [p for p in PAGES if p.key == "notation"]
    assert page.section == SECTIONS[0]


@pytest.mark.parametrize("lang", LANGS)
def test_the_worked_example_is_the_maths(lang, pinned_profile):
    text = rendered(lang, "notation", "worked")
    d = decompose(np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4, 0.0]))
    assert (
        f"$\\alpha = {d.acceptance_rate:g}$" in text and f"$R = 1 - \\alpha = {d.rejection_mass:.1f}$" in text
    )
    assert "$r = ({:g}, {:g}, {:g})$".format(*d.residual) in text
    tokens = expected_tokens(0.8, 4)
    verify = linear_verify_cost(course_costs().beta().value)  # the pinned profile's
    assert f"= {tokens:.4f}$" in text and f"= {speedup(0.8, 4, 0.05, verify):.2f}$" in text
    assert f"{4 * 0.05 + verify(4):.2f}" in text
    # the counted run: 12 rounds, 2 without a rejection, 30 drafts accepted
    rounds, clean, accepted = 12, 2, 30
    examined = accepted + (rounds - clean)
    assert f"\\hat\\alpha = {accepted}/{examined} = {measured_alpha(accepted, examined):.2f}$" in text
    assert f"\\tau = {accepted + rounds}/{rounds} = {(accepted + rounds) / rounds:.1f}$" in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_notation_page_shows_every_symbol(lang):
    at = open_page("notation", lang)
    table = next(m.value for m in at.markdown if m.value.startswith("| "))
    for item in _symbols(lang):
        assert f"${item['tex']}$" in table
    assert len(at.radio) == len(tomllib.loads((LESSONS / lang / "notation.toml").read_text("utf-8"))["quiz"])
    assert not at.error and not at.exception


# ---------------------------------------------------------------- K only where a paper is quoted

#: A bare K means the draft length; the course writes γ. K may stand only in a marked quotation:
#: a `<!-- quote -->` … `<!-- /quote -->` block, or right after the marker that names the paper's K.
QUOTE_BLOCK = re.compile(r"<!--\s*quote\s*-->.*?<!--\s*/quote\s*-->", re.S)
QUOTE_MARKER = re.compile(r"(?:[Tt]he paper's|论文记作) (?:\$K\$|K)")
BARE_K = re.compile(r"(?<![A-Za-z0-9\\])K(?![A-Za-z0-9_])")


def _text_values(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _text_values(v)]
    if isinstance(node, list):
        return [s for v in node for s in _text_values(v)]
    return []


def bare_k(text: str) -> list[str]:
    """The places where `text` uses K outside a marked quotation, with some context."""
    text = QUOTE_MARKER.sub(" ", re.sub(r"\s+", " ", QUOTE_BLOCK.sub(" ", text)))
    return [text[max(0, m.start() - 30) : m.end() + 30] for m in BARE_K.finditer(text)]


def test_the_k_rule_catches_a_bare_k_and_spares_a_quotation():
    assert bare_k("drafts $K$ tokens") and bare_k("K + 1 rows") and bare_k("$y_1, \\dots, y_K$")
    assert bare_k("$p_{K+1}$") and bare_k("（即上一课中的 K）")
    assert not bare_k("Chen et al. draft $K$ tokens (the paper's $K$)".replace("$K$ tokens", "γ tokens"))
    assert not bare_k("<!-- quote -->\n> draft K tokens\n<!-- /quote -->")
    assert not bare_k("a KV cache, top-k, Q4_K_M, \\Kappa")


@pytest.mark.parametrize("lang", LANGS)
def test_k_is_never_the_draft_length_outside_a_marked_quotation(lang):
    found = {}
    for path in sorted((LESSONS / lang).iterdir()):
        if path.suffix == ".md":
            texts = [path.read_text("utf-8")]
        elif path.suffix == ".toml":
            texts = _text_values(tomllib.loads(path.read_text("utf-8")))
        else:
            continue
        hits = [hit for t in texts for hit in bare_k(t)]
        if hits:
            found[path.name] = hits
    assert not found, f"write γ for the draft length, or mark the paper's K: {found}"


def test_the_notation_quiz_does_not_give_its_answer_away_by_length():
    for lang in LANGS:
        for item in tomllib.loads((LESSONS / lang / "notation.toml").read_text("utf-8"))["quiz"]:
            lengths = [len(o) for o in item["options"]]
            assert lengths[item["answer"]] < max(lengths), item["question"]


@pytest.mark.parametrize(("lang", "rate", "match"), [("en", "α̂", "μ"), ("zh", "α̂", "μ")])
def test_the_live_pages_name_the_rate_they_show(lang, rate, match):
    """Live, block and race count accepted ÷ examined: α̂, never a bare α; the measured drafts of
    the cost lesson are greedy match rates: μ."""

    def strings(page: str) -> dict:
        return tomllib.loads((LESSONS / lang / f"{page}.toml").read_text("utf-8"))

    live, block, race, cost = strings("live"), strings("block"), strings("race"), strings("cost")
    assert rate in live["alpha"] and rate in live["hist_caption"] and "τ" in live["per_round"]
    assert rate in block["now_alpha"] and rate in block["fig"]["theory"]
    assert race["col"]["alpha"] == rate and rate in race["fig"]["hover_point"]
    assert all(f"{match} " in cost["presets"][k] for k in ("bf16", "layers24", "layers8"))
