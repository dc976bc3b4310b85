"""Plotly figure builders. Each takes plain data (arrays, dataclasses from specdec_core)
and optional display text, and returns a ``plotly.graph_objects.Figure``.

Text arguments default to English; pages pass the strings of the session language.
"""
