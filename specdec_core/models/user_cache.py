"""The user's cache folder, where the shipped models' safetensors, token counts and the kernel
choice are kept, and the CPU model that keys the machine's files in it (torch-free, so every
layer of ``models`` can name it)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: Environment variable naming the cache folder.
CACHE_ENV = "SPECDEC_CACHE_DIR"


def cache_root() -> Path:
    """``$SPECDEC_CACHE_DIR`` or ``~/.cache/specdec-studio``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "specdec-studio"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"
