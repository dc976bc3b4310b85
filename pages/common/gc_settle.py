"""After each model load, Python's collector stops rescanning the loaded model's objects.

Kept because a learner gains on any machine: without it, a full collection walks every
object of a loaded model (torch modules, the tokenizer's vocabulary) and stalls a live
run's stream for that long, at whatever moment the collector picks.
"""

from __future__ import annotations

from specdec_core.models.memory import collect_all


def settle_after_load() -> None:
    """After a model is built (and others unloaded to make room): collect everything, the
    frozen objects included, so an unloaded model's reference cycles are freed, and freeze
    what survives, the new model with it."""
    collect_all(freeze=True)
