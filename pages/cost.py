"""Lesson 5, cost and speedup: expected tokens, the draft's cost, verification cost, best γ."""

import streamlit as st

from pages.common import form
from pages.common import profile as shown
from pages.common.figure import show_figure
from pages.common.page import controls_box, lesson_body, start
from pages.common.quiz import quiz
from pages.common.urlstate import mirror
from pages.cost_parts.form import MAX_GAMMA, CostForm
from specdec_core.course.cost import check_claims, cost_data, cost_summary, draft_presets
from specdec_core.live.profile_quotes import course_costs, step_split
from specdec_core.theory import linear_verify_cost
from specdec_core.viz import cost as viz
from specdec_core.viz import speedup_maps

ALPHA_LINES = (0.5, 0.7, 0.8, 0.9, 0.95)

#: The essay's table (quoted, two rows wrong) and the drafts' greedy match rates
#: (specdec_core.course.cost); their costs and the verification's from this machine's profile,
#: else the memory-bound reference (read at each run: a model loaded since may have measured them).
SEED_CLAIMS = cost_data().seed_claims
COSTS = course_costs()
MEASURED_DRAFTS = draft_presets(lambda draft: COSTS.draft_c(draft).value)
VERIFY = COSTS.verify(5)
BETA = COSTS.beta().value
f = CostForm(beta=BETA)

s, text = start("cost", params=f.params())
SOURCE = shown.source(s, COSTS)
fig_text = s["fig"]
st.session_state.setdefault("cost_preset", "custom")


def _load_preset() -> None:
    name = st.session_state["cost_preset"]
    if name in MEASURED_DRAFTS:
        st.session_state[f.alpha.key], st.session_state[f.c.key] = MEASURED_DRAFTS[name]
        st.session_state[f.verify.key], st.session_state[f.beta.key] = "linear", f.beta.default


def _to_custom() -> None:
    st.session_state["cost_preset"] = "custom"


text.show("intro")


