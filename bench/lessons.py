"""How fast the lessons respond: median page rerun after a control change, and 10⁶ Monte Carlo trials.

Each page is opened once under Streamlit's AppTest (the page script runs in-process, as in
the server, without the browser's rendering), then one control is changed repeatedly and
every rerun is timed: ``*_rerun_s`` is the median of all reruns, ``*_new_value_rerun_s`` of
those where the control took a value for the first time (figures built), and
``*_revisit_rerun_s`` of those back at a value seen before (figures from the shared figure
cache). Prints a table and, last, one JSON line.

    .venv/bin/python -m bench.lessons [--repeats 8] [--quick]    # from the repository root
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from specdec_core.variants import MAX_TRIALS, simulate
from specdec_core.viz import memo
from tests.apptest_helpers import open_page

# The block lesson draws nothing before its first round: open it ten rounds in.
QUERIES: dict[str, dict[str, str]] = {"block": {"block_round": "10"}}
# page -> (widget kind, key, values to cycle through)
CONTROLS: dict[str, tuple[str, str, list[object]]] = {
    "sampling_lab": ("slider", "k", [1, 2, 3, 0]),
    "overlap": ("selectbox", "ov_preset", ["equal", "disjoint", "random", "abc"]),
    "tree": ("slider", "tree_top_n", [2, 3, 4, 5]),
    "block": ("slider", "block_k", [2, 3, 5, 4]),
    "cost": ("slider", "cost_alpha", [0.5, 0.7, 0.9, 0.8]),
    "tree_drafts": ("slider", "trd_t", [0.5, 1.0, 1.5, 0.8]),
}


def page_reruns(page: str, repeats: int) -> list[tuple[float, bool]]:
    """(seconds, new value) per rerun; "new" when the control takes a value for the first time.

    The figure cache (specdec_core.viz.memo) starts empty for each page, so a new value builds
    its figures and a value seen before is answered from the cache, as in a server where a
    learner drags a slider back and forth."""
    kind, key, values = CONTROLS[page]
    memo.clear()
    at = open_page(page, query=QUERIES.get(page))
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
    return times


def monte_carlo(repeats: int) -> list[float]:
    p, q = np.array([0.2, 0.4, 0.4]), np.array([0.1, 0.1, 0.8])
    rng = np.random.default_rng(0)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        simulate(p, q, MAX_TRIALS, rng)
        times.append(time.perf_counter() - start)
    return times


def monte_carlo_on_page() -> float:
    at = open_page("overlap", query={"ov_n": str(MAX_TRIALS)})
    at.button(key="ov_mc_run").click()
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    assert not at.exception
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="5 reruns a page (same keys)")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 5

    results: dict[str, float] = {}
    print(f"{'page':<14} {'control':<12} {'median rerun':>13} {'new value':>10} {'revisit':>8} {'max':>8}")
    for page, (_, key, _) in CONTROLS.items():
        runs = page_reruns(page, args.repeats)
        t = [x for x, _ in runs]
        new = [x for x, fresh in runs if fresh]
        old = [x for x, fresh in runs if not fresh]
        results[f"{page}_rerun_s"] = statistics.median(t)
        results[f"{page}_new_value_rerun_s"] = statistics.median(new)
        results[f"{page}_revisit_rerun_s"] = statistics.median(old) if old else float("nan")
        print(
            f"{page:<14} {key:<12} {statistics.median(t):>12.3f}s {statistics.median(new):>9.3f}s"
            f" {results[f'{page}_revisit_rerun_s']:>7.3f}s {max(t):>7.3f}s"
        )
    mc = monte_carlo(args.repeats)
    results["monte_carlo_1e6_s"] = statistics.median(mc)
    results["monte_carlo_1e6_page_rerun_s"] = monte_carlo_on_page()
    print(f"\n{MAX_TRIALS:,} Monte Carlo trials (vectorised): median {statistics.median(mc):.3f}s")
    print(f"overlap page rerun that runs them and redraws: {results['monte_carlo_1e6_page_rerun_s']:.3f}s")
    print(json.dumps({k: round(v, 4) for k, v in results.items()}))


if __name__ == "__main__":
    main()
