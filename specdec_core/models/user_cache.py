"""The user's cache folder, where the shipped models' safetensors, token counts and the kernel
choice are kept, and the files kept per machine there (torch-free, so every layer of ``models``
can name it)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import threading
from pathlib import Path
from typing import Any

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


def machine_file(folder: Path, machine: dict[str, Any]) -> Path:
    """The JSON file in `folder` for the machine key `machine` (named by its digest)."""
    digest = hashlib.sha1(json.dumps(machine, sort_keys=True).encode()).hexdigest()[:16]
    return folder / f"{digest}.json"


def read_machine_file(path: Path, machine: dict[str, Any]) -> dict[str, Any]:
    """The object kept in `path` when it was written for `machine`, else ``{"machine": machine}``."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = None
    return data if isinstance(data, dict) and data.get("machine") == machine else {"machine": machine}


def write_machine_file(path: Path, data: dict[str, Any]) -> None:
    """Keep `data` in `path`, replaced whole; in a read-only home nothing is kept (measured again)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass
