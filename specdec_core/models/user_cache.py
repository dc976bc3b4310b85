"""The user's cache folder, where the shipped models' safetensors, token counts and the kernel
choice are kept (torch-free, so every layer of ``models`` can name it)."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache folder.
CACHE_ENV = "SPECDEC_CACHE_DIR"


def cache_root() -> Path:
    """``$SPECDEC_CACHE_DIR`` or ``~/.cache/specdec-studio``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "specdec-studio"
