"""The generated text as coloured spans: one per token, with what happened to it.

A speculative round reads, left to right: its accepted drafts, then either a bonus token
(all drafts stood) or the rejected draft followed by its corrected token, shown where the
draft was proposed. Drafts after a rejection were never examined ("void"); they are
included only on request. Target-only runs give one "target" span per token, and so does a
round whose draft proposed nothing (an n-gram without a match): the engine calls that
token "bonus", but it is a plain target step, and it is shown as one.

Byte-level tokenizers split a Chinese character (3 UTF-8 bytes) over several tokens, whose
display texts are then ``\\xNN`` escapes. :func:`readable` reads the text's tokens in order
and gives each the characters it completes, so the text reads as text while every token
keeps its own chip and colour.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass

from specdec_core.engine import RoundEvent
from specdec_core.live.inspector import slot_kind

#: Span kinds: the token kinds plus "rejected" (a turned-down draft) and "void".
SPAN_KINDS: tuple[str, ...] = ("accepted", "rejected", "corrected", "bonus", "target", "void")


@dataclass(frozen=True)
class TokenSpan:
    """One shown token: id, kind, its round and position there, and the exact numbers known.

    ``q`` / ``p`` are q(x) and p(x) of a draft token (p(x) alone for a bonus or target
    token when its row lists it), ``accept_prob`` = min(1, p/q) for an examined draft.
    """

    token: int
    kind: str
    round: int
    slot: int
    q: float | None = None
    p: float | None = None
    accept_prob: float | None = None


def spans(events: Sequence[RoundEvent], show_void: bool = False) -> list[TokenSpan]:
    """The spans of a run's text, in reading order."""
    out: list[TokenSpan] = []
    for e in events:
        for i, (token, kind) in enumerate(zip(e.committed, e.kinds, strict=True)):
            if kind in ("accepted", "corrected") and i < len(e.draft_tokens):
                draft = TokenSpan(
                    int(e.draft_tokens[i]),
                    "rejected" if kind == "corrected" else "accepted",
                    e.index,
                    i,
                    e.draft_q[i],
                    e.draft_p[i],
                    e.acceptance_probs[i] if i < len(e.acceptance_probs) else None,
                )
                out.append(draft)
                if kind == "accepted":
                    continue
            p = e.p_rows[i].prob(token) if i < len(e.p_rows) else None
            out.append(TokenSpan(int(token), slot_kind(e, i), e.index, i, p=p))
            if kind == "corrected" and show_void:
                out.extend(
                    TokenSpan(int(t), "void", e.index, j) for j, t in enumerate(e.draft_tokens) if j > i
                )
    return out


def counts(items: Sequence[TokenSpan]) -> dict[str, int]:
    """How many spans of each kind."""
    out = dict.fromkeys(SPAN_KINDS, 0)
    for s in items:
        out[s.kind] += 1
    return out


#: What ``bytes.decode(errors="backslashreplace")`` writes for a byte that is not UTF-8: always
#: ≥ 0x80 (ASCII bytes are valid UTF-8) and in lower-case hex. A token whose text is literally
#: ``\x41`` (or ``\xE4``) is therefore text, never a byte.
_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def token_bytes(text: str) -> bytes:
    """The bytes of a token's display text, its ``\\xNN`` byte escapes (NN ≥ 80) turned back into bytes."""
    out = bytearray()
    last = 0
    for m in _BYTE.finditer(text):
        out += text[last : m.start()].encode("utf-8")
        out.append(int(m.group(1), 16))
        last = m.end()
    out += text[last:].encode("utf-8")
    return bytes(out)


def readable(texts: Sequence[str], in_text: Sequence[bool]) -> list[str | None]:
    """What each token shows: the characters it completes, None for a piece of a character
    that a later token completes. Tokens not ``in_text`` (rejected or void drafts) are read
    on their own; bytes still incomplete at the end are shown as escapes on the last token."""
    decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
    out: list[str | None] = []
    last = None
    for text, inside in zip(texts, in_text, strict=True):
        raw = token_bytes(text)
        if not inside:
            out.append(raw.decode("utf-8", "backslashreplace"))
            continue
        shown = decoder.decode(raw)
        out.append(shown if shown or not raw else None)
        last = len(out) - 1
    tail = decoder.decode(b"", final=True)
    if tail and last is not None:
        out[last] = (out[last] or "") + tail
    return out
