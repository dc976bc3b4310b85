"""Display text of single tokens: the raw piece each id stands for, spaces and newlines kept.

Byte-level BPE tokenizers (GPT-2, Llama 3, SmolLM2 …) store pieces as printable stand-ins
for bytes ("Ġworld" = " world", "Ċ" = newline). A token can hold part of a multi-byte UTF-8
character; such bytes are shown as ``\\xNN`` escapes instead of a replacement character.
SentencePiece pieces ("▁world", "<0x0A>") are handled too. The UI escapes HTML itself.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

_SP_BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


@functools.cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character → byte table, inverted."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def _is_byte_level(tokenizer: Any) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    try:
        decoder = json.loads(backend.to_str()).get("decoder") or {}
    except (ValueError, AttributeError):
        return False
    kinds = [decoder.get("type")] + [d.get("type") for d in decoder.get("decoders", []) or []]
    return "ByteLevel" in kinds


class TokenTexts:
    """Cached id → display text for one tokenizer."""

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self._byte_level = _is_byte_level(tokenizer)
        self._special = set(getattr(tokenizer, "all_special_ids", []) or [])
        self._special |= set(getattr(tokenizer, "added_tokens_decoder", {}) or {})
        self._cache: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        token_id = int(token_id)
        text = self._cache.get(token_id)
        if text is None:
            text = self._compute(token_id)
            self._cache[token_id] = text
        return text

    def _compute(self, token_id: int) -> str:
        piece = self._tok.convert_ids_to_tokens(token_id)
        if piece is None:
            return f"<id {token_id}>"
        if token_id in self._special:
            return str(piece)
        if self._byte_level:
            table = _byte_decoder()
            if all(ch in table for ch in piece):
                raw = bytes(table[ch] for ch in piece)
                return raw.decode("utf-8", errors="backslashreplace")
        m = _SP_BYTE.match(piece)
        if m:
            return bytes([int(m.group(1), 16)]).decode("utf-8", errors="backslashreplace")
        if "▁" in piece:
            return piece.replace("▁", " ")
        return self._tok.decode([token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False)
