"""Streamlit glue for the pages (widgets and layout only; the maths is in specdec_core).

Shared by every page: ``page`` (start: language, style, strings, lesson, title), ``i18n``,
``lesson``, ``urlstate``, ``quiz``, ``nav`` (the course map). Shared by lessons 2 and 3:
``pair_input`` (the editable p/q pair). Shared by the live pages: ``models`` (load once per
process), ``jobs`` (runs that survive Stop and reruns), ``model_form``; the live page's own
parts are ``live_*``, the draft race's view is ``race_view``.

Each page calls :func:`pages.common.page.start` first, so it works the same whether
``app.py`` ran before it in this rerun or not (AppTest runs pages alone after the first run).
"""
