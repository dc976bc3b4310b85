"""Plotly figure builders. Each takes plain data (arrays, dataclasses from specdec_core)
and its display text, and returns a ``plotly.graph_objects.Figure``.

Text comes only from the caller: pages pass the strings of the session language from
lessons/<lang>/<page>.toml (see :mod:`specdec_core.viz.strings`); colours come only from
:mod:`specdec_core.viz.palette`. Each module lists the keys its builders read in ``KEYS``, and
escapes token text before plotly (which reads HTML in text) sees it.
"""
