"""A live run as data: settings, prompt, token texts and events; saved as JSON, loaded back.

A ``LiveTrace`` holds everything the live page shows, so a run replays without any model:
the settings, the prompt and its ids, the names of the models, the display text of every
token id the events mention (committed, drafted, and the ids of the top-N rows), the
speculative run's events and, when it was run, the target-only baseline. :func:`to_json`
writes it (floats round-trip exactly); :func:`from_json` validates a file and raises
``TraceError`` with a plain message for anything that is not a well-formed trace.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from specdec_core.engine import KINDS, RoundEvent
from specdec_core.live.draft_pieces import META_KEY as PIECES_KEY
from specdec_core.live.draft_pieces import draft_pieces
from specdec_core.live.limits import MAX_TRACE_BYTES, MAX_UPLOAD_MB
from specdec_core.live.settings import LiveSettings
from specdec_core.live.token_tree_round import tree_problem

FORMAT = "specdec-studio/live-trace"
VERSION = 1
_PACKAGES = ("specdec-studio", "torch", "transformers", "numpy", "streamlit")


class TraceError(ValueError):
    """The file is not a trace this version can replay; the message says what is wrong."""


@dataclass(frozen=True)
class RunRecord:
    """One generation: its events, wall time (without waiting for models) and whether it was stopped."""

    events: list[RoundEvent]
    wall_s: float
    stopped: bool = False

    @property
    def tokens(self) -> list[int]:
        return [t for e in self.events for t in e.committed]

    @property
    def complete(self) -> bool:
        return bool(self.events) and self.events[-1].finished and not self.stopped


@dataclass(frozen=True)
class LiveTrace:
    """A speculative run (and optionally its target-only baseline) with all it needs for display."""

    settings: LiveSettings
    prompt: str
    prompt_ids: list[int]
    target_name: str
    draft_name: str
    vocab_size: int
    texts: dict[int, str]
    speculative: RunRecord
    baseline: RunRecord | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self, token: int) -> str:
        """Display text of a token id (raw, not HTML-escaped)."""
        return self.texts[int(token)]

    def replayed(self) -> LiveTrace:
        """The same trace, marked in its ``meta`` as loaded from a file."""
        return replace(self, meta={**self.meta, "replayed": True})


def referenced_ids(prompt_ids: Sequence[int], events: Iterable[RoundEvent]) -> set[int]:
    """Every token id a view of these events can show: prompt, drafts, commits and row ids."""
    ids = {int(t) for t in prompt_ids}
    for e in events:
        ids.update(int(t) for t in e.draft_tokens)
        ids.update(int(t) for t in e.committed)
        for row in (*e.p_rows, *e.q_rows):
            ids.update(int(t) for t in row.ids)
        if e.tree is not None:  # a tree round: every node is drawn
            ids.update(int(t) for t in e.tree["tokens"])
    return ids


def versions() -> dict[str, str]:
    """Versions of Python and the packages that produced a trace."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def build(
    settings: LiveSettings,
    prompt: str,
    prompt_ids: Sequence[int],
    target: Any,
    draft: Any,
    speculative: RunRecord,
    baseline: RunRecord | None = None,
) -> LiveTrace:
    """A trace of a run made with `target` (whose ``token_text`` names every id) and `draft`."""
    events = [*speculative.events, *(baseline.events if baseline else [])]
    ids = sorted(referenced_ids(prompt_ids, events))
    texts = dict(zip(ids, target.token_texts(ids), strict=True))
    meta = {"created": datetime.now(UTC).isoformat(timespec="seconds"), "versions": versions()}
    pieces = draft_pieces(draft, speculative.tokens)
    if pieces:
        meta[PIECES_KEY] = pieces
    return LiveTrace(
        settings,
        prompt,
        [int(t) for t in prompt_ids],
        str(getattr(target, "name", "target")),
        str(getattr(draft, "name", "draft")),
        int(target.vocab_size),
        texts,
        speculative,
        baseline,
        meta,
    )


