"""SpecDec Studio: entry point. Navigation, language switch, projector mode, theme."""

from specdec_core.models.omp import prefer_passive_wait

prefer_passive_wait()  # first: libgomp reads its wait policy once, when torch loads (models/omp.py)

# plotly imports pandas lazily, from several session threads at once: imported whole here first
import pandas  # noqa: E402, F401
import streamlit as st  # noqa: E402

from pages.common.i18n import LANGUAGES, current_lang, strings  # noqa: E402
from pages.common.models import start_preload  # noqa: E402
from pages.common.nav import PAGES, SECTIONS  # noqa: E402
from pages.common.page import navigation  # noqa: E402
from pages.common.urlstate import redraw_controls  # noqa: E402

st.set_page_config(page_title="SpecDec Studio", page_icon=":material/bolt:", layout="wide")

start_preload()  # classroom mode: the teacher's models load from the first visit on
lang = current_lang()
s = strings("common")


def _switch_language() -> None:
    st.session_state["lang"] = st.session_state["_lang_widget"]
    redraw_controls()


st.session_state.setdefault("_lang_widget", lang)
with st.sidebar:
    st.radio(
        s["language"],
        options=list(LANGUAGES),
        format_func=LANGUAGES.__getitem__,
        key="_lang_widget",
        horizontal=True,
        on_change=_switch_language,
    )
    st.toggle(s["projector"], key="projector", help=s["projector_help"])

nav = navigation(
    {
        s[f"sections.{section}"]: [
            st.Page(p.file, title=s[f"nav.{p.key}.title"], icon=p.icon, default=p.key == "home")
            for p in PAGES
            if p.section == section
        ]
        for section in SECTIONS
    },
    expanded=True,  # every lesson in sight: a collapsed menu hides the last sections behind "View more"
)
nav.run()
