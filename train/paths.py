"""Where each stage reads and writes, and the settings every stage shares."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Large intermediate files (features, training checkpoints); git-ignored.
WORK = Path(os.environ.get("SPECDEC_TRAIN_DIR", ROOT / "artifacts" / "head"))
#: The generated answers (token ids, small): committed, so later stages reproduce without regenerating.
GENERATED = ROOT / "train" / "data"
#: The shipped head.
ASSET = ROOT / "assets" / "head"

SEED = 0
#: The head's output vocabulary: the most frequent tokens of the generated answers.
HEAD_VOCAB = 4096
#: ... counted over the first answer shards only (wave 1's 1824 prompts, 32 a shard) and the
#: corpus: later waves leave the vocabulary, and so the heads trained before them, as they were.
VOCAB_TRAIN_SHARDS = 57


def ensure(*folders: Path) -> None:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
