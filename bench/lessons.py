"""How fast the lessons respond: median page rerun after a control change, and 10⁶ Monte Carlo trials.

Each page is opened once under Streamlit's AppTest (the page script runs in-process, as in
the server, without the browser's rendering), then one control is changed repeatedly and
every rerun is timed. Every lesson's controls sit in an ``st.fragment``, so after a change the
server runs that fragment alone, with the page scripts compiled once per process; AppTest
would rerun the whole page and compile it afresh each time, so these reruns go through
:mod:`bench.fragment_reruns`, which scopes them as the browser scopes its request (each one
must redraw the fragment's figures). ``*_rerun_s`` is the median of all reruns,
``*_new_value_rerun_s`` of those where the control took a value for the first time (figures
built), ``*_revisit_rerun_s`` of those back at a value seen before (figures from the shared
figure cache), and ``*_full_rerun_s`` the median of the same changes rerunning the whole
page as AppTest does on its own.
``monte_carlo_1e6_s`` times 10⁶ trials of the exact rule alone; ``monte_carlo_1e6_page_rerun_s``
the overlap lesson's Run pressed with 10⁶ trials (a new seed each time), scoped to the
fragment Run sits in as the browser's press is.

Then the same controls in a real browser: ``streamlit run app.py`` (its script runs timed
from inside the server) driven by headless Chromium with the browser tests' settings
(support/browser.py). Each change is one key press on the slider (or one pick in the
select box); ``*_browser_s`` is the median time from that input to every figure of the page
redrawn with its new data and nothing left stale, ``*_server_rerun_s`` the median time the
server spent running the page (or the fragment the control sits in) for that change, and
``*_server_cpu_s`` the CPU time of that run's thread (what the run costs when other processes
share the cores). Where that browser time goes (:mod:`bench.browser_costs`): ``*_messages``,
the median count of websocket messages one change brought before the page was redrawn (about
one per element of the fragment), and ``*_figures_draw_s``, the sum over the page's figures
of one ``Plotly.newPlot`` each in a blank page of the same browser (Streamlit mounts a
changed figure afresh, so this is what redrawing every figure costs at least).
Prints a table and, last, one JSON line.

    .venv/bin/python -m bench.lessons [--repeats 8] [--quick]    # from the repository root
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.browser_costs import draw_seconds, figure_summary, page_figures
from bench.fragment_reruns import fragment_reruns
from bench.live_browser import BUSY, errors_shown, settled
from specdec_core.variants import MAX_TRIALS, simulate
from specdec_core.viz import memo
from support.apptest import open_page
from support.browser import ARGS, CHROMIUM, COUNT_MESSAGES, free_port, messages, reset_messages
from support.browser import serve as serve_app

ROOT = Path(__file__).resolve().parents[1]

# The block lesson draws nothing before its first round: open it ten rounds in. The tree's
# top-N control changes nothing on the default three-token pair: open a 30-token one.
QUERIES: dict[str, dict[str, str]] = {"block": {"block_round": "10"}, "tree": {"tree_preset": "random"}}
# page -> (widget kind, key, values to cycle through)
CONTROLS: dict[str, tuple[str, str, list[object]]] = {
    "sampling_lab": ("slider", "k", [1, 2, 3, 0]),
    "overlap": ("selectbox", "ov_preset", ["equal", "disjoint", "random", "abc"]),
    "tree": ("slider", "tree_top_n", [2, 3, 4, 5]),
    "block": ("slider", "block_k", [2, 3, 5, 4]),
    "cost": ("slider", "cost_alpha", [0.5, 0.7, 0.9, 0.8]),
    "tree_drafts": ("slider", "trd_t", [0.5, 1.0, 1.5, 0.8]),
}


def page_reruns(page: str, repeats: int, scoped: bool) -> list[tuple[float, bool]]:
    """(seconds, new value) per rerun; "new" when the control takes a value for the first time.

    `scoped`: each rerun is the control's fragment alone, as the server runs it (scripts
    compiled once); otherwise the whole page, compiled afresh, as AppTest runs it. The
    figure cache (specdec_core.viz.memo) starts empty for each page, so a new value builds
    its figures and a value seen before is answered from the cache, as in a server where a
    learner drags a slider back and forth."""
    kind, key, values = CONTROLS[page]
    memo.clear()
    with fragment_reruns(server_cache=scoped) as scope:
        at = open_page(page, query=QUERIES.get(page))
        if scoped:
            scope.fragment_id = scope.fragment_of(key)
        seen = {repr(getattr(at, kind)(key=key).value)}
        times = []
        for i in range(repeats):
            value = values[i % len(values)]
            getattr(at, kind)(key=key).set_value(value)
            start = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - start, repr(value) not in seen))
            seen.add(repr(value))
            assert not at.exception, (page, [e.value for e in at.exception])
            assert getattr(at, kind)(key=key).value == value, (page, "the change did not take")
            assert scope.plotly_charts(), (page, "the rerun drew no figure")
    return times


# -- the same controls in a real browser, against a server that times its own script runs ---------
#: Key presses that walk each slider three steps one way first (then back, then on again),
#: so a run moves to new values and back to values seen before, as the AppTest part does.
FIRST_KEY = {"tree": "ArrowLeft", "block": "ArrowLeft", "tree_drafts": "ArrowLeft"}
#: Timed inside the page, so the harness's own round trips are not counted: `arm` notes the
#: figures' checksum (every number and text of every trace, weighted by position, and the
#: annotation texts); the next key press or pointer press starts the clock; then every
#: animation frame checks whether a figure's checksum changed with nothing stale, no
#: skeleton and no running status left, and stops the clock there.
_ARM = """() => {
  const sum = v => { let s = 0, n = 0; const add = x => {
      if (x == null) return;
      if (typeof x === 'number') { n += 1; s += x * (n % 7 + 1); }
      else if (typeof x === 'string') { n += 1; s += x.length * (n % 5 + 1); }
      else if (typeof x === 'object' && x.length !== undefined) { for (const e of x) add(e); } };
    add(v); return s.toFixed(9) + ':' + n; };
  const checksum = () => Array.from(document.querySelectorAll('.js-plotly-plot')).map(g =>
    (g.data || []).map(t => [t.x, t.y, t.z, t.text, t.marker && t.marker.color].map(sum).join(';'))
      .join(',') + '|' + ((g.layout || {}).annotations || []).map(a => a.text).join('/')).join('#');
  const before = checksum();
  const clock = window.__sdClock = {start: null, end: null};
  const go = () => { if (clock.start === null) clock.start = performance.now(); };
  document.addEventListener('keydown', go, {capture: true, once: true});
  document.addEventListener('pointerdown', go, {capture: true, once: true});
  const tick = () => {
    if (clock.start !== null && !BUSY && checksum() !== before) { clock.end = performance.now(); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}""".replace("BUSY", BUSY)
_CLOCK = "() => window.__sdClock.end !== null && (window.__sdClock.end - window.__sdClock.start) / 1000"


def serve(port: int, log: str) -> None:
    """Child process: ``streamlit run app.py`` whose script runner appends one JSON line per
    run to `log` (seconds spent, and whether the run was a fragment's)."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.web import cli

    run_script = script_runner.ScriptRunner._run_script

    def timed(self: Any, rerun_data: Any) -> None:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            run_script(self, rerun_data)
        finally:
            line = {
                "s": time.perf_counter() - start,
                "cpu": time.thread_time() - cpu,
                "fragment": bool(rerun_data.fragment_id_queue),
            }
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")

    script_runner.ScriptRunner._run_script = timed
    sys.argv = [
        "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless", "true", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    cli.main()


def _runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def _change(page: Any, name: str, i: int) -> None:
    """Make the i-th change of the page's control (one key press, or one option picked); the
    page's clock is armed just before that input (after a select box has been opened)."""
    kind, key, values = CONTROLS[name]
    widget = page.locator(f".st-key-{key}")
    if kind == "selectbox":
        from pages.common.i18n import Strings

        label = Strings("pair", "en")(f"presets.{values[i % len(values)]}", n=20)
        widget.locator("input").click()
        option = page.get_by_role("option", name=label, exact=True)
        option.wait_for()
        page.evaluate(_ARM)
        option.click()
        return
    first = FIRST_KEY.get(name, "ArrowRight")
    back = "ArrowLeft" if first == "ArrowRight" else "ArrowRight"
    slider = widget.locator("[role='slider'], input[type='range']").first
    slider.focus()
    page.evaluate(_ARM)
    slider.press(first if (i // 3) % 2 == 0 else back)


def browser_reruns(changes: int) -> tuple[dict[str, list[tuple[float, ...]]], dict[str, list[float]]]:
    """Per page, (browser seconds, server seconds, server CPU seconds of the script thread,
    fragment run, websocket messages) for each of `changes` changes; and per page the
    seconds of one ``Plotly.newPlot`` of each of its figures."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "runs.jsonl"
        cmd = [sys.executable, "-m", "bench.lessons", "--serve", str(port), str(log)]
        with serve_app(cmd, port, Path(tmp) / "server.log") as url:
            results: dict[str, list[tuple[float, ...]]] = {}
            draws: dict[str, list[float]] = {}
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.add_init_script(COUNT_MESSAGES)
                for name in CONTROLS:
                    query = "&".join(f"{k}={v}" for k, v in QUERIES.get(name, {}).items())
                    page.goto(f"{url}/{name}" + (f"?{query}" if query else ""))
                    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
                    settled(page, quiet_s=1.0, timeout_s=60)
                    times = []
                    figures = page_figures(page)
                    for i in range(changes):
                        seen = len(_runs(log))
                        reset_messages(page)
                        _change(page, name, i)
                        browser_s = page.wait_for_function(_CLOCK, polling=50, timeout=60_000).json_value()
                        received = messages(page)
                        settled(page, quiet_s=0.3, timeout_s=60)
                        runs = _runs(log)[seen:]
                        assert runs, (name, i, "no server run")
                        assert not errors_shown(page), (name, "the page shows an error")
                        server_s, cpu_s = sum(r["s"] for r in runs), sum(r["cpu"] for r in runs)
                        fragment = all(r["fragment"] for r in runs)
                        times.append((browser_s, server_s, cpu_s, fragment, received))
                    results[name] = times
                    draws[name] = draw_seconds(browser, figures)
                    print(f"  {name}: figures {figure_summary(figures)}", flush=True)
                browser.close()
    return results, draws


def monte_carlo(repeats: int) -> list[float]:
    p, q = np.array([0.2, 0.4, 0.4]), np.array([0.1, 0.1, 0.8])
    rng = np.random.default_rng(0)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        simulate(p, q, MAX_TRIALS, rng)
        times.append(time.perf_counter() - start)
    return times


def monte_carlo_on_page(repeats: int) -> list[float]:
    """Run pressed with 10⁶ trials, each time on a new seed: the rerun of the fragment the
    button sits in (scripts compiled once, as the server runs it), which runs the trials and
    draws their result."""
    with fragment_reruns() as scope:
        at = open_page("overlap", query={"ov_n": str(MAX_TRIALS)})
        scope.fragment_id = scope.fragment_of("ov_mc_run")
        times = []
        for seed in range(repeats):
            at.number_input(key="ov_mc_seed").set_value(seed)
            at.run()
            at.button(key="ov_mc_run").click()
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            assert not at.exception
            assert scope.plotly_charts(), "the trials' rerun drew no figure"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="5 reruns a page (same keys)")
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "LOG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return
    if args.quick:
        args.repeats = 5

    results: dict[str, float] = {}
    print(
        f"{'page':<14} {'control':<12} {'median rerun':>13} {'new value':>10} {'revisit':>8} {'max':>8}"
        f" {'whole page':>11}"
    )
    for page, (_, key, _) in CONTROLS.items():
        runs = page_reruns(page, args.repeats, scoped=True)
        full = [x for x, _ in page_reruns(page, args.repeats, scoped=False)]
        t = [x for x, _ in runs]
        new = [x for x, fresh in runs if fresh]
        old = [x for x, fresh in runs if not fresh]
        results[f"{page}_rerun_s"] = statistics.median(t)
        results[f"{page}_new_value_rerun_s"] = statistics.median(new)
        results[f"{page}_revisit_rerun_s"] = statistics.median(old) if old else float("nan")
        results[f"{page}_full_rerun_s"] = statistics.median(full)
        print(
            f"{page:<14} {key:<12} {statistics.median(t):>12.3f}s {statistics.median(new):>9.3f}s"
            f" {results[f'{page}_revisit_rerun_s']:>7.3f}s {max(t):>7.3f}s {statistics.median(full):>10.3f}s"
        )
    mc = monte_carlo(args.repeats)
    results["monte_carlo_1e6_s"] = statistics.median(mc)
    results["monte_carlo_1e6_page_rerun_s"] = statistics.median(monte_carlo_on_page(args.repeats))
    print(f"\n{MAX_TRIALS:,} Monte Carlo trials (vectorised): median {statistics.median(mc):.3f}s")
    print(
        "overlap: Run pressed, its fragment's rerun that runs them and draws the result:"
        f" median {results['monte_carlo_1e6_page_rerun_s']:.3f}s"
    )

    browser, draws = browser_reruns(args.repeats)
    print(
        f"\n{'page':<14} {'in Chromium: input → redrawn':>29} {'server run':>11} {'(CPU)':>7}"
        f" {'fragment runs':>14} {'messages':>9} {'figures drawn anew':>19}"
    )
    for page, runs in browser.items():
        results[f"{page}_browser_s"] = statistics.median(r[0] for r in runs)
        results[f"{page}_server_rerun_s"] = statistics.median(r[1] for r in runs)
        results[f"{page}_server_cpu_s"] = statistics.median(r[2] for r in runs)
        results[f"{page}_messages"] = statistics.median(r[4] for r in runs)
        results[f"{page}_figures_draw_s"] = sum(draws[page])
        fragments = sum(r[3] for r in runs)
        print(
            f"{page:<14} {results[f'{page}_browser_s']:>28.3f}s {results[f'{page}_server_rerun_s']:>10.3f}s"
            f" {results[f'{page}_server_cpu_s']:>6.3f}s {fragments:>8} of {len(runs)}"
            f" {results[f'{page}_messages']:>9.0f} {results[f'{page}_figures_draw_s']:>11.3f}s"
            f" ({len(draws[page])} figures)"
        )
    everything = [r[0] for runs in browser.values() for r in runs]
    results["browser_median_s"] = statistics.median(everything)
    print(
        f"all pages: median {results['browser_median_s']:.3f}s, worst {max(everything):.3f}s (goal ≤ 0.150 s)"
    )
    print(json.dumps({k: round(v, 4) for k, v in results.items()}))


if __name__ == "__main__":
    main()
