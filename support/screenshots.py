"""The README's pictures, taken from the running app: ``python -m support.screenshots``.

Serves app.py and opens it in Debian's Chromium (support.browser), as the browser tests do:
the live page runs its default demo (the bundled model, the n-gram draft, greedy, the copy
prompt) and is shot with its coloured tokens in view; the overlap lesson is shot with its
figure in view. Each PNG is written to assets/readme/, cut to 256 colours so it stays small.
"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

from support.browser import (
    ARGS,
    CHROMIUM,
    ROOT,
    VIEWPORT,
    free_port,
    serve,
    streamlit_cmd,
    wait_for_page,
    wait_not_stale,
)

OUT = ROOT / "assets" / "readme"
RUN_TIMEOUT = 600_000  # the first load of the model and a run, on a slow shared CPU


def _save(page: Page, path: Path) -> int:
    """A screenshot of the viewport as a 256-colour PNG at `path`; its size in bytes."""
    shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    shot.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path.stat().st_size


def _show(page: Page, selector: str, block: str) -> None:
    """Scroll the first `selector` to `block` of the view (start, center), and wait for the page
    to settle."""
    page.locator(selector).first.wait_for(timeout=RUN_TIMEOUT)
    page.locator(selector).first.evaluate("(e, block) => e.scrollIntoView({block})", block)
    wait_not_stale(page)
    page.wait_for_timeout(1500)  # the figures' and the tokens' own drawing after the scroll


def main() -> None:
    with (ROOT / "lessons" / "en" / "live.toml").open("rb") as f:
        live = tomllib.load(f)
    OUT.mkdir(parents=True, exist_ok=True)
    port = free_port()
    with (
        serve(streamlit_cmd(port), port, ROOT / "artifacts" / "screenshots.log") as url,
        sync_playwright() as p,
    ):
        page = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS).new_page(
            viewport=VIEWPORT
        )
        page.goto(f"{url}/live?live_max=48")
        wait_for_page(page)
        page.get_by_role("button", name=live["generate"], exact=True).click()
        expect(page.get_by_role("heading", name=live["stats_title"])).to_be_visible(timeout=RUN_TIMEOUT)
        _show(page, ".sd-legend", "start")
        print("live.png", _save(page, OUT / "live.png"), "bytes")
        page.goto(f"{url}/overlap")
        wait_for_page(page)
        _show(page, ".js-plotly-plot", "center")
        print("overlap.png", _save(page, OUT / "overlap.png"), "bytes")


if __name__ == "__main__":
    main()
