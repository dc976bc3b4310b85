"""What a lesson quotes of this machine's profile: one hardware-dependent number at a time, this
machine's measured value where a model has loaded here, else the memory-bound reference's, and
the reference beside a measured value that differs from it by more than 15 %
(``machine_profile.DIFFERS``). Pages format them (``pages/common/profile.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_core.live.machine_profile import MachineProfile, differs, load, memory_bound, reference

#: The hardware the memory-bound reference is priced on: what a GPU at batch 1 approaches.
REFERENCE_HARDWARE = "h100"


@dataclass(frozen=True)
class Figure:
    """One hardware-dependent number as a lesson quotes it: this machine's measured value where
    there is one (``measured``), else the memory-bound reference's; ``reference`` is the
    reference's value when a measured one differs from it by more than :data:`DIFFERS` (the page
    then shows both), else None."""

    value: float
    measured: bool
    reference: float | None = None


def figure(measured: float | None, reference: float) -> Figure:
    """The figure a lesson quotes from a measured value (None: not measured here) and the
    reference's."""
    if measured is None:
        return Figure(reference, False)
    return Figure(measured, True, reference if differs(measured, reference) else None)


@dataclass(frozen=True)
class CourseCosts:
    """The costs the lessons quote for one target: this machine's profile where a model has
    loaded here (``measured``), else the memory-bound reference, which is always beside it."""

    measured: MachineProfile | None
    reference: MachineProfile
    model: str = "smollm2"

    def draft_c(self, draft: str) -> Figure:
        """A draft's step in target steps (a lookup drafter's 0 on every machine)."""
        if draft == "ngram":
            return Figure(0.0, self.measured is not None)
        ref = self.reference.draft_c[self.model][draft]
        got = None if self.measured is None else self.measured.draft_c.get(self.model, {}).get(draft)
        return figure(got, ref)

    def verify(self, rows: int) -> Figure:
        """A verification of `rows` rows in target steps."""
        ref = self.reference.verify_steps(self.model, rows)
        has = self.measured is not None and bool(self.measured.verify_ratio.get(self.model))
        return figure(self.measured.verify_steps(self.model, rows) if has else None, ref)

    def beta(self, rows: int = 5) -> Figure:
        """β of the linear verification model 1 + β·γ through the verification of `rows` rows;
        never below 0 (a verification timed under one step would make longer drafts cheaper to
        check, which the model cannot mean)."""
        v = self.verify(rows)
        per = lambda x: max(0.0, round((x - 1.0) / (rows - 1), 3))  # noqa: E731
        return Figure(per(v.value), v.measured, None if v.reference is None else per(v.reference))

    def step_ms(self) -> Figure:
        """A decode step of the target in ms: measured, else its floor at the reference's bandwidth."""
        ref = self.reference.step_ms[self.model]
        got = None if self.measured is None else self.measured.step_ms.get(self.model)
        return Figure(got, True) if got is not None else Figure(ref, False)

    def floor_ms(self) -> float | None:
        """The weight bytes a step of the target reads ÷ this machine's bandwidth (None unmeasured)."""
        return None if self.measured is None else self.measured.floor_ms.get(self.model)


def course_costs(model: str = "smollm2") -> CourseCosts:
    """What the lessons quote now for `model`: this machine's profile (:func:`load`, a file read)
    beside the memory-bound reference on :data:`REFERENCE_HARDWARE`."""
    measured = load()
    if measured is not None and model not in measured.step_ms:
        measured = None
    return CourseCosts(measured, memory_bound(reference(REFERENCE_HARDWARE)), model)


@dataclass(frozen=True)
class StepSplit:
    """A measured decode step split into reading the weights at this machine's bandwidth (its
        floor) and everything else; ``gpu_floor_ms``: the same bytes read at the reference GPU's
    bandwidth, ``gpu_bandwidth_gbs``."""

    step_ms: float
    floor_ms: float
    rest_ms: float
    rest_share: float
    weight_mb: float
    bandwidth_gbs: float
    threads: int
    gpu_bandwidth_gbs: float
    gpu_floor_ms: float


def step_split(costs: CourseCosts) -> StepSplit | None:
    """The target's step on this machine, split (None before a model has loaded here)."""
    m = costs.measured
    floor = costs.floor_ms()
    if m is None or floor is None:
        return None
    step = m.step_ms[costs.model]
    nbytes = floor / 1e3 * m.bandwidth_gbs * 1e9
    rest = max(step - floor, 0.0)
    gpu = reference(REFERENCE_HARDWARE).bandwidth_gbs
    return StepSplit(
        step_ms=step,
        floor_ms=floor,
        rest_ms=rest,
        rest_share=rest / step,
        weight_mb=nbytes / 1e6,
        bandwidth_gbs=m.bandwidth_gbs,
        threads=m.threads,
        gpu_bandwidth_gbs=gpu,
        gpu_floor_ms=nbytes / (gpu * 1e9) * 1e3,
    )
