"""Stage "corpus": local text, framed as assistant answers, for prefill-only soft labels.

Generating is the expensive part of self-distillation on a CPU (HF's batched ``generate``
gives ~30 tokens per CPU-second here, a prefill ~290), and the target's next-token
distribution is an exact soft label on any text, not only its own. So besides the target's
answers the head also learns from text already on the machine, each chunk placed after a
chat prompt as if the assistant had written it: the course's own lessons (English and
Chinese prose with formulas), the descriptions of the installed Python packages (README
prose and code) and modules of the Python standard library (code). Files are read in sorted
order, chunked to about ``CHUNK`` tokens and shuffled with the seed; chunks mentioning a
benchmark subject or a held-out topic are dropped (``prompts.check_disjoint``'s rules), and
bench/ and tests/ are never read.
"""

from __future__ import annotations

import json
import random
import re
import sysconfig
from pathlib import Path

from train import paths, prompts

CHUNK = 240
#: (source name, files, prompt, token budget)
PER_FILE_CHUNKS = 6


def sources() -> list[tuple[str, list[Path], str, int]]:
    site = Path(sysconfig.get_paths()["purelib"])
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    std_files = sorted(p for p in stdlib.glob("*.py") if not p.name.startswith("_"))
    return [
        (
            "lessons_en",
            sorted((paths.ROOT / "lessons" / "en").glob("*.md")),
            "Explain this topic to me.",
            45_000,
        ),
        ("lessons_zh", sorted((paths.ROOT / "lessons" / "zh").glob("*.md")), "请给我讲解这个主题。", 35_000),
        ("packages", sorted(site.glob("*.dist-info/METADATA")), "Tell me about this Python package.", 45_000),
        ("stdlib", std_files, "Show me some Python code from the standard library.", 35_000),
    ]


def _allowed(text: str) -> bool:
    low = text.lower()
    if any(w in low for w in prompts.BENCH_WORDS):
        return False
    held = prompts.HELD_OUT_TOPICS + prompts.CODE_TASKS_HELD_OUT + prompts.ZH_TOPICS_HELD_OUT
    return not any(re.search(rf"\b{re.escape(t.lower())}\b", low) for t in held)


def run(records_per_shard: int = 32) -> None:
    from specdec_core.models import load_bundled

    model = load_bundled()
    rng = random.Random(f"corpus-{paths.SEED}")
    records: list[dict] = []
    for name, files, request, budget in sources():
        prompt_ids = model.encode(request, chat=True)
        chunks: list[list[int]] = []
        for path in files:
            text = path.read_text(errors="ignore")
            if name == "packages":
                text = text.split("\n\n", 1)[-1]  # the description, not the header fields
            ids = model.tokenizer.encode(text, add_special_tokens=False)
            for i in range(0, min(len(ids), CHUNK * PER_FILE_CHUNKS), CHUNK):
                piece = ids[i : i + CHUNK]
                if len(piece) >= 48 and _allowed(model.decode(piece)):
                    chunks.append(piece)
        rng.shuffle(chunks)
        used = 0
        for piece in chunks:
            if used >= budget:
                break
            records.append({"kind": name, "prompt": prompt_ids, "answer": piece})
            used += len(piece)
        print(
            f"{name}: {used} tokens in {min(len(chunks), len(records))} chunks from {len(files)} files",
            flush=True,
        )
    rng.shuffle(records)
    out = paths.GENERATED / "corpus"
    paths.ensure(out)
    for index in range(0, len(records), records_per_shard):
        shard = out / f"shard_{index // records_per_shard:04d}.json"
        shard.write_text(
            json.dumps({"sampled": False, "records": records[index : index + records_per_shard]})
        )
    print(f"{len(records)} records in {out}", flush=True)
