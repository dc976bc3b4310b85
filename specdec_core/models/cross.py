"""A draft over another vocabulary, run as a draft in the target's (``CrossVocabularyDraft``).

The wrapper's sessions take and return target token ids. Behind them the draft reads the
same text in its own tokens: ``to_draft(target_ids)`` spells target tokens in the draft's
vocabulary, and each logit row is ``log(verify.project(softmax(draft row), to_target, V))``
(−inf off the image), so the draft proposes only target tokens with a twin and samples from
exactly the law the target verifies against (the engine processes and samples these rows
like any draft's). Verification is exact for any law the draft samples from, so the output
law stays the target's; the twins only decide how often drafts are accepted.

Appending text can change the draft's last tokens (a merge across the join), so the
wrapper re-spells only an unstable tail: from the latest settled split (a place where
spelling the two sides apart gives the same tokens as spelling them together, checked with
``lookback`` target tokens after it), and keeps the draft's cache for the common prefix of
the old and the new spelling. With ``to_draft=None`` the draft reads the target ids as they are (a
head cut down to some target tokens: see :mod:`.reduced`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from specdec_core.models.base import LanguageModel
from specdec_core.models.compat import TokenizerMismatchError
from specdec_core.vocab_projection import check_vocabulary_map, project_unchecked

#: Target tokens that must follow a clean split (spelled together and apart alike) before the
#: draft's spelling up to it counts as settled.
LOOKBACK = 8
#: Earlier positions a read re-checks when the newest candidate split is not clean.
_RETRIES = 4


class CrossVocabularyDraft:
    """`draft` (a model over its own vocabulary) as a draft over the target's `target_vocab_size` ids.

    `to_target` maps each draft logit to its target twin (−1: none); `to_draft` spells target
    ids in the draft's input ids (None: the same ids). `start_ids` open every spelling (the
    draft's BOS where its tokenizer adds one); `fallback_id` is read when the spelling is
    empty. Attributes a UI can use: ``draft``, ``to_target``, ``to_draft``, ``name``.
    """

    def __init__(
        self,
        draft: LanguageModel,
        to_target: Sequence[int] | np.ndarray,
        to_draft: Callable[[Sequence[int]], list[int]] | None,
        target_vocab_size: int,
        *,
        start_ids: Sequence[int] = (),
        fallback_id: int | None = None,
        lookback: int = LOOKBACK,
        name: str | None = None,
    ) -> None:
        ids = check_vocabulary_map(to_target, target_vocab_size)
        if ids.size != draft.vocab_size:
            raise ValueError(
                f"to_target must map each of the draft's {draft.vocab_size} logits, got {ids.size} entries."
            )
        if not np.any(ids >= 0):
            raise TokenizerMismatchError(
                "no draft token has a twin in the target's vocabulary: nothing it drafts could be checked."
            )
        if isinstance(lookback, bool) or not isinstance(lookback, int) or lookback < 0:
            raise ValueError(f"lookback must be a whole number ≥ 0, got {lookback!r}.")
        self.draft = draft
        self.to_target = ids
        #: draft logits with a twin, their twins, and whether no two share one
        self.mapped = np.flatnonzero(ids >= 0)
        self.twins = ids[self.mapped]
        self.one_to_one = np.unique(self.twins).size == self.twins.size
        self.to_draft = to_draft
        self.start_ids = [int(t) for t in start_ids]
        self.fallback_id = fallback_id
        self.lookback = lookback
        self.name = name if name is not None else getattr(draft, "name", "draft")
        self._vocab = int(target_vocab_size)

    # -- the LanguageModel protocol --------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self._vocab

    @property
    def eos_token_id(self) -> int | None:
        """The engine stops on the target's EOS; the draft's own has no say."""
        return None

    def session(self, prompt_ids: Sequence[int]) -> CrossVocabularySession:
        return CrossVocabularySession(self, prompt_ids)

    # -- what the engine reads from a draft, forwarded ---------------------------------------
    @property
    def module(self) -> Any:
        """The draft's network (the engine's cost estimate reads its weights)."""
        return getattr(self.draft, "module", None)

    @property
    def num_layers(self) -> int:
        return int(getattr(self.draft, "num_layers", 0) or 0)

    @property
    def step_seconds(self) -> float | None:
        """The draft model's decode step timed at load (the engine's measured cost reads it)."""
        return getattr(self.draft, "step_seconds", None)

    @property
    def confidence_floor(self) -> float:
        return float(getattr(self.draft, "confidence_floor", 0.0) or 0.0)

    def pieces(self, target_ids: Sequence[int]) -> list[list[int]]:
        """The draft's own ids spelling each target token on its own (for display: a target
        token the draft spells with several pieces, or with none)."""
        if self.to_draft is None:
            return [[int(t)] for t in target_ids]
        return [[int(d) for d in self.to_draft([int(t)])] for t in target_ids]

    def twin(self, draft_id: int) -> int | None:
        """The target twin of a draft token (None: it has none and is never proposed)."""
        j = int(self.to_target[int(draft_id)])
        return j if j >= 0 else None

    def __repr__(self) -> str:
        return f"CrossVocabularyDraft({self.name!r}, {self.draft.vocab_size} → {self._vocab} tokens)"


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - np.max(z))
    return e / e.sum()


def _as_float64_row(rows: Any) -> np.ndarray:
    """The last logit row of a session's output (torch or numpy) as float64 numpy."""
    if hasattr(rows, "detach"):  # a torch tensor, read without importing torch
        rows = rows[-1].detach().to("cpu").double().numpy()
    return np.asarray(rows, dtype=np.float64).reshape(-1, np.shape(rows)[-1])[-1]


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class CrossVocabularySession:
    """A context in target ids; the draft's session holds its spelling (implements ``Session``)."""

    def __init__(self, model: CrossVocabularyDraft, prompt_ids: Sequence[int]) -> None:
        self.model = model
        self.ids: list[int] = [int(t) for t in prompt_ids]
        #: settled clean splits of the current spelling: (target prefix length, draft prefix
        #: length, context length when checked), each checked with ≥ lookback tokens after it
        self._marks: list[tuple[int, int, int]] = [(0, len(model.start_ids), 0)]
        self._spell: list[int] = list(model.start_ids)
        #: draft ids the draft's session holds, and the row after them (None: not computed)
        self._fed: list[int] = []
        self._row: np.ndarray | None = None
        self._tree_start = 0
        spelled = self._spelling()
        self.inner = model.draft.session(spelled[:-1])
        self._fed = spelled[:-1]
        bind = getattr(self.inner, "bind_target", None)
        if bind is not None:  # a trained head reads the target's features (same ids only)
            self.bind_target = bind

    @property
    def length(self) -> int:
        return len(self.ids)

    @property
    def spelling(self) -> list[int]:
        """The draft's own ids for the context (what its cache holds once a row is read)."""
        return list(self._spelling())

    # -- spelling ----------------------------------------------------------------------------
    def _spelling(self) -> list[int]:
        """The draft's ids for ``self.ids``: the settled prefix kept, the unstable tail re-spelled."""
        m = self.model
        if m.to_draft is None:
            return list(self.ids)
        n = len(self.ids)
        a, d, _ = self._marks[-1]
        tail = [int(t) for t in m.to_draft(self.ids[a:n])] if n > a else []
        spell = self._spell[:d] + tail
        for j in range(n - m.lookback, max(a, n - m.lookback - _RETRIES - 1), -1):  # the latest first
            head = [int(t) for t in m.to_draft(self.ids[a:j])]
            if tail[: len(head)] == head and [int(t) for t in m.to_draft(self.ids[j:n])] == tail[len(head) :]:
                self._marks.append((j, d + len(head), n))
                break
        self._spell = spell
        return spell

    def _sync(self) -> np.ndarray:
        """Bring the draft's session to the current spelling; the draft's logit row after it."""
        spell = self._spelling()
        if not spell:
            if self.model.fallback_id is None:
                raise ValueError("the draft has no token to read: give the prompt some text.")
            spell = [int(self.model.fallback_id)]
        keep = _common_prefix(self._fed, spell)
        if keep == len(spell) == len(self._fed) and self._row is not None:
            return self._row
        keep = min(keep, len(spell) - 1)
        if keep < self.inner.length:
            self.inner.truncate(keep)
        feed = spell[keep:]
        fast = getattr(self.inner, "logits", None)
        out = fast(feed, last_only=True) if fast is not None else self.inner.extend(feed)
        self._fed = list(spell)
        self._row = _as_float64_row(out)
        return self._row

    def _projected(self) -> np.ndarray:
        return self._project(self._sync())

    def _project(self, z: np.ndarray) -> np.ndarray:
        """log of ``verify.project`` of the draft's law in one logit row (−inf off the image).

        Where each target token has at most one twin this is the draft's log-softmax over
        its mapped logits, written at their twins (no pass over a large target vocabulary
        beyond filling the row)."""
        m = self.model
        if not m.one_to_one:
            r = project_unchecked(_softmax(z), m.to_target, m.vocab_size)
            with np.errstate(divide="ignore"):
                return np.log(r)
        zs = z[m.mapped]
        top = np.max(zs)
        if not np.isfinite(top):
            raise ValueError(
                "q (draft) puts no mass on tokens the target has: there is nothing it may propose."
            )
        out = np.full(m.vocab_size, -np.inf)
        out[m.twins] = zs - (top + np.log(np.sum(np.exp(zs - top))))
        return out

    # -- the Session protocol ----------------------------------------------------------------
    def extend(self, token_ids: Sequence[int]) -> np.ndarray:
        """Feed target ids; one row per id: the log of the draft's projected law after it."""
        return self.logits(token_ids)

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> np.ndarray:
        """:meth:`extend` as the engine's fast path calls it (only the last row when asked)."""
        ids = [int(t) for t in token_ids]
        if not ids:
            raise ValueError("extend needs at least one token.")
        bad = [t for t in ids if not 0 <= t < self.model.vocab_size]
        if bad:
            raise ValueError(f"token {bad[0]} is outside the vocabulary 0 … {self.model.vocab_size - 1}.")
        if last_only:
            self.ids.extend(ids)
            return self._projected()[None]
        rows = []
        for t in ids:
            self.ids.append(t)
            rows.append(self._projected())
        return np.stack(rows)

    def truncate(self, length: int) -> None:
        """Roll the context back to its first `length` target tokens (the draft's cache follows
        at the next read, kept for the common prefix of the two spellings)."""
        if not 0 <= length <= len(self.ids):
            raise ValueError(f"cannot truncate a context of {len(self.ids)} tokens to {length}.")
        del self.ids[length:]
        self._marks = [mark for mark in self._marks if mark[2] <= length]  # checked on kept text only

    # -- tree drafts: only where the draft reads the target's ids (a reduced head) --------------
    def extend_tree(self, token_ids: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """Feed tree nodes (``token_tree.TreeSegment`` parents) in one tree forward of the draft;
        one projected row per node. Only for a draft that reads the target's ids."""
        if self.model.to_draft is not None:
            raise ValueError("a draft over another tokenizer drafts chains only: leave the tree out.")
        ids = [int(t) for t in token_ids]
        if parents and parents[0] == -1:
            keep = _common_prefix(self._fed, self.ids)  # the draft's cache holds the context first
            if keep < self.inner.length:
                self.inner.truncate(keep)
            if keep < len(self.ids):
                self.inner.extend(self.ids[keep:])
            self._tree_start = len(self.ids)
        rows = np.asarray(self.inner.extend_tree(ids, parents), dtype=np.float64)
        self.ids.extend(ids)
        self._fed, self._row = list(self.ids), None
        return np.stack([self._project(z) for z in rows])

    def compact(self, keep: Sequence[int]) -> None:
        """Keep the context and the tree path `keep` (tree indices, root first)."""
        self.inner.compact(keep)
        start = self._tree_start
        self.ids = self.ids[:start] + [self.ids[start + int(k)] for k in keep]
        self._fed, self._row = list(self.ids), None