def _lesson() -> None:
    """The preset, α, γ, c and verification cost, and the speedup figures they drive."""
    with controls_box(s):
        st.selectbox(
            s["preset"],
            ["custom", *MEASURED_DRAFTS],
            format_func=lambda k: s(f"presets.{k}", c=f"{MEASURED_DRAFTS.get(k, (0, 0))[1]:.2f}"),
            key="cost_preset",
            on_change=_load_preset,
            help=s("preset_help", source=SOURCE),
        )
        c1, c2, c3 = st.columns(3)
        form.slider(c1, f.alpha, s["alpha"], step=0.01, help=s["alpha_help"], on_change=_to_custom)
        form.slider(c2, f.gamma, s["gamma"], help=s["gamma_help"])
        form.slider(c3, f.c, s["c"], step=0.01, help=s["c_help"], on_change=_to_custom)
        c4, c5 = st.columns([2, 1])
        form.radio(
            c4,
            f.verify,
            s["verify"],
            format_func=lambda k: s[f"verify_models.{k}"],
            horizontal=True,
            help=s["verify_help"],
        )
        form.slider(
            c5,
            f.beta,
            s["beta"],
            format="%.3f",
            help=s("beta_help", beta=f"{BETA:g}", source=SOURCE, v5=f"{VERIFY.value:.2f}"),
            disabled=form.value(f.verify) == "constant",
        )
    mirror(f.params())

    v = f.read()
    alpha, gamma, c, beta = v.alpha, v.gamma, v.c, v.beta
    verify_cost = 1.0 if v.verify == "constant" else linear_verify_cost(beta)
    now = cost_summary(alpha, gamma, c, verify_cost, MAX_GAMMA)
    value, best, best_value = now.speedup, now.best_gamma, now.best_speedup

    m = st.columns(4)
    m[0].metric(s["m_tokens"], f"{now.tokens:.2f}", help=s["m_tokens_help"])
    m[1].metric(s["m_cost"], f"{now.round_cost:.2f}", help=s["m_cost_help"])
    m[2].metric(s["m_speedup"], f"{value:.2f}×")
    m[3].metric(s["m_best"], f"γ = {best}", f"{best_value:.2f}×", delta_color="off", delta_arrow="off")
    if now.verdict == "never":
        verdict = s("verdict_never", best=best, value=best_value)
    else:
        verdict = s(f"verdict_{now.verdict}", value=value, best=best, best_value=best_value)
    if now.best_at_limit:
        verdict += " " + s("verdict_limit", limit=MAX_GAMMA)
    st.html(f'<div class="sd-verdict {"yes" if now.verdict == "faster" else "no"}">{verdict}</div>')

    text.show("decode", values={"v5": shown.number(s, VERIFY), "source": SOURCE, "beta": f"{BETA:g}"})
    point = (5, VERIFY.value)
    show_figure(viz.verify_cost_figure(beta, MAX_GAMMA, point, fig_text), "fig_cost_verify", theme=None)
    caption = s("verify_caption", source=SOURCE, tokens=5, cost=f"{VERIFY.value:.2f}", beta=f"{BETA:g}")
    st.caption(" ".join(x for x in (caption, shown.why(s, VERIFY)) if x))
    _step()

    text.show("expected")
    claims = check_claims(SEED_CLAIMS, c, verify_cost)
    tokens_fig = viz.expected_tokens_figure(ALPHA_LINES, MAX_GAMMA, alpha, gamma, claims, fig_text)
    show_figure(tokens_fig, "fig_cost_tokens", theme=None)

    text.show("seed")
    columns = s["table"]
    rows = [
        {
            columns["alpha"]: f"{ch.alpha:g}",
            columns["gamma"]: ch.gamma,
            columns["claimed"]: f"{ch.claimed:.1f}",
            columns["computed"]: f"{ch.computed:.2f}",
            columns["status"]: s["table_ok"] if ch.matches else s["table_wrong"],
            columns["speedup"]: f"{ch.speedup:.2f}×",
        }
        for ch in claims
    ]
    st.dataframe(rows, hide_index=True)
    wrong = [ch for ch in claims if not ch.matches]
    st.caption(
        s(
            "table_caption",
            n=len(wrong),
            rows="; ".join(
                s("table_row", alpha=ch.alpha, gamma=ch.gamma, claimed=ch.claimed, computed=ch.computed)
                for ch in wrong
            ),
        )
    )

    text.show("speedup")
    g1, g2 = st.columns(2)
    show_figure(
        viz.speedup_gamma_figure(alpha, c, verify_cost, gamma, MAX_GAMMA, fig_text),
        "fig_cost_gamma",
        where=g1,
        theme=None,
    )
    show_figure(
        viz.speedup_alpha_figure(gamma, c, verify_cost, alpha, MAX_GAMMA, fig_text),
        "fig_cost_alpha",
        where=g2,
        theme=None,
    )
    show_figure(
        speedup_maps.speedup_heatmap(c, verify_cost, MAX_GAMMA, alpha, gamma, fig_text),
        "fig_cost_heatmap",
        theme=None,
    )
    st.caption(s["heatmap_caption"])

    _measured_text()
    drafts = [(s[f"presets_short.{k}"], a, cost) for k, (a, cost) in MEASURED_DRAFTS.items()]
    show_figure(
        speedup_maps.drafts_map_figure(drafts, verify_cost, MAX_GAMMA, alpha, c, fig_text),
        "fig_cost_drafts_map",
        theme=None,
    )
    st.caption(s("map_caption", source=SOURCE))


def _measured_text() -> None:
    """The measured drafts' table and the bf16 copy's story, from this machine's costs."""
    text.show("measured", values=shown.course_values(s, COSTS))


def _step() -> None:
    """Where this machine's decode step goes: reading the weights, and everything else."""
    split = step_split(COSTS)
    if split is None:
        st.info(s["step_none"])
        return
    values = {
        "step_ms": f"{split.step_ms:.1f}",
        "source": SOURCE,
        "weight_mb": f"{split.weight_mb:.0f}",
        "bandwidth": f"{split.bandwidth_gbs:.1f}",
        "floor_ms": f"{split.floor_ms:.1f}",
        "rest_ms": f"{split.rest_ms:.1f}",
        "rest_share": f"{split.rest_share:.0%}",
        "h100_floor_ms": f"{split.gpu_floor_ms:.2f}",
        "gpu_bandwidth": f"{split.gpu_bandwidth_gbs:,.0f}",
        "threads": str(split.threads),
    }
    text.show("step", values=values)


lesson_body(_lesson)

text.show("gamma")
quiz(s)
