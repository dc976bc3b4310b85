"""Benchmarks that print figures (run from the repository root: ``python -m bench.<name>``).

Their figures are recorded in bench/RESULTS.md; tests never time anything.
"""

from specdec_core.models.omp import prefer_passive_wait

# every `python -m bench.<name>` imports this package first, before its main loads torch
prefer_passive_wait()
