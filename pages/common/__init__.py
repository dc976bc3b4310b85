"""Streamlit glue that several pages share (widgets and layout only; the maths is in specdec_core).

Every page: ``page`` (start: language, style, strings, lesson, title), ``i18n``, ``lesson``,
``urlstate``, ``quiz``, ``nav`` (the course map). Lessons 2 and 3: ``pair_input`` (the
editable p/q pair). The live-model pages: ``models`` (loaded once per process, and the
process's run service), ``model_form`` and ``service_run`` (a Start / Stop whose job the run
service runs while a fragment watches it). A page's own parts sit beside it, in ``pages/<page>_parts/``.

Each page calls :func:`pages.common.page.start` first, so it works the same whether
``app.py`` ran before it in this rerun or not (AppTest runs pages alone after the first run).
"""
