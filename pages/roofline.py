"""The roofline: when speculation pays, for a hardware, model, batch and context.

Hardware figures come from the machine profile (``live.machine_profile``: the data-sheet peaks
of assets/hardware.json, and this machine's measured ones when it has been profiled); the page
hands them to ``course.roofline`` as plain numbers, which computes every figure drawn.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from pages.common import form
from pages.common.figure import show_figure
from pages.common.page import controls_box, lesson_body, start
from pages.common.quiz import quiz
from pages.common.urlstate import mirror
from pages.roofline_parts.form import BATCHES, CONTEXTS, FORM
from specdec_core.course import roofline as course
from specdec_core.live import machine_profile
from specdec_core.viz import roofline as viz
from specdec_core.viz.escape import md

f = FORM
s, text = start("roofline", params=f.params())
fig = s["fig"]

profile = machine_profile.load()
HARDWARE = {h.key: h for h in machine_profile.hardware_references()}
if profile is not None:
    HARDWARE = {"this": profile.hardware(), **HARDWARE}
if st.session_state.get(f.hw.key) not in HARDWARE:
    st.session_state[f.hw.key] = "h100" if "h100" in HARDWARE else next(iter(HARDWARE))

text.show("intro")


def _lesson() -> None:
    """The controls and everything they drive."""
    with controls_box(s, key="noprint_controls"):
        c1, c2, c3, c4 = st.columns(4)
        form.select(
            c1,
            f.hw,
            s["hardware"],
            options=tuple(HARDWARE),
            format_func=lambda k: HARDWARE[k].label,
            help=s["hardware_help"],
        )
        form.select(c2, f.target, s["target"], format_func=lambda k: s[f"models.{k}"], help=s["target_help"])
        form.select(c3, f.draft, s["draft"], format_func=lambda k: s[f"models.{k}"], help=s["draft_help"])
        form.radio(c4, f.precision, s["precision"], horizontal=True, help=s["precision_help"])
        d1, d2, d3, d4 = st.columns(4)
        form.select_slider(d1, f.batch, s["batch"], help=s["batch_help"])
        form.select_slider(
            d2, f.context, s["context"], format_func=lambda n: f"{n:,}", help=s["context_help"]
        )
        form.slider(d3, f.gamma, s["gamma"], help=s["gamma_help"])
        form.slider(d4, f.alpha, s["alpha"], step=0.01, help=s["alpha_help"])
    mirror(f.params())
    if profile is None:
        st.caption(s["no_profile"])

    hw = HARDWARE[form.value(f.hw)]
    machine = course.Machine(hw.bandwidth_gbs, hw.compute_gflops)
    setup = course.Setup(
        machine=machine,
        target=course.MODELS[form.value(f.target)],
        draft=course.MODELS[form.value(f.draft)],
        bytes_per_param=course.PRECISIONS[form.value(f.precision)],
        batch=int(form.value(f.batch)),
        context=int(form.value(f.context)),
        gamma=int(form.value(f.gamma)),
        alpha=float(form.value(f.alpha)),
    )
    v = course.evaluate(setup)
    st.caption(
        s("hardware_line", label=md(hw.label), bandwidth=hw.bandwidth_gbs, compute=hw.compute_gflops / 1000.0)
        + " "
        + s("source_line", source=md(hw.source))
    )

    bound = {True: s["memory_bound"], False: s["compute_bound"]}
    m = st.columns(4)
    m[0].metric(s["m_speedup"], f"{v.speedup:.2f}×")
    off = {"delta_color": "off", "delta_arrow": "off"}
    m[1].metric(s["m_plain"], f"{v.plain.seconds * 1000:.3g} ms", bound[v.plain.memory_bound], **off)
    m[2].metric(
        s["m_verify"], f"{v.verify_cost:.2f}", bound[v.verify.memory_bound], help=s["m_verify_help"], **off
    )
    m[3].metric(
        s["m_draft"], f"{v.cost_ratio:.3f}", bound[v.draft.memory_bound], help=s["m_draft_help"], **off
    )
    verdict = "pays" if v.speedup > 1.0 else "loses"
    st.html(f'<div class="sd-verdict {"yes" if verdict == "pays" else "no"}">'
            f"{s(f'verdict_{verdict}', value=v.speedup, tokens=v.tokens)}</div>")  # fmt: skip

    text.show("roofline")
    most = course.curve_tokens(setup)
    show_figure(
        viz.roofline_figure(
            course.roofline_curve(
                setup.target, setup.bytes_per_param, machine, setup.batch, setup.context, most
            ),
            course.roofline_curve(
                setup.draft, setup.bytes_per_param, machine, setup.batch, setup.context, most
            ),
            machine.ridge,
            viz.Point(v.plain.intensity, v.plain.seconds),
            viz.Point(v.verify.intensity, v.verify.seconds),
            viz.Point(v.draft.intensity, v.draft.seconds),
            fig,
        ),
        theme=None,
        key="roof_figure",
    )
    st.caption(s("roofline_caption", ridge=machine.ridge, plain=v.plain.intensity, verify=v.verify.intensity))

    text.show("batch")
    batches = np.arange(1, BATCHES[-1] + 1)
    contexts = sorted({CONTEXTS[1], setup.context, CONTEXTS[-2]})
    lines = [(c, course.speedup_by_batch(setup, batches, c), c == setup.context) for c in contexts]
    even = course.break_even_batch(setup, BATCHES[-1])
    show_figure(viz.batch_figure(batches, lines, setup.batch, even, fig), theme=None, key="roof_batch_figure")
    if even is None:
        st.markdown(s("even_never", most=BATCHES[-1], context=setup.context))
    else:
        st.markdown(s("even_at", batch=even, context=setup.context))
    st.caption(s("kv_line", share=100.0 * course.kv_share(setup), batch=setup.batch, context=setup.context))


lesson_body(_lesson)

text.show("context")
text.show("assumptions")
text.show("worked")
text.show("sources")
quiz(s)
