"""The exercise sheet's settings, named once: key (also the URL name), default, bounds or options."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.urlstate import Param, bool_param, int_param
from specdec_core.course.exercises import MAX_PER_TOPIC, MAX_SEED, TOPICS


def _topics(raw: str) -> list[str]:
    """The link's topics, in the course's order; none is a sheet to fill (not keys_param, which
    refuses none), a repeated or unknown one is refused."""
    chosen = [t for t in raw.split(",") if t]
    if any(t not in TOPICS for t in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(raw)
    return [t for t in TOPICS if t in chosen]


class SheetForm(Form):
    """The sheet's seed, its topics, problems per topic, and whether the key shows."""

    prefix = "ex"
    seed = int_param(1, 0, MAX_SEED)
    topics = Param(list(TOPICS), _topics, ",".join, options=TOPICS)
    n = int_param(1, 1, MAX_PER_TOPIC)
    key = bool_param(False)


FORM = SheetForm()
