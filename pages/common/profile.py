"""This machine's costs as lesson text: each hardware-dependent figure formatted (with the
memory-bound reference beside it where the two differ by more than 15 %) and the line that
names where the figures come from (``specdec_core.live.profile_quotes``)."""

from __future__ import annotations

from pages.common.i18n import Strings
from specdec_core.live.profile_quotes import CourseCosts, Figure


def number(s: Strings, fig: Figure, digits: int = 2) -> str:
    """`fig` as text: its value, or both values where the reference differs from it."""
    value = f"{fig.value:.{digits}f}"
    if fig.reference is None:
        return value
    return s("profile.beside", value=value, reference=f"{fig.reference:.{digits}f}")


def source(s: Strings, costs: CourseCosts) -> str:
    """Where the figures come from: this machine (CPU and cores) or the memory-bound reference."""
    m = costs.measured
    return s["profile.reference"] if m is None else s("profile.measured", cpu=m.cpu, cores=m.cores)


def why(s: Strings, *figures: Figure) -> str:
    """The sentence why two figures are shown, when any of `figures` shows both; else ""."""
    return s["profile.why"] if any(f.reference is not None for f in figures) else ""
