"""After a run that fails slowly, one click on the target list opens it (issue: it took two).

A custom target that is not on the machine fails after the model library has loaded; on a
learner's first run that load takes seconds. This test's own server loads the library slowly
(a ``sitecustomize`` that delays importing transformers) so the failure comes after a long
run, as it does there. Generate used to keep the keyboard focus through such a run, and the
first click on a list after it only moved the focus; Generate is disabled while its run goes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from support.browser import ROOT, free_port, serve, streamlit_cmd

TIMEOUT = 120_000
SLOW_IMPORT = '''
import sys, time


class _SlowLibrary:
    """Delay the first import of transformers, as a cold start on a slow disk does."""

    def find_spec(self, name, path=None, target=None):
        if name == "transformers":
            sys.meta_path.remove(self)
            time.sleep(8)
        return None


sys.meta_path.insert(0, _SlowLibrary())
'''


@pytest.fixture
def slow_app_url(tmp_path: Path):
    """The app on a server of its own (a fresh process per test), whose model library loads slowly."""
    hook = tmp_path
    (hook / "sitecustomize.py").write_text(SLOW_IMPORT, encoding="utf-8")
    port = free_port()
    log = ROOT / "artifacts" / "streamlit-first-click.log"
    with serve(streamlit_cmd(port), port, log, env={"PYTHONPATH": str(hook)}) as url:
        yield url


def _settled(page: Page) -> None:
    """Wait until the page has finished drawing: no run going, nothing stale, for a second."""
    busy = "[data-testid=stStatusWidget], [data-stale=true], [data-testid=stSkeleton]"
    quiet = f"() => !document.querySelector('{busy}')"
    for _ in range(2):
        page.wait_for_function(quiet, timeout=TIMEOUT)
        page.wait_for_timeout(1000)


@pytest.mark.parametrize("label", ["Target model", "Draft"])
def test_one_click_opens_a_list_after_a_failed_run(page: Page, slow_app_url: str, label: str):
    page.goto(f"{slow_app_url}/live?live_target=custom&live_target_src=nonexistent-org/no-such-model")
    generate = page.get_by_role("button", name="Generate")
    expect(generate).to_be_enabled(timeout=TIMEOUT)
    generate.click()
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text("no-such-model", timeout=TIMEOUT)
    expect(generate).to_be_enabled(timeout=TIMEOUT)
    _settled(page)
    page.get_by_role("combobox", name=label, exact=True).click()
    expect(page.get_by_role("listbox")).to_be_visible(timeout=5_000)
