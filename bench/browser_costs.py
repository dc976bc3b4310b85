"""Where a lesson page's browser time goes after a control change (used by bench/lessons.py).

Two parts of Chromium's work, measured apart from the end-to-end clock:

* **Messages.** The server sends one message per element of the rerun fragment (text,
  widgets, columns, figures); each is decoded and rendered by Streamlit's React frontend.
  :data:`support.browser.COUNT_MESSAGES` counts the websocket messages a page receives, so
  the bench can report how many one change brings.
* **Figures.** Streamlit gives a plotly chart an element id that hashes its figure, and its
  chart component reads the figure only when it mounts, so a changed figure is mounted afresh:
  a full ``Plotly.newPlot``, never an update of the drawing in place. :func:`draw_seconds`
  draws each of the page's figures (their data and layout as the page holds them) with
  ``Plotly.newPlot`` in a blank page of the same browser, with the plotly.js the plotly
  package ships, and returns the median time of each, the time the redraw costs at least.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plotly

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

_FIGURES = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(g =>
  JSON.stringify({data: g.data, layout: g.layout, width: g.clientWidth, height: g.clientHeight}))"""

_DRAW = """async ([figures, repeats]) => {
  const out = [];
  for (const raw of figures) {
    const fig = JSON.parse(raw);
    const times = [];
    for (let r = 0; r < repeats; r++) {
      const div = document.createElement('div');
      document.body.appendChild(div);
      const layout = Object.assign({}, fig.layout, {width: fig.width, height: fig.height});
      const start = performance.now();
      await Plotly.newPlot(div, JSON.parse(JSON.stringify(fig.data)), layout, {displayModeBar: false});
      await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
      times.push(performance.now() - start);
      Plotly.purge(div);
      div.remove();
    }
    times.sort((a, b) => a - b);
    out.push(times[Math.floor(repeats / 2)] / 1000);
  }
  return out;
}"""


def page_figures(page: Any) -> list[str]:
    """The data and layout of every plotly figure on `page`, as JSON."""
    return page.evaluate(_FIGURES)


def draw_seconds(browser: Any, figures: list[str], repeats: int = 5) -> list[float]:
    """Median seconds of ``Plotly.newPlot`` for each figure, in a fresh page of `browser`."""
    if not figures:
        return []
    blank = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        blank.set_content("<html><body></body></html>")
        blank.add_script_tag(path=str(PLOTLY_JS))
        return [float(x) for x in blank.evaluate(_DRAW, [figures, repeats])]
    finally:
        blank.close()


def figure_summary(figures: list[str]) -> list[dict[str, int]]:
    """Per figure: traces, annotations and shapes (what a redraw has to lay out)."""
    out = []
    for raw in figures:
        fig = json.loads(raw)
        layout = fig.get("layout") or {}
        out.append(
            {
                "traces": len(fig.get("data") or []),
                "annotations": len(layout.get("annotations") or []),
                "shapes": len(layout.get("shapes") or []),
            }
        )
    return out
