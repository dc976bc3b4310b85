"""Stage "card": the figures of a ``bench/speedup.py`` run recorded in the shipped heads' cards."""

from __future__ import annotations

import json
from pathlib import Path

from train import export, medusa, paths


def record_bench(log: str) -> None:
    """Copy head_chat / head_alpha (and the other drafts' keys) from bench/speedup.py's output
    into the head's card, and medusa_* into the Medusa heads' card where they are shipped;
    each MODEL_CARD.md is rewritten from its card, so it shows the same figures."""
    from specdec_core.models.medusa import DEFAULT_MEDUSA

    line = [x for x in Path(log).read_text(encoding="utf-8").splitlines() if x.startswith("{")][-1]
    bench = json.loads(line)
    others = ("bf16_chat", "ngram_chat", "ngram_copy")
    for card_file, keys, write_md in (
        (paths.ASSET / "card.json", ("head_chat", "head_alpha", *others), export.model_card),
        (
            DEFAULT_MEDUSA.parent / "card.json",
            ("medusa_chat", "medusa_alpha", "medusa_tree_chat", *others),
            medusa.model_card,
        ),
    ):
        if not card_file.is_file():
            continue
        card = json.loads(card_file.read_text())
        card["bench"] = {k: bench.get(k) for k in keys}
        card_file.write_text(json.dumps(card, indent=1))
        (card_file.parent / "MODEL_CARD.md").write_text(write_md(card), encoding="utf-8")
        print(card_file.parent.name, json.dumps(card["bench"]), flush=True)
