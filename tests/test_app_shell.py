"""The entry script (navigation, language switch) and the completeness of the lesson texts."""

import subprocess
import sys
import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from pages.common.nav import PAGES
from support.apptest import APP, ROOT, open_page, shared_link


def test_entry_script_shows_the_course_map_and_all_sections():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "SpecDec Studio"
    assert at.sidebar.radio[0].options == ["English", "中文"]
    assert any("Overlap and residual" in str(link.proto) for link in at.get("page_link"))


def test_language_switch_in_the_sidebar_translates_the_page():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.radio[0].set_value("zh").run()
    assert not at.exception
    assert at.session_state["lang"] == "zh"
    assert "投机解码" in at.title[0].value
    assert "lang" not in at.query_params  # a switch adds no history entry; a copied link says zh
    assert shared_link(at)["lang"] == "zh"


def test_language_comes_from_the_url():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    assert "投机解码" in at.title[0].value
    assert at.sidebar.radio[0].value == "zh"


def test_unknown_language_falls_back_to_english():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "xx"
    at.run()
    assert not at.exception and at.title[0].value == "SpecDec Studio"


#: In a fresh interpreter: is pandas imported by the time app.py hands over to a page?
PANDAS_BEFORE_PAGES = """
import sys
from streamlit.testing.v1 import AppTest
import pages.common.page as page

assert "pandas" not in sys.modules, "imported before app.py ran"
declare, seen = page.navigation, []

def navigation(*args, **kwargs):
    seen.append("pandas" in sys.modules)
    return declare(*args, **kwargs)

page.navigation = navigation  # app.py reads it from the module at each run
at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
assert not at.exception, [e.value for e in at.exception]
print(seen)
"""


def test_entry_script_imports_pandas_before_any_page_runs():
    """plotly imports pandas lazily; two sessions drawing charts at once in one server could
    each start that import, and one saw a partially initialized pandas."""
    script = [sys.executable, "-c", PANDAS_BEFORE_PAGES, APP]
    done = subprocess.run(script, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "[True]"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_about_page(lang):
    at = open_page("about", lang=lang)
    assert ("float64" in at.markdown[0].value) and (("投机解码" in at.markdown[0].value) == (lang == "zh"))


def test_every_page_in_the_course_map_exists():
    missing = [p.file for p in PAGES if not (ROOT / p.file).is_file()]
    assert not missing


def _keys(table: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in table.items():
        out.add(prefix + key)
        if isinstance(value, dict):
            out |= _keys(value, f"{prefix}{key}.")
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in (LESSONS / "en").glob("*.toml")))
def test_every_ui_string_is_translated(name):
    en = tomllib.loads((LESSONS / "en" / f"{name}.toml").read_text("utf-8"))
    zh = tomllib.loads((LESSONS / "zh" / f"{name}.toml").read_text("utf-8"))
    assert _keys(en) == _keys(zh)
    assert len(en.get("quiz", [])) == len(zh.get("quiz", []))
    for a, b in zip(en.get("quiz", []), zh.get("quiz", []), strict=True):
        assert a["answer"] == b["answer"] and len(a["options"]) == len(b["options"]) == len(b["feedback"])


@pytest.mark.parametrize("name", sorted(p.stem for p in (LESSONS / "en").glob("*.md")))
def test_every_lesson_has_the_same_sections_in_both_languages(name):
    en = parse((LESSONS / "en" / f"{name}.md").read_text("utf-8"))
    zh = parse((LESSONS / "zh" / f"{name}.md").read_text("utf-8"))
    assert list(en.sections) == list(zh.sections)
    assert all(body.strip() for body in zh.sections.values())
