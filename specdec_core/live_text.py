"""The generated text as coloured spans: one per token, with what happened to it.

A speculative round reads, left to right: its accepted drafts, then either a bonus token
(all drafts stood) or the rejected draft followed by its corrected token, shown where the
draft was proposed. Drafts after a rejection were never examined ("void"); they are
included only on request. Target-only runs give one "target" span per token, and so does a
round whose draft proposed nothing (an n-gram without a match): the engine calls that
token "bonus", but it is a plain target step, and it is shown as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specdec_core.engine import RoundEvent

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
            shown = "target" if kind == "bonus" and not e.draft_tokens else kind
            out.append(TokenSpan(int(token), shown, e.index, i, p=p))
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
