"""The live page's settings, named once (used by the live page and by the teacher's warm-up,
which reads the teaching route's links the way the live page does).

:class:`LiveForm` gives every setting (key ``live_*``, also its URL name; default; bounds or
options): the page restores and mirrors its params, its widgets take their bounds from it, and
:func:`settings` reads it back as the run's :class:`~specdec_core.live.settings.LiveSettings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pages.common import form
from pages.common.form import Form
from pages.common.model_form import DecodingForm, chat_for, decoding_form, decoding_values, target_of
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param, text_param
from specdec_core.live.limits import MAX_NEW_TOKENS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import (
    DRAFTS,
    HEAD_DRAFTS,
    MAX_VOCAB,
    DraftSpec,
    targets,
)
from specdec_core.live.presets import PRESETS
from specdec_core.live.settings import LiveSettings


@dataclass(frozen=True)
class LiveForm(Form):
    """Every setting of the live page, named once."""

    target: Param
    target_src: Param
    draft: Param
    k: Param
    vocab: Param
    draft_src: Param
    preset: Param
    chat: Param
    decoding: DecodingForm
    topk: Param
    topp: Param
    seed: Param
    max: Param
    compare: Param
    void: Param
    shown: Param


def live_form() -> LiveForm:
    """The live page's settings, built per script run (the targets are the registry's now)."""
    return LiveForm(
        target=choice_param("live_target", "bundled", targets()),
        target_src=text_param("live_target_src", "", MAX_SOURCE_CHARS),
        draft=choice_param("live_draft", "ngram", DRAFTS),
        k=int_param("live_k", 20, 1, 256),
        vocab=int_param("live_vocab", 0, 0, MAX_VOCAB),
        draft_src=text_param("live_draft_src", "", MAX_SOURCE_CHARS),
        preset=choice_param("live_preset", "copy", PRESETS),
        chat=bool_param("live_chat", True),
        decoding=decoding_form("live"),
        topk=int_param("live_topk", 0, 0, 1000),
        topp=float_param("live_topp", 1.0, 0.05, 1.0),
        seed=int_param("live_seed", 0, 0, 2**31 - 1),
        max=int_param("live_max", 64, 4, MAX_NEW_TOKENS),
        compare=bool_param("live_compare", True),
        void=bool_param("live_void", False),
        shown=int_param("live_shown", 8, 3, 20),
    )


def settings(f: LiveForm, read: Callable[[Param], Any] = form.value) -> LiveSettings:
    """The run the controls describe (`read`: a control's value; by default the session's, or
    e.g. a teaching route link's)."""
    kind, draft = read(f.target), read(f.draft)
    return LiveSettings(
        target=target_of(kind, read(f.target_src)),
        draft=DraftSpec(
            draft,
            int(read(f.k)) if draft == "layerskip" else 0,
            read(f.draft_src).strip() if draft == "custom" else "",
            int(read(f.vocab)) if draft in HEAD_DRAFTS else 0,
        ),
        chat=chat_for(kind, read(f.chat)),
        **decoding_values(f.decoding, read),
        top_k=int(read(f.topk)),
        top_p=float(read(f.topp)),
        seed=int(read(f.seed)),
        max_new_tokens=int(read(f.max)),
        compare=bool(read(f.compare)),
    )
