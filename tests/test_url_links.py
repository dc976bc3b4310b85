"""A link works on every click (issue 52): a teach link followed a second time in the same tab
sets its page up again, and a control moved after arriving stays where the learner put it.

``st.page_link`` keeps the session but drops the left page's widget state, so the second visit
has only the address to go by. The address carries values this session already followed and
wrote back, which ``urlstate.restore`` used to take for an echo of its own writing and ignore.
Under AppTest a click on a page link is played as a real one is sent: the link's query string
as the address, and the switch to its page.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from pages.common.nav import PAGES
from pages.common.page import FROM_STEP
from specdec_core.course.teach import ROUTE
from support.apptest import open_page, rerun, shared_link

PAGE_KEYS = {p.key for p in PAGES}


def _qp(at, key: str) -> str:
    value = shared_link(at)[key]
    return value[0] if isinstance(value, list) else value


def _link_query(at, page: str) -> dict[str, str]:
    """The query of the link to `page` on the teach page `at` shows (found by its target)."""
    protos = [link.proto for link in at.get("page_link") if link.proto.page == page]
    assert protos, f"the teach page has no link to {page}"
    return dict(parse_qsl(protos[0].query_string, keep_blank_values=True))


def _click(at, page: str) -> dict[str, str]:
    """Follow the teach page's link to `page` as the browser does; returns the link's query."""
    query = _link_query(at, page)
    at.query_params.clear()
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(f"pages/{page}.py")
    rerun(at)
    return query


def _to_teach(at) -> None:
    """Open the teach page from the menu: its own address, no other page's values."""
    at.query_params.clear()
    at.query_params["lang"] = "en"
    at.switch_page("pages/teach.py")
    rerun(at)


def _follows(at, query: dict[str, str]) -> None:
    """Every value of the link is the page's and is in the link it shares (the route's step aside)."""
    assert not at.warning, [w.value for w in at.warning]
    for key, value in query.items():
        if key == FROM_STEP:
            continue
        assert _qp(at, key) == value, (key, _qp(at, key), value)


@pytest.mark.parametrize(
    "target", sorted({s.page for s in ROUTE if s.query and s.page in PAGE_KEYS}), ids=str
)
def test_a_teach_link_followed_twice_sets_its_page_up_both_times(target):
    at = open_page("teach")
    query = _click(at, target)
    _follows(at, query)
    first = {key: at.session_state[key] for key in query if key in at.session_state}
    _to_teach(at)
    assert _click(at, target) == query
    _follows(at, query)
    assert {key: at.session_state[key] for key in query if key in at.session_state} == first


def test_sampling_lab_link_again_after_moving_top_p():
    at = open_page("teach")
    query = _click(at, "sampling_lab")
    assert query["p"] == "0.78" and at.slider(key="p").value == 0.78
    at.slider(key="p").set_value(0.5)
    rerun(at)
    assert at.slider(key="p").value == 0.5 and _qp(at, "p") == "0.5"
    _to_teach(at)
    _click(at, "sampling_lab")
    assert at.slider(key="p").value == 0.78 and _qp(at, "p") == "0.78"
    _follows(at, query)


def test_exercises_link_again_after_changing_seed_and_topics():
    at = open_page("teach")
    query = _click(at, "exercises")
    assert query["ex_seed"] == "2026"
    topics = query["ex_topics"].split(",")
    at.number_input(key="ex_seed").set_value(5)
    rerun(at)
    at.multiselect(key="ex_topics").set_value(["tokens"])
    rerun(at)
    assert _qp(at, "ex_seed") == "5" and _qp(at, "ex_topics") == "tokens"
    _to_teach(at)
    _click(at, "exercises")
    assert at.number_input(key="ex_seed").value == 2026
    assert sorted(at.multiselect(key="ex_topics").value) == sorted(topics)
    _follows(at, query)


def test_a_control_moved_after_arriving_is_not_undone_by_the_links_address():
    """After the second arrival the address can lag behind the widgets (it still holds the
    link's value when the next rerun is asked for): that echo must not set the control back."""
    at = open_page("teach")
    _click(at, "sampling_lab")
    _to_teach(at)
    _click(at, "sampling_lab")
    at.slider(key="p").set_value(0.5)
    at.query_params["p"] = "0.78"  # the address as the link left it
    rerun(at)
    assert at.slider(key="p").value == 0.5 and _qp(at, "p") == "0.5"
