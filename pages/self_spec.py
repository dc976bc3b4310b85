"""Lesson: self-speculation — early exit, LayerSkip, Medusa, EAGLE, MTP, and the shipped head."""

import streamlit as st

from pages.common import profile as shown
from pages.common.figure import show_figure
from pages.common.page import start
from pages.common.quiz import quiz
from specdec_core.course.cards import head_card, medusa_card
from specdec_core.course.self_spec import WORKED_HEAD, draft_rows, early_exit, head_calibration
from specdec_core.live.profile_quotes import course_costs
from specdec_core.viz import self_spec as viz

s, text = start("self_spec")
fig_text = s["fig"]
exits = early_exit()
card = head_card()
medusa = medusa_card()
#: The drafts' and the verification's costs: this machine's profile, else the memory-bound
#: reference (read at each run: a model loaded since may have measured them).
COSTS = course_costs()
BETA = COSTS.beta().value
SOURCE = shown.source(s, COSTS)
VALUES = shown.course_values(s, COSTS)

text.show("intro", values=VALUES)
text.show("early_exit")
if exits is None:
    st.info(s["early_exit_missing"])
else:
    head_first = card.greedy_by_depth[0] if card is not None and card.greedy_by_depth else None
    show_figure(
        viz.early_exit_figure(
            exits.depths, exits.greedy, exits.alpha_t1, exits.alpha_t07, head_first, fig_text
        ),
        "fig_spec_early_exit",
        theme=None,
    )
    st.caption(s("early_exit_caption", positions=exits.positions, source=exits.source))
text.show("early_exit_after", values=VALUES)
text.show("first_layers")
text.show("medusa")
if medusa is None:
    st.info(s["medusa_missing"])
elif medusa.greedy_by_head and card is not None:
    show_figure(
        viz.medusa_figure(
            medusa.greedy_by_head, medusa.chain_by_head, medusa.top3_by_head, card.greedy_by_depth, fig_text
        ),
        "fig_spec_medusa",
        theme=None,
    )
    st.caption(
        s(
            "medusa_caption",
            heads=medusa.heads,
            parameters=medusa.parameters / 1e6,
            minutes=medusa.train_minutes,
            positions=medusa.positions,
            accepted=medusa.accepted_per_round,
            eagle_accepted=card.accepted_per_round,
            cost=f"{medusa.cost_ratio:.3f}" if medusa.cost_ratio is not None else s["m_none"],
            chain=f"{medusa.bench_chat:.2f}×" if medusa.bench_chat is not None else s["m_none"],
            tree=f"{medusa.bench_tree_chat:.2f}×" if medusa.bench_tree_chat is not None else s["m_none"],
        )
    )
    text.show("medusa_after")
text.show("eagle")
calibration = head_calibration()
if calibration is None:
    st.info(s["calibration_missing"])
else:
    show_figure(
        viz.calibration_figure(
            calibration.confidence_by_depth[:3], calibration.agreement_by_depth[:3], fig_text
        ),
        "fig_spec_calibration",
        theme=None,
    )
    st.caption(
        s(
            "calibration_caption",
            positions=calibration.positions,
            no_floor=calibration.tokens_per_step_no_floor,
            with_floor=calibration.tokens_per_step_floor,
            floor=calibration.floor,
        )
    )
text.show("mtp")
text.show("distillation")
text.show("shipped")

if card is None:
    st.info(s["head_missing"])
else:
    none = s["m_none"]
    m = st.columns(4)
    m[0].metric(s["m_alpha"], f"{card.greedy_gamma4:.2f}", help=s["m_alpha_help"])
    m[1].metric(s["m_alpha07"], f"{card.alpha_gamma4:.2f}", help=s["m_alpha07_help"])
    m[2].metric(
        s["m_cost"], f"{card.cost_ratio:.3f}" if card.cost_ratio is not None else none, help=s["m_cost_help"]
    )
    m[3].metric(
        s["m_bench"],
        f"{card.bench_chat:.2f}×" if card.bench_chat is not None else none,
        help=s["m_bench_help"],
    )
    st.caption(
        s(
            "training_note",
            parameters=card.parameters / 1e6,
            steps=card.steps,
            minutes=card.train_minutes,
            positions=card.train_positions,
        )
    )
    if card.greedy_by_depth:
        show_figure(
            viz.head_depth_figure(card.greedy_by_depth, card.alpha_by_depth, fig_text),
            "fig_spec_head_depth",
            theme=None,
        )
        st.caption(
            s(
                "head_depth_caption",
                greedy_positions=card.greedy_positions,
                sampled_positions=card.sampled_positions,
                accepted=card.accepted_per_round,
            )
        )
    rows = draft_rows(lambda draft: COSTS.draft_c(draft).value, BETA)
    names = s["names"]
    show_figure(
        viz.drafts_figure(
            [names[r.key] for r in rows],
            [r.alpha for r in rows],
            [r.cost for r in rows],
            [r.predicted for r in rows],
            names["head"],
            fig_text,
        ),
        "fig_spec_drafts",
        theme=None,
    )
    st.caption(s("drafts_caption", source=SOURCE))

text.show("where")
text.show("worked", values=VALUES | shown.round_values("head", *WORKED_HEAD, BETA))
text.show("sources")
quiz(s)
