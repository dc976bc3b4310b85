"""Tokenizers across families: one text split by SmolLM2 and by Gemma, the tokens with a twin,
what naive speculation across them reads, and one real position through the intersection rule."""

from __future__ import annotations

from html import escape
from typing import Any

import streamlit as st

from pages.common import form
from pages.common.form import Form
from pages.common.models import access, shelf
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.service_run import ServiceRun, show_status
from pages.common.urlstate import mirror, text_param
from specdec_core.live.tokenizer_view import NextTokenJob, Piece, misread, overlap, split
from specdec_core.models import catalog
from specdec_core.models.bundled import GEMMA, SMOLLM2, load_tokenizer
from specdec_core.viz.escape import md


class TokenizersForm(Form):
    """The page's one setting: the sentence both tokenizers split."""

    prefix = "tok"
    text = text_param("Speculative decoding keeps the target's output distribution exactly.", 400)


FORM = TokenizersForm()


@st.cache_resource(show_spinner=False)
def _tokenizers() -> tuple[Any, Any]:
    return load_tokenizer(SMOLLM2), load_tokenizer(GEMMA)


def _chips(pieces: list[Piece], no_twin: str) -> str:
    spans = []
    for piece in pieces:
        cls = "sd-tok" if piece.twin else "sd-tok sd-tok-alone"
        title = "" if piece.twin else f' title="{escape(no_twin)}"'
        spans.append(f'<span class="{cls}"{title}>{escape(piece.text).replace(" ", "␣")}</span>')
    return "<div class='sd-toks'>" + "".join(spans) + "</div>"


s, text = start("tokenizers", params=FORM.params())
text.show("intro")
sentence = form.text(st, FORM.text, s["sentence"])
mirror(FORM.params())
try:
    with st.spinner(s["loading"]):
        smol, gemma = _tokenizers()
except (OSError, ValueError) as exc:
    st.error(s("missing", detail=md(exc)))
    st.stop()

for name, tok, other in (("SmolLM2-135M", smol, gemma), ("Gemma-3-270M", gemma, smol)):
    pieces = split(tok, other, sentence)
    st.markdown(s("split_line", model=name, n=len(pieces)))
    st.html(_chips(pieces, s["no_twin"]))
shared = overlap(gemma, smol)
st.info(
    s("overlap", shared=shared.shared, draft=shared.draft_size, target=shared.target_size, share=shared.share)
)

text.show("mismatch")
st.code(misread(gemma, smol, sentence) or "∅", language=None)
st.caption(s["misread_caption"])
text.show("intersection")

measure = ServiceRun(
    "tok",
    lambda: NextTokenJob(sentence, *catalog.cross_pair(), shelf(), access()),
    show_status,
    lambda result: st.session_state.__setitem__("_tok_next", result),
)
measure.panel(s["measure"], "tok_measure", ":material/science:")
measured = st.session_state.get("_tok_next")
if measured is not None and measured[0] == sentence:
    result = measured[1]
    st.markdown(s("measured", coverage=result.coverage, alpha=result.alpha, image=result.image_mass))
    st.table({s["col_token"]: [md(t) for t, _, _ in result.top], "p": [f"{p:.4f}" for _, p, _ in result.top],
              s["col_q"]: [f"{q:.4f}" for _, _, q in result.top]})  # fmt: skip
text.show("cost")
text.show("frspec")
quiz(s)
text.show("sources")
