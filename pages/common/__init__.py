"""Streamlit glue shared by every page: language, lesson text, URL state, quizzes, style.

Each page calls :func:`pages.common.page.start` first, so a page works the same whether
``app.py`` ran before it in this rerun or not (AppTest runs pages alone after the first run).
"""
