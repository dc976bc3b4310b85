"""Spec-Bench's questions on the Compare page: upload its question.jsonl, choose the sample's
seed, see the questions the grid will run (escaped), and keep the sample for the grid."""

from __future__ import annotations

import streamlit as st

from pages.common import form
from pages.common.compare_form import CompareForm
from pages.compare_parts.run import SAMPLE_KEY
from specdec_core.live.spec_bench import QuestionFileError, read_questions, sample
from specdec_core.viz.escape import md

PREVIEW_CHARS = 300


def short(text: str) -> str:
    """A question cut for the preview (Spec-Bench's summarisation questions hold whole articles)."""
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"


def questions_panel(s, names: dict[str, str], f: CompareForm) -> None:
    """The upload and its sample: kept under :data:`SAMPLE_KEY` for the grid, cleared when the
    file is removed or cannot be read (the message names the line at fault)."""
    ss = st.session_state
    upload = st.file_uploader(
        s["questions"], type=["jsonl", "json"], key="cmp_qfile", help=s["questions_help"]
    )
    ss.pop(SAMPLE_KEY, None)
    if upload is None:
        return
    form.number(st, f.qseed, s["question_seed"])
    try:
        found = read_questions(upload.getvalue())
    except QuestionFileError as exc:
        st.error(s("questions_error", name=md(upload.name), message=md(exc)), icon=":material/error:")
        return
    picked = sample(found, int(form.value(f.n)), int(form.value(f.qseed)))
    ss[SAMPLE_KEY] = picked
    counts = ", ".join(f"{names[c]} {n}" for c, n in picked.counts.items())
    st.caption(s("questions_loaded", name=md(upload.name), n=len(found), counts=counts))
    with st.expander(s["questions_preview"]):
        for (c, prompts), (_, ids) in zip(picked.own_prompts, picked.questions, strict=True):
            lines = [
                f"- {md(qid)} ({md(cat)}): {md(short(p))}" for p, (qid, cat) in zip(prompts, ids, strict=True)
            ]
            st.markdown(f"**{names[c]}**\n\n" + "\n".join(lines))
