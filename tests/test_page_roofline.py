"""The roofline lesson under AppTest: it opens in both languages with the published references
only until this machine has a profile, then offers this machine's measured figures; every
number it shows is course.roofline's for its controls, and a link sets them up."""

from __future__ import annotations

import pytest

from specdec_core.course import roofline as r
from specdec_core.live.machine_profile import hardware_references, reference
from support.apptest import open_page, rerun, shared_link


def _shown(at) -> list[str]:
    return [m.value for m in at.metric]


def _expected(hardware, batch=1, context=4096, gamma=4, alpha=0.8, target="llama_8b", draft="llama_1b"):
    machine = r.Machine(hardware.bandwidth_gbs, hardware.compute_gflops)
    return r.evaluate(r.Setup(machine, r.MODELS[target], r.MODELS[draft], 2.0, batch, context, gamma, alpha))


@pytest.mark.parametrize(
    ("lang", "title"), [("en", "The roofline: when speculation pays"), ("zh", "屋顶线：投机何时划算")]
)
def test_the_page_opens_with_the_references_only_before_a_profile(lang, title):
    at = open_page("roofline", lang=lang)
    assert at.title[0].value == title and not at.error
    assert at.selectbox(key="roof_hw").options == [h.label for h in hardware_references()]
    v = _expected(reference("h100"))
    assert _shown(at)[0] == f"{v.speedup:.2f}×"
    assert any("H100" in c.value for c in at.caption)


def test_moving_the_controls_recomputes_every_figure():
    at = open_page("roofline")
    at.select_slider(key="roof_batch").set_value(512)
    at.select_slider(key="roof_context").set_value(1024)
    at.slider(key="roof_gamma").set_value(3)
    at.slider(key="roof_alpha").set_value(0.7)
    at.selectbox(key="roof_hw").set_value("a100")
    rerun(at)
    v = _expected(reference("a100"), 512, 1024, 3, 0.7)
    shown = _shown(at)
    assert shown == [
        f"{v.speedup:.2f}×",
        f"{v.plain.seconds * 1000:.3g} ms",
        f"{v.verify_cost:.2f}",
        f"{v.cost_ratio:.3f}",
    ]
    even = r.break_even_batch(
        r.Setup(
            r.Machine(2039.0, 312000.0), r.MODELS["llama_8b"], r.MODELS["llama_1b"], 2.0, 512, 1024, 3, 0.7
        ),
        1024,
    )
    assert any(f"**{even:,}**" in m.value for m in at.markdown)
    link = shared_link(at)
    assert link["roof_batch"] == "512" and link["roof_hw"] == "a100" and link["roof_context"] == "1024"


def test_a_link_sets_the_page_up():
    query = {"roof_hw": "laptop", "roof_target": "llama_1b", "roof_draft": "smollm2_135m", "roof_batch": "8"}
    at = open_page("roofline", query=query)
    v = _expected(reference("laptop"), batch=8, target="llama_1b", draft="smollm2_135m")
    assert _shown(at)[0] == f"{v.speedup:.2f}×"


def test_this_machine_is_offered_once_profiled(pinned_profile):
    at = open_page("roofline", state={"roof_hw": "this"})
    assert at.selectbox(key="roof_hw").options == ["Pinned CPU, 4 cores"] + [
        h.label for h in hardware_references()
    ]
    v = _expected(pinned_profile.hardware())
    assert _shown(at)[0] == f"{v.speedup:.2f}×"
    assert not any("not been profiled" in c.value for c in at.caption)
