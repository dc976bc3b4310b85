"""bench/speedup.py's prompts stay out of the trained head's prompt set, so its figures are
measured on text the head never trained on."""

from bench.speedup import PROMPTS
from train import prompts


def test_no_prompt_is_or_mentions_a_benchmark_prompt():
    words = {w.strip(".,:").lower() for w in prompts.BENCH_WORDS}
    shipped = [text for texts in PROMPTS.values() for text in texts]
    for p in prompts.build("train") + prompts.build("held_out"):
        assert p.text not in shipped
        assert not any(w in p.text.lower() for w in words)
    assert all(any(w in v.lower() for w in words) for v in shipped)  # the check can fire
