"""What a full collection of Python's garbage collector costs in the app's process, around a model load.

    .venv/bin/python -m bench.gc_pauses            # 5 timed collections per figure
    .venv/bin/python -m bench.gc_pauses --quick    # 2, the same keys

The server collects in full on its own, whenever enough long-lived objects have piled up,
in whatever page run is allocating at that moment, with the GIL held. This process imports
what the pages import, then loads the default live pair (bundled SmolLM2-135M and the
n-gram draft) as the shelf does. It times ``gc.collect()``: after the imports, after the load
without a settle (nothing frozen), and after
``settle_after_load``, which the shelf now calls after each build; and that settle itself.

Last line: one JSON object with every figure (milliseconds, medians of the collections).
Results go into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time


def full_collection_ms(repeats: int) -> float:
    """Median milliseconds of one full collection (nothing left to free after the first)."""
    gc.collect()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        gc.collect()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 timed collections per figure")
    repeats = 2 if parser.parse_args().quick else 5

    from pages.common import gc_settle
    from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target

    out = {"full_collection_after_imports_ms": full_collection_ms(repeats)}
    start = time.perf_counter()
    target = load_target(TargetSpec("bundled", ""), lambda *_: None)
    draft = load_draft(target, DraftSpec("ngram", 0, ""), lambda *_: None)
    out["load_ms"] = 1e3 * (time.perf_counter() - start)
    out["full_collection_after_load_ms"] = full_collection_ms(repeats)
    start = time.perf_counter()
    gc_settle.settle_after_load()
    out["settle_after_load_ms"] = 1e3 * (time.perf_counter() - start)
    out["full_collection_after_settle_ms"] = full_collection_ms(repeats)
    out["frozen_objects"] = gc.get_freeze_count()
    for key, value in out.items():
        print(f"{key:36s} {value:.1f}" if isinstance(value, float) else f"{key:36s} {value}")
    del target, draft
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
