"""This machine's profile, measured as model loading measures it, beside the memory-bound reference.

    .venv/bin/python -m bench.profile            # both targets with the bf16 copy, layer skip 8
                                                 # and (for Gemma) SmolLM2 as drafts
    .venv/bin/python -m bench.profile --quick    # both targets with their bf16 copy (the same keys)

Every hardware-dependent number the course quotes comes from this profile
(``specdec_core.live.machine_profile``). The run forgets this machine's saved profile and step
costs, then loads the models the way the run service does (``live.job_models``), so each times
its step and its verifications at load and the profile keeps them:

* ``cpu``, ``cores``, ``threads``: the machine and the engine's thread count;
* ``bandwidth_gbs``: bytes ÷ the fastest ``torch.sum`` over 512 MiB of float32;
  ``compute_gflops``: 2·n³ ÷ the fastest float32 product of two 1536 × 1536 matrices;
* ``<model>_step_ms``: a decode step timed at load (median of interleaved repeats);
  ``<model>_floor_ms``: the weight bytes a step reads ÷ ``bandwidth_gbs``;
* ``<model>_verify_ratio``: {rows: a forward of that many rows, every logit row, in steps};
* ``<model>_draft_c``: {draft: its step timed at load ÷ the target's}.

Printed beside them: step ÷ floor (how far a step is from reading its weights) and the
memory-bound reference at this machine's bandwidth. The last line is one JSON object, the
profile's (``MachineProfile.as_json``), with ``source`` "measured". Results go into
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json

from specdec_core.live import job_models, machine_profile
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.shelf import ModelShelf
from specdec_core.models.hf import kernel_choice

#: The drafts each target is measured with, full run and --quick.
DRAFTS: dict[str, tuple[DraftSpec, ...]] = {
    "bundled": (DraftSpec("bf16"), DraftSpec("layerskip", k=8)),
    "gemma": (DraftSpec("bf16"), DraftSpec("layerskip", k=8), DraftSpec("smollm2")),
}
QUICK_DRAFTS: dict[str, tuple[DraftSpec, ...]] = {
    "bundled": (DraftSpec("bf16"),),
    "gemma": (DraftSpec("bf16"),),
}


def measure(drafts: dict[str, tuple[DraftSpec, ...]]) -> machine_profile.MachineProfile:
    """Forget this machine's profile and step costs, load every target and its drafts as the run
    service does, and return the profile they leave."""
    machine_profile.profile_file().unlink(missing_ok=True)
    kernel_choice.forget_steps()
    for kind, specs in drafts.items():
        shelf = ModelShelf()  # one target (and its drafts) in memory at a time
        spec = TargetSpec(kind)
        target = job_models.target(shelf, None, spec)
        for draft in specs:
            job_models.draft(shelf, None, spec, target, draft)
        shelf.release()
    profile = machine_profile.load()
    if profile is None:
        raise SystemExit("no model was measured: the profile folder cannot be written?")
    return profile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the bf16 copies only (the same keys)")
    args = parser.parse_args(argv)
    profile = measure(QUICK_DRAFTS if args.quick else DRAFTS)
    reference = machine_profile.memory_bound(profile.hardware())
    print(
        f"{profile.cpu}, {profile.cores} cores, {profile.threads} threads: "
        f"read {profile.bandwidth_gbs:.1f} GB/s, compute {profile.compute_gflops:.1f} GFLOP/s",
        flush=True,
    )
    for m in profile.models():
        step, floor = profile.step_ms[m], profile.floor_ms.get(m)
        ratio = f" (×{step / floor:.2f})" if floor else ""
        verify = ", ".join(f"{r}: {v:.2f}" for r, v in sorted(profile.verify_ratio.get(m, {}).items()))
        bound = reference.draft_c.get(m, {})
        drafts = ", ".join(
            f"{d} {c:.2f}" + (f" (memory-bound {bound[d]:.2f})" if d in bound else "")
            for d, c in sorted(profile.draft_c.get(m, {}).items())
        )
        print(f"{m}: step {step:.1f} ms, floor {floor or float('nan'):.1f} ms{ratio}")
        print(f"  verification in steps by rows: {verify} (memory-bound: 1 up to 17 rows on a GPU)")
        print(f"  draft c: {drafts}")
    print(json.dumps(profile.as_json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
