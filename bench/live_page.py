"""The live page against the plain engine, measured side by side, and a classroom on one server.

    .venv/bin/python -m bench.live_page            # 5 interleaved pairs + the classroom check
    .venv/bin/python -m bench.live_page --quick    # 1 pair, a smaller classroom, same keys

Speed: the app is served by ``streamlit run`` and driven in headless Chromium (the browser
tests' setup), with the default live settings (bundled model, n-gram draft, copy prompt,
greedy, compare on). Each page run is followed by the same two runs (speculative, then
target-only) in a plain Python process that keeps the model loaded (``--child``), so
machine noise hits both alike. The page's figures come from the trace it offers for
download: model time per token (the events' compute time, prefill included, over the
tokens; ``*_prefill_s``, the prompt's prefill alone) and the wall time of each run; the
plain process measures the same through the same :class:`~specdec_core.live.runs.Stream`.
Ratios are plain / page, per run (speculative and target-only) from the medians over the
pairs; the reported ratio is the worse of the two.
``page_browser_cpu_s``: the CPU seconds Chromium used from Generate to the finished view (the
median over the pairs), the share of the two cores the page took from the model.

Classroom (:mod:`specdec_core.live.classroom`): N sessions press Generate on the default
settings at once (one runs, the rest are answered from the shared trace cache or wait their
turn), then M sessions move a slider on lesson pages at once. Latency is click → finished
view (live) and key press → page settled (lessons). Every live session's text is checked
against the plain greedy output (so no session can show another's), and the page is
checked for errors.

Last line: one JSON object (``live_model_time_ratio``, ``live_wall_ratio`` and what they
come from, ``classroom_*``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.browser.conftest import ARGS, CHROMIUM  # the browser tests' Chromium setup

ROOT = Path(__file__).resolve().parents[1]

LIVE_QUERY = "live"  # the default settings: bundled + n-gram, copy prompt, greedy, compare on
RUN_TIMEOUT_MS = 600_000


# -- the plain engine, in a process of its own ---------------------------------------------------
def child() -> None:
    """Serve plain runs: each line on stdin asks for one; each answer is one JSON line."""
    from pages.common.gc_settle import settle_after_load
    from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
    from specdec_core.live.presets import preset_prompt
    from specdec_core.live.runs import Stream, encode_prompt, starter
    from specdec_core.live.settings import LiveSettings

    settings = LiveSettings(target=TargetSpec("bundled", ""), draft=DraftSpec("ngram", 0, ""))
    target = load_target(settings.target, lambda *_: None)
    draft = load_draft(target, settings.draft, lambda *_: None)
    ids = encode_prompt(target, preset_prompt("copy", "en"), settings.chat, settings.max_new_tokens)
    settle_after_load()  # as the app's shelf does: a full collection's pause falls on neither side alone
    print(json.dumps({"ready": True}), flush=True)
    for _ in sys.stdin:
        out = {}
        for name, d in (("spec", draft), ("base", None)):
            stream = Stream(starter(target, d, ids, settings, 20))
            events = list(stream)
            out[name] = _figures([e.to_dict() for e in events], stream.wall_s)
            out[name]["tokens"] = [t for e in events for t in e.committed]
        print(json.dumps(out), flush=True)


def _figures(events: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    tokens = sum(len(e["committed"]) for e in events)
    model = sum(e["draft_s"] + e["verify_s"] + e["overhead_s"] + e["prefill_s"] for e in events)
    return {
        "tokens": tokens,
        "model_s": model,
        "prefill_s": sum(e["prefill_s"] for e in events),
        "wall_s": wall_s,
        "model_per_token_s": model / max(tokens, 1),
    }


class Plain:
    """The plain-engine process (one model load, many runs)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.live_page", "--child"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    def run(self) -> dict[str, Any]:
        self.proc.stdin.write("run\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)


# -- the server and the browser ------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` on a free port, as the browser tests start it."""

    def __init__(self, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://localhost:{self.port}"
        cmd = [
            sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.headless", "true", "--server.port", str(self.port),
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
        ]  # fmt: skip
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log = log.open("w")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"streamlit did not start; see {log}")
            time.sleep(0.3)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._log.close()


_BUSY = (
    '() => !!document.querySelector(\'[data-stale="true"], [data-testid="stSkeleton"],'
    ' [data-testid="stStatusWidget"]\')'
)


#: The finished view is on the page: its "Rounds and statistics" heading (Streamlit's anchor id).
_FINISHED = "() => !!document.getElementById('rounds-and-statistics')"


def settled(page: Any, quiet_s: float = 0.5, timeout_s: float = 120.0, started_s: float = 0.0) -> float:
    """Wait until nothing is stale or a skeleton and the status widget is gone for `quiet_s`;
    returns when that quiet began (perf_counter). With `started_s`, first wait up to that
    long for the page to get busy (a rerun that has not begun yet)."""
    now = time.perf_counter()
    while started_s and time.perf_counter() - now < started_s and not page.evaluate(_BUSY):
        time.sleep(0.01)
    deadline = time.perf_counter() + timeout_s
    quiet_since = None
    while time.perf_counter() < deadline:
        if page.evaluate(_BUSY):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.perf_counter()
        elif time.perf_counter() - quiet_since >= quiet_s:
            return quiet_since
        time.sleep(0.02)
    raise TimeoutError("the page did not settle")


def open_live(page: Any, url: str, query: str = "") -> None:
    page.goto(f"{url}/{LIVE_QUERY}" + (f"?{query}" if query else ""))
    page.get_by_role("button", name="Generate").wait_for(timeout=120_000)
    settled(page)


def live_run(page: Any) -> tuple[float, dict[str, Any]]:
    """Press Generate, wait for the finished view; (click → view seconds, the downloaded trace)."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Generate").click()
    start = time.perf_counter()
    # one cheap lookup by id every 0.2 s: Playwright's role queries (expect(get_by_role(…)))
    # walk the whole page for each poll, on the cores the model runs on; a user's browser
    # does no such thing
    page.wait_for_function(_FINISHED, polling=200, timeout=RUN_TIMEOUT_MS)
    seen = time.perf_counter() - start
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible()
    errors = page.get_by_test_id("stException").count() + page.get_by_test_id("stAlertContentError").count()
    if errors:
        raise RuntimeError("the live page shows an error")
    return seen, _download(page)[1]


def page_figures(trace: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, key in (("spec", "speculative"), ("base", "baseline")):
        run = trace[key]
        out[name] = _figures(run["events"], run["wall_s"])
    return out


# -- the classroom -------------------------------------------------------------------------------
#: Lesson pages and the slider a student moves there (the block lesson opened ten rounds in).
LESSON_SLIDERS = [
    ("sampling_lab", "k", ""),
    ("tree", "tree_top_n", ""),
    ("block", "block_k", "block_round=10"),
    ("cost", "cost_gamma", ""),
    ("tree_drafts", "trd_t", ""),
]


#: Whether the page shows the "In line for the models" queue note (a text search, no role query).
_QUEUED = "() => document.body.textContent.includes('In line for the models')"


def _done(page: Any) -> bool:
    """The finished view is there: one lookup by id, cheap enough to poll (a role query
    computes every element's ARIA role in the browser that shares the model's cores)."""
    return bool(page.evaluate(_FINISHED))


def classroom_live(url: str, browser: Any, sessions: int, expected_tokens: list[int]) -> dict[str, Any]:
    """`sessions` browsers press Generate on the default settings at once."""
    contexts = [
        browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        for _ in range(sessions)
    ]
    pages = [c.new_page() for c in contexts]
    for page in pages:
        open_live(page, url)
    start: dict[int, float] = {}
    for i, page in enumerate(pages):
        page.get_by_role("button", name="Generate").click()
        start[i] = time.perf_counter()
    latency: dict[int, float] = {}
    queue_seen = 0
    deadline = time.perf_counter() + RUN_TIMEOUT_MS / 1000
    while len(latency) < sessions and time.perf_counter() < deadline:
        for i, page in enumerate(pages):
            if i in latency:
                continue
            if _done(page):
                latency[i] = time.perf_counter() - start[i]
            elif page.evaluate(_QUEUED):
                queue_seen = max(queue_seen, 1)
        time.sleep(0.05)
    errors, foreign, cached, ran = 0, 0, 0, 0
    for page in pages:
        errors += (
            page.get_by_test_id("stException").count() + page.get_by_test_id("stAlertContentError").count()
        )
        if not _done(page) or not page.get_by_role("heading", name="Rounds and statistics").is_visible():
            errors += 1
            continue
        _, trace = _download(page)
        tokens = [t for e in trace["speculative"]["events"] for t in e["committed"]]
        foreign += tokens != expected_tokens
        if trace["meta"].get("cached"):
            cached += 1
            cached_note = page.get_by_text("replayed from the shared cache").count()
            errors += not cached_note  # a replay must say so
        else:
            ran += 1
    for c in contexts:
        c.close()
    times = sorted(latency.values())
    return {
        "classroom_live_sessions": sessions,
        "classroom_live_median_s": statistics.median(times) if times else None,
        "classroom_live_worst_s": times[-1] if times else None,
        "classroom_live_runs": ran,
        "classroom_live_replays": cached,
        "classroom_live_queue_shown": bool(queue_seen),
        "classroom_live_errors": errors + sessions - len(latency),
        "classroom_live_foreign_outputs": foreign,
    }


def _download(page: Any) -> tuple[float, dict[str, Any]]:
    with page.expect_download(timeout=120_000) as info:
        page.get_by_test_id("stDownloadButton").filter(has_text="JSON trace").locator("button").click()
    return 0.0, json.loads(Path(info.value.path()).read_text(encoding="utf-8"))


def _value(slider: Any) -> float:
    return float(slider.evaluate("e => e.getAttribute('aria-valuenow') ?? e.value"))


def classroom_lessons(url: str, browser: Any, sessions: int) -> dict[str, Any]:
    """`sessions` browsers (spread over the lesson pages) move a slider at once: 1, 2 or 3
    steps right, so each must end showing its own value."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(sessions)]
    jobs = []
    for i, c in enumerate(contexts):
        name, key, query = LESSON_SLIDERS[i % len(LESSON_SLIDERS)]
        page = c.new_page()
        page.goto(f"{url}/{name}" + (f"?{query}" if query else ""))
        slider = page.locator(f".st-key-{key} [role='slider'], .st-key-{key} input[type='range']").first
        slider.wait_for(timeout=120_000)
        jobs.append((page, slider, 1 + i % 3, name))
    for page, *_ in jobs:
        settled(page, timeout_s=300)
    before = [_value(s) for _, s, _, _ in jobs]
    start = {}
    for i, (_page, slider, steps, _) in enumerate(jobs):
        slider.focus()
        for _ in range(steps):
            slider.press("ArrowRight")
        start[i] = time.perf_counter()
    latency = {}
    errors, foreign = 0, 0
    for i, (page, slider, _steps, _name) in enumerate(jobs):
        try:
            latency[i] = settled(page, quiet_s=0.3, timeout_s=300, started_s=2.0) - start[i]
        except TimeoutError:
            errors += 1
        errors += page.get_by_test_id("stException").count()
        now = _value(slider)
        foreign += not now > before[i]  # moved, by this session's own presses
    for c in contexts:
        c.close()
    times = sorted(latency.values())
    return {
        "classroom_lessons_sessions": sessions,
        "classroom_lessons_median_s": statistics.median(times) if times else None,
        "classroom_lessons_worst_s": times[-1] if times else None,
        "classroom_lessons_errors": errors,
        "classroom_lessons_foreign_values": foreign,
    }


# -- speed ---------------------------------------------------------------------------------------
def browser_cpu_s() -> float:
    """CPU seconds used so far by every Chromium process on this machine (Linux /proc): what
    the browser takes from the cores the model runs on."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if "chrom" not in f.read().lower():
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime + stime
        except OSError:  # a process that ended meanwhile
            continue
    return total / tick


def speed(url: str, browser: Any, plain: Plain, pairs: int) -> dict[str, Any]:
    """Page runs and plain runs, interleaved. Each page run has a seed of its own (greedy: the
    same tokens), so it really runs instead of being answered from the classroom's cache."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    open_live(page, url, "live_seed=999")
    live_run(page)  # loads the models in the server, warms both processes
    plain.run()
    rows: list[dict[str, Any]] = []
    for i in range(pairs):
        open_live(page, url, f"live_seed={1000 + i}")
        cpu = browser_cpu_s()
        seen, trace = live_run(page)
        cpu = browser_cpu_s() - cpu
        if trace["meta"].get("cached"):
            raise RuntimeError("a speed run was answered from the cache")
        p = page_figures(trace)
        d = plain.run()
        row = {
            "pair": i,
            "page": p,
            "plain": {k: _strip(v) for k, v in d.items()},
            "page_click_to_view_s": seen,
            "page_browser_cpu_s": cpu,
        }
        rows.append(row)
        print(
            f"pair {i}: page {_line(p)} (click → view {seen:5.2f} s, browser CPU {cpu:4.2f} s)"
            f" | plain {_line(d)}",
            flush=True,
        )
        print(f"        load average {os.getloadavg()[0]:.1f}", flush=True)
    context.close()

    def med(side: str, run: str, key: str) -> float:
        return statistics.median(r[side][run][key] for r in rows)

    out: dict[str, Any] = {}
    for run in ("spec", "base"):
        out[f"{run}_model_time_ratio"] = med("plain", run, "model_per_token_s") / med(
            "page", run, "model_per_token_s"
        )
        out[f"{run}_wall_ratio"] = med("plain", run, "wall_s") / med("page", run, "wall_s")
        for side in ("page", "plain"):
            out[f"{side}_{run}_ms_per_token"] = 1e3 * med(side, run, "model_per_token_s")
            out[f"{side}_{run}_prefill_s"] = med(side, run, "prefill_s")
            out[f"{side}_{run}_wall_s"] = med(side, run, "wall_s")
    ratios = [
        r["plain"][run]["model_per_token_s"] / r["page"][run]["model_per_token_s"]
        for r in rows
        for run in ("spec", "base")
    ]
    out["live_model_time_ratio"] = min(out["spec_model_time_ratio"], out["base_model_time_ratio"])
    out["live_wall_ratio"] = min(out["spec_wall_ratio"], out["base_wall_ratio"])
    out["model_time_ratio_range"] = [min(ratios), max(ratios)]
    out["page_click_to_view_s"] = statistics.median(r["page_click_to_view_s"] for r in rows)
    out["page_browser_cpu_s"] = statistics.median(r["page_browser_cpu_s"] for r in rows)
    out["pairs"] = pairs
    return out


def _line(runs: dict[str, Any]) -> str:
    return ", ".join(
        f"{k} {runs[k]['model_per_token_s'] * 1e3:5.1f} ms/token (prefill {runs[k]['prefill_s']:4.2f} s)"
        f" wall {runs[k]['wall_s']:4.2f} s"
        for k in ("spec", "base")
    )


def _strip(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k != "tokens"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="one pair and a smaller classroom")
    parser.add_argument("--pairs", type=int, default=None)
    parser.add_argument(
        "--part", choices=("all", "speed", "classroom"), default="all", help="run one part only"
    )
    args = parser.parse_args()
    if args.child:
        child()
        return
    from playwright.sync_api import sync_playwright

    pairs = args.pairs or (1 if args.quick else 5)
    results: dict[str, Any] = {"load_avg_start": os.getloadavg()[0]}
    server = Server(ROOT / "artifacts" / "bench-live-page.log")
    plain = Plain()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            if args.part in ("all", "speed"):
                results.update(speed(server.url, browser, plain, pairs))
            if args.part in ("all", "classroom"):
                expected = plain.run()["spec"]["tokens"]
                results.update(classroom_live(server.url, browser, 4 if args.quick else 10, expected))
                results.update(classroom_lessons(server.url, browser, 10 if args.quick else 30))
            browser.close()
    finally:
        plain.close()
        server.close()
    results["load_avg_end"] = os.getloadavg()[0]
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in results.items()}))


if __name__ == "__main__":
    main()
