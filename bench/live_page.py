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
plain process measures the same through the same :class:`~specdec_core.live.runs.Timed`.
Ratios are plain / page, per run (speculative and target-only) from the medians over the
pairs; the reported ratio is the worse of the two.
``page_browser_cpu_s``: the CPU seconds the bench's Chromium used from Generate to the finished
view (the median over the pairs), the share of the two cores the page took from the model.

Classroom (:mod:`bench.classroom`, against :mod:`specdec_core.live.classroom`): N sessions
press Generate on the default settings at once (one runs, the rest are answered from the
shared trace cache or wait their turn), then M sessions move a slider on lesson pages at
once, each timed by a clock inside its own page.

Last line: one JSON object (``live_model_time_ratio``, ``live_wall_ratio`` and what they
come from, ``classroom_*``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

from bench.classroom import classroom_lessons, classroom_live
from bench.live_browser import ROOT, Server, live_run, open_live
from support.browser import ARGS, CHROMIUM


# -- the plain engine, in a process of its own ---------------------------------------------------
def child() -> None:
    """Serve plain runs: each line on stdin asks for one; each answer is one JSON line."""
    from pages.common.gc_settle import settle_after_load
    from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
    from specdec_core.live.presets import preset_prompt
    from specdec_core.live.runs import Timed, encode_prompt, run_of
    from specdec_core.live.settings import LiveSettings

    settings = LiveSettings(target=TargetSpec("bundled", ""), draft=DraftSpec("ngram", 0, ""))
    target = load_target(settings.target)
    draft = load_draft(target, settings.draft)
    ids = encode_prompt(target, preset_prompt("copy", "en"), settings.chat, settings.max_new_tokens)
    settle_after_load()  # as the app's shelf does: a full collection's pause falls on neither side alone
    print(json.dumps({"ready": True}), flush=True)
    for _ in sys.stdin:
        out = {}
        for name, d in (("spec", draft), ("base", None)):
            stream = Timed(run_of(target, d, ids, settings, 20))
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


def page_figures(trace: dict[str, Any]) -> dict[str, Any]:
    """The page's figures per run, from the trace it offers for download."""
    out = {}
    for name, key in (("spec", "speculative"), ("base", "baseline")):
        run = trace[key]
        out[name] = _figures(run["events"], run["wall_s"])
    return out


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


# -- speed ---------------------------------------------------------------------------------------
def browser_cpu_s() -> float:
    """CPU seconds used so far by this bench's Chromium (the processes under this one; Linux
    /proc): what the browser takes from the cores the model runs on. Other programs' browsers
    on the machine are left out."""
    procs = {}  # pid -> (name, parent's pid, utime + stime)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:  # a process that ended meanwhile
            continue
        fields = tail.split()
        procs[int(pid)] = (head.partition("(")[2].lower(), int(fields[1]), int(fields[11]) + int(fields[12]))
    ours = {os.getpid()}
    while below := {pid for pid, (_, parent, _) in procs.items() if parent in ours} - ours:
        ours |= below
    ticks = sum(cpu for pid, (name, _, cpu) in procs.items() if pid in ours and "chrom" in name)
    return ticks / os.sysconf("SC_CLK_TCK")


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