def to_json(trace: LiveTrace) -> str:
    """The trace as JSON text (one object; floats written so they read back exactly)."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "meta": trace.meta,
        "settings": asdict(trace.settings),
        "prompt": {"text": trace.prompt, "ids": trace.prompt_ids},
        "models": {"target": trace.target_name, "draft": trace.draft_name, "vocab_size": trace.vocab_size},
        "token_texts": {str(k): v for k, v in sorted(trace.texts.items())},
        "speculative": asdict(trace.speculative),
        "baseline": None if trace.baseline is None else asdict(trace.baseline),
    }
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


# -- reading and validating ------------------------------------------------------------------------
def _need(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise TraceError(f"{where} has no {key!r} field.")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):  # True is an int
        raise TraceError(f"{where}.{key} has the wrong type ({type(value).__name__}).")
    return value


def _check_event(e: RoundEvent, where: str, mode: str, index: int) -> None:
    if e.mode != mode:
        raise TraceError(f"{where} is a {e.mode!r} event, expected {mode!r}.")
    if e.index != index:
        raise TraceError(f"{where} has index {e.index}, expected {index}.")
    if not e.committed or len(e.committed) != len(e.kinds):
        raise TraceError(f"{where} must commit at least one token and give one kind per token.")
    bad = [k for k in e.kinds if k not in KINDS]
    if bad:
        raise TraceError(f"{where} has an unknown token kind {bad[0]!r}.")
    if e.accepted_count != e.kinds.count("accepted") or e.accepted_count > len(e.draft_tokens):
        raise TraceError(f"{where}: accepted_count does not match its tokens.")
    if e.committed[: e.accepted_count] != e.draft_tokens[: e.accepted_count]:
        raise TraceError(f"{where}: its accepted tokens are not its drafts.")
    if len(e.acceptance_probs) > len(e.draft_tokens) or len(e.draft_q) != len(e.draft_tokens):
        raise TraceError(f"{where}: draft_q / acceptance_probs do not match its drafts.")
    if len(e.draft_u) > len(e.acceptance_probs) or len(e.draft_step_s) > len(e.draft_tokens) + 1:
        raise TraceError(f"{where}: draft_u / draft_step_s do not match its drafts.")
    if not isinstance(e.cache, dict) or not all(_is_cache(k, v) for k, v in e.cache.items()):
        raise TraceError(f"{where}: cache must give a model's [before, peak, after] positions.")
    if e.tree is not None:
        problem = tree_problem(e.tree)
        if problem is not None:
            raise TraceError(f"{where}: {problem}.")
    _check_numbers(e, where)


def _is_prob(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and 0.0 <= x <= 1.0


def _is_cache(model: object, lengths: object) -> bool:
    return (
        model in ("target", "draft")
        and isinstance(lengths, list)
        and len(lengths) == 3
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in lengths)
    )


def _check_numbers(e: RoundEvent, where: str) -> None:
    """Probabilities in [0, 1] (no NaN or inf reaches a chart), rows as long as their ids, times ≥ 0."""
    probs = [*e.acceptance_probs, *e.draft_q, *e.draft_p, *e.draft_u]
    for row in (*e.p_rows, *e.q_rows):
        if len(row.ids) != len(row.probs):
            raise TraceError(
                f"{where}: a probability row has {len(row.ids)} ids but {len(row.probs)} probabilities."
            )
        probs += [*row.probs, row.other]
    if not all(_is_prob(x) for x in probs):
        raise TraceError(f"{where} has a probability that is not a number between 0 and 1.")
    times = (e.draft_s, e.verify_s, e.overhead_s, e.prefill_s, *e.draft_step_s)
    if not all(isinstance(t, int | float) and math.isfinite(t) and t >= 0 for t in times):
        raise TraceError(f"{where} has a time that is not a number of seconds ≥ 0.")


def _record(data: Any, where: str, mode: str) -> RunRecord:
    wall = _need(data, "wall_s", (int, float), where)
    if not math.isfinite(wall) or wall < 0:
        raise TraceError(f"{where}.wall_s must be a number of seconds ≥ 0.")
    stopped = _need(data, "stopped", bool, where)
    raw = _need(data, "events", list, where)
    events = []
    for i, item in enumerate(raw):
        try:
            event = RoundEvent.from_dict(item)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TraceError(f"{where}.events[{i}] is not a valid round event ({exc}).") from None
        _check_event(event, f"{where}.events[{i}]", mode, i)
        events.append(event)
    return RunRecord(events, float(wall), stopped)


def from_json(raw: str | bytes) -> LiveTrace:
    """Read a trace written by :func:`to_json`; raises ``TraceError`` for anything else."""
    if len(raw) > MAX_TRACE_BYTES:
        raise TraceError(f"The file is larger than {MAX_UPLOAD_MB} MB.")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceError(f"The file is not JSON ({exc}).") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceError(f'The file is not a SpecDec Studio live trace (no "format": "{FORMAT}").')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise TraceError(f"Trace version {version!r} is not supported (this app reads version {VERSION}).")
    try:
        settings = LiveSettings.from_dict(_need(data, "settings", dict, "trace"))
    except (TypeError, ValueError, KeyError) as exc:
        raise TraceError(f"trace.settings is not valid ({exc}).") from None
    prompt = _need(data, "prompt", dict, "trace")
    text = _need(prompt, "text", str, "trace.prompt")
    ids = _need(prompt, "ids", list, "trace.prompt")
    if not ids or not all(isinstance(t, int) and not isinstance(t, bool) for t in ids):
        raise TraceError("trace.prompt.ids must be a non-empty list of token ids.")
    models = _need(data, "models", dict, "trace")
    names = (_need(models, "target", str, "trace.models"), _need(models, "draft", str, "trace.models"))
    vocab = _need(models, "vocab_size", int, "trace.models")
    if vocab < 1:
        raise TraceError("trace.models.vocab_size must be at least 1.")
    raw_texts = _need(data, "token_texts", dict, "trace")
    try:
        texts = {int(k): v for k, v in raw_texts.items() if isinstance(v, str)}
    except ValueError:
        raise TraceError("trace.token_texts must map token ids to texts.") from None
    if len(texts) != len(raw_texts):
        raise TraceError("trace.token_texts must map token ids to texts.")
    speculative = _record(_need(data, "speculative", dict, "trace"), "speculative", "speculative")
    if not speculative.events:
        raise TraceError("The trace has no speculative round to show.")
    baseline = None
    if data.get("baseline") is not None:
        baseline = _record(data["baseline"], "baseline", "autoregressive")
    referenced = referenced_ids(ids, [*speculative.events, *(baseline.events if baseline else [])])
    if max(referenced) >= vocab or min(referenced) < 0:
        raise TraceError(f"The trace uses token ids outside its vocabulary of {vocab} tokens.")
    missing = referenced - set(texts)
    if missing:
        raise TraceError(
            f"trace.token_texts lacks the text of {len(missing)} token ids (e.g. {min(missing)})."
        )
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    return LiveTrace(settings, text, ids, names[0], names[1], vocab, texts, speculative, baseline, meta)
