"""URL state across reruns: the address holds what was applied on arrival or written by the
"copy link" button, and a rerun carries it as it is while the widgets move on.

Such an address is not a new link, so it never sets a control back (the browser test
tests/browser/test_bad_input_browser.py moves sliders fast in three sessions). A value not
applied yet (a link typed in by hand) still applies.
"""

from __future__ import annotations

from support.apptest import open_page, rerun, shared_link


def test_the_address_left_behind_by_a_copied_link_does_not_undo_a_later_move():
    at = open_page("cost")
    for value in (5, 6, 7):
        at.slider(key="cost_gamma").set_value(value)
        rerun(at)
    assert shared_link(at)["cost_gamma"] == "7"
    at.slider(key="cost_gamma").set_value(8)
    rerun(at)  # the address still says 7
    assert at.query_params["cost_gamma"] in ("7", ["7"]) and at.slider(key="cost_gamma").value == 8
    assert shared_link(at)["cost_gamma"] == "8", "a new link follows the widget again"


def test_a_value_never_written_is_a_link_and_applies():
    at = open_page("cost")
    at.slider(key="cost_gamma").set_value(6)
    rerun(at)
    at.query_params["cost_gamma"] = "12"
    rerun(at)
    assert at.slider(key="cost_gamma").value == 12 and shared_link(at)["cost_gamma"] == "12"
