"""URL state when reruns overlap: a rerun can carry an address that lags behind the widgets.

Streamlit sends the browser's address with each rerun request. After quick slider moves it
may still hold a value this session wrote a run or two earlier; that echo must not set the
slider back (the browser test tests/browser/test_bad_input_browser.py moves sliders fast in
three sessions). A value the session never wrote is a real link and still applies.
"""

from __future__ import annotations

from support.apptest import open_page, rerun


def test_a_stale_address_does_not_undo_the_last_slider_move():
    at = open_page("cost")
    for value in (5, 6, 7):
        at.slider(key="cost_gamma").set_value(value)
        rerun(at)
    assert at.query_params["cost_gamma"] == "7"
    at.query_params["cost_gamma"] = "5"  # the address as it was two runs ago
    at.slider(key="cost_gamma").set_value(8)
    rerun(at)
    assert at.slider(key="cost_gamma").value == 8
    assert at.query_params["cost_gamma"] == "8", "the link follows the widget again"


def test_a_value_never_written_is_a_link_and_applies():
    at = open_page("cost")
    at.slider(key="cost_gamma").set_value(6)
    rerun(at)
    at.query_params["cost_gamma"] = "12"
    rerun(at)
    assert at.slider(key="cost_gamma").value == 12 and at.query_params["cost_gamma"] == "12"
