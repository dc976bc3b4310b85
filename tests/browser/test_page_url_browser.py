"""A page's own URL as the very first request of a fresh server opens inside the course.

Streamlit serves a ``pages/`` folder as a legacy multipage app until some run calls
``st.navigation``; ``pages.common.page`` then declares one and reruns through app.py.
If Streamlit changes that behaviour, the page shows without the course's sidebar here.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from support.browser import ROOT, free_port, serve, streamlit_cmd

TIMEOUT = 45_000


def test_a_page_url_as_a_fresh_servers_first_request_gets_the_course_sidebar(page: Page):
    port = free_port()
    with serve(streamlit_cmd(port), port, ROOT / "artifacts" / "streamlit-page-url-test.log") as url:
        page.goto(f"{url}/overlap")
        main = page.get_by_test_id("stMain")
        expect(main.locator("h1").first).to_have_text("Overlap and residual", timeout=TIMEOUT)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("中文")).to_be_visible(timeout=TIMEOUT)  # app.py's language switch
        expect(page.get_by_test_id("stSidebarNav")).to_contain_text("Probability tree", timeout=TIMEOUT)
