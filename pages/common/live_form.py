"""The live page's settings, named once (used by the live page and by the teacher's warm-up,
which reads the teaching route's links the way the live page does).

:class:`LiveForm` gives every setting (key ``live_*``, also its URL name; default; bounds or
options): the page restores and mirrors its params, its widgets take their bounds from it, and
:func:`settings` reads it back as the run's :class:`~specdec_core.live.settings.LiveSettings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pages.common.form import Form
from pages.common.model_form import DecodingForm, chat_for, decoding_values, target_of
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param, text_param
from specdec_core.live.limits import MAX_NEW_TOKENS, MAX_PROMPT_CHARS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import MAX_VOCAB, draft_kinds, targets
from specdec_core.live.presets import PRESETS
from specdec_core.live.settings import LiveSettings
from specdec_core.models import catalog
from specdec_core.models.catalog import draft_spec


class LiveForm(Form):
    """Every setting of the live page, named once (the targets and drafts are the catalog's
    when the form is built)."""

    prefix = "live"
    target = choice_param(catalog.default_target("live"), targets)
    target_src = text_param("", MAX_SOURCE_CHARS)
    draft = choice_param(catalog.default_drafts("live")[0], draft_kinds)
    k = int_param(20, 1, 256)
    vocab = int_param(0, 0, MAX_VOCAB)
    draft_src = text_param("", MAX_SOURCE_CHARS)
    preset = choice_param("copy", PRESETS)
    chat = bool_param(True)
    prompt = text_param(None, MAX_PROMPT_CHARS)
    decoding = DecodingForm
    topk = int_param(0, 0, 1000)
    topp = float_param(1.0, 0.05, 1.0)
    seed = int_param(0, 0, 2**31 - 1)
    max = int_param(64, 4, MAX_NEW_TOKENS)
    compare = bool_param(True)
    void = bool_param(False)
    shown = int_param(8, 3, 20)


def settings(f: LiveForm, read: Callable[[Param], Any] | None = None) -> LiveSettings:
    """The run the controls describe (`read`: a control's value; by default the session's, or
    e.g. a teaching route link's)."""
    v = f.read(read)
    return LiveSettings(
        target=target_of(v.target, v.target_src),
        draft=draft_spec(v.draft, int(v.k), v.draft_src, int(v.vocab)),
        chat=chat_for(v.target, v.chat),
        **decoding_values(f.decoding, read),
        top_k=int(v.topk),
        top_p=float(v.topp),
        seed=int(v.seed),
        max_new_tokens=int(v.max),
        compare=bool(v.compare),
    )
