"""Lesson text as a page shows it from the machine profile now kept (``machine_profile.load``,
else the memory-bound reference): a section's ``{{name}}`` placeholders filled by
``pages.common.profile.course_values``, as the cost, notation and self-speculation pages fill them."""

from __future__ import annotations

import re

from pages.common.i18n import LESSONS, Strings
from pages.common.lesson import fill, parse
from pages.common.profile import course_values, round_values
from specdec_core.course.self_spec import WORKED_HEAD
from specdec_core.live.profile_quotes import course_costs


def rendered(lang: str, page: str, section: str, values: dict[str, str] | None = None) -> str:
    """One section of `page` filled from the profile (the self-speculation page's worked head
    too) and `values`, every line break (and the indent after it) read as a space."""
    body = parse((LESSONS / lang / f"{page}.md").read_text("utf-8")).sections[section]
    costs = course_costs()
    given = course_values(Strings(page, lang), costs) | round_values("head", *WORKED_HEAD, costs.beta().value)
    filled = fill(body, given | (values or {}))
    return re.sub(r"[ \t]*\n[ \t]*", " ", filled)
