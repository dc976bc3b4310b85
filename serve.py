"""Serve the app warm: ``streamlit run serve.py`` serves app.py as ``streamlit run app.py`` does.

Streamlit runs a page's script only when a browser opens it, so on a fresh server the first
visitor would wait for everything app.py and the first page import (Streamlit's elements,
pandas, the pages' shared modules, the core, the database layer) and read. ``st.App``, Streamlit's
public ASGI entry point, takes a ``lifespan`` that runs before the server accepts a connection:
it does that work there, once per process, so the first visit finds it in memory.
"""

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st

#: The page a first visit opens (app.py's default page).
FIRST_PAGE = "home"
#: What app.py and the first page import: Streamlit's elements come with the pages' modules,
#: the run service and the database layer with ``pages.common.models``.
WARMED = ("pandas", "pages.common.i18n", "pages.common.lesson", "pages.common.models", "pages.common.page")


def warm() -> None:
    """Import :data:`WARMED` and read the first page's strings and lesson in every language (all
    kept for the process: modules, ``functools.cache``)."""
    from specdec_core.models.omp import prefer_passive_wait

    prefer_passive_wait()  # as app.py: before anything loads torch
    for name in WARMED:
        importlib.import_module(name)
    from pages.common import lesson
    from pages.common.i18n import LANGUAGES, Strings

    for lang in LANGUAGES:
        Strings(FIRST_PAGE, lang)
        lesson._load(lang, FIRST_PAGE)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    warm()
    yield


app = st.App("app.py", lifespan=lifespan)
