"""Every ``python -m bench.<name>`` passes through bench/__init__.py, which chooses OpenMP's wait
policy before the bench loads torch (specdec_core/models/omp.py says why)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_package_lets_openmp_threads_sleep_before_torch_loads():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    code = "import os, sys, bench; print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["PASSIVE", "False"]
