"""Benchmarks that print figures (run from the repository root: ``python -m bench.<name>``).

Their figures are recorded in bench/RESULTS.md; tests never time anything.
"""
