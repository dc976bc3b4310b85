"""Speculative decoding speedups on the bundled SmolLM2-135M-Instruct, measured side by side.

    .venv/bin/python -m bench.speedup            # full run
    .venv/bin/python -m bench.speedup --quick    # fewer tokens and repeats, the same keys
    .venv/bin/python -m bench.speedup --prompts FILE   # the file's copy / chat prompts instead

(from the repository root; figures go to bench/RESULTS.md.)

The model is loaded once (the cold load runs in a child process with an empty cache).
Every case runs its contenders interleaved (A B C, A B C, …) on the same prompt with greedy
decoding, so machine noise hits them alike; each contender's time is the fastest of its
completed repeats (every repeat does identical work: greedy runs are deterministic). Other
processes on a shared machine can slow a single run down many times over; a run that
passes twice its contender's best time so far is abandoned and run again (counted in the
table), which changes nothing in the reported best but saves waiting. All contenders are
checked to produce the same tokens as target-only greedy decoding.

The last line is one JSON object:

* ``head_chat``: the same ratio for the shipped trained head (assets/head/) on the chat
  prompt, and ``head_alpha`` its greedy acceptance rate there (the head never saw this
  prompt: its held-out split and training prompts exclude the bench's subjects, see
  train/prompts.py);
* ``medusa_chat`` / ``medusa_alpha``: the same for the shipped Medusa heads (assets/medusa/,
  trained on the same data) drafting a chain with adaptive γ, and ``medusa_tree_chat`` the
  same ratio for them drafting the tree :data:`TREE_MEDUSA` (each head's top candidates);
* ``ngram_copy`` / ``ngram_chat`` / ``bf16_chat``: target-only time / speculative time
  (our engine both sides, default settings: adaptive γ) on a "repeat this paragraph"
  prompt and on an open chat prompt;
* ``vs_hf``: our time / transformers' time for the same pair, prompt, fixed γ and greedy
  decoding — our default n-gram drafter against ``generate(prompt_lookup_num_tokens=γ)``
  on the copy prompt, and the bf16 copy against ``generate(assistant_model=bf16 copy)``
  (constant γ, no confidence cut-off) on the chat prompt; the worse (larger) of the two
  is reported, both are printed;
* ``efficiency``: the bf16 chat run's measured decode speedup divided by the one predicted
  by ``specdec_core.theory`` from its measured acceptance rate α and cost ratios: per round
  r, expected_tokens(α, γ_r) tokens for the measured draft + verify time of that round,
  against the baseline's measured time per token (prefill excluded on both sides);
* ``tree_gain_chat``: the bf16 copy's best chain time / its best tree time on the chat prompt
  (``generate(..., tree=...)``; the shapes in :data:`TREES_BF16`, the best one named in the
  table), ``tree_tau_ratio_chat`` that tree's tokens per round / that chain's, and
  ``tree_gain_copy`` the same time ratio for the n-gram draft on the copy prompt
  (:data:`TREES_NGRAM`); the break-even line compares the τ ratio with the cost ratio of a
  tree round to a chain round (more verification rows cost real time on a CPU);
* ``cold_load_s`` (empty cache: de-quantise, save, load), ``warm_load_s``, ``rss_mb``
  (resident memory once the target is loaded and has run one forward pass; the weights
  are memory-mapped, so they only count once touched).

Speed numbers belong here, never in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import torch

from bench import prompts as prompt_sets
from specdec_core import theory
from specdec_core.engine import RoundEvent, autoregressive, generate, summarize
from specdec_core.models import NGramDraft, load_bundled, precision_copy
from specdec_core.models.head import DEFAULT_WEIGHTS, HeadDraft
from specdec_core.models.medusa import DEFAULT_MEDUSA, MedusaDraft
from specdec_core.sampling import SamplingConfig

ROOT = Path(__file__).resolve().parents[1]


GREEDY = SamplingConfig(temperature=0)
#: The shipped prompts (``--prompts FILE`` replaces a category's list; each contender's time is
#: then summed over the list's prompts).
PARAGRAPH = (
    "The lighthouse keeper climbed the spiral stairs every evening at dusk, carrying a small brass "
    "lantern and a notebook full of weather observations. For thirty years he had recorded the "
    "direction of the wind, the height of the waves and the colour of the sky, and he believed that "
    "the sea spoke in patterns that only patient people could hear. When the new automatic lamp was "
    "installed, the village expected him to retire, but he kept climbing the stairs, because the "
    "notebook was not finished."
)
PROMPTS = {
    "copy": ["Repeat the following paragraph exactly, word for word:\n\n" + PARAGRAPH],
    "chat": ["Write a short story about a robot who learns to paint."],
}
GAMMA_NGRAM = 10  # transformers' own prompt-lookup examples use 10
GAMMA_BF16 = 4
GAMMA_HEAD = 4  # the trained head's starting γ (adaptive from there)
GAMMA_MEDUSA = 4  # one draft per Medusa head
#: Tree shapes (b_1, …, b_D) raced against the chains of the same draft.
TREES_BF16: tuple[tuple[int, ...], ...] = ((2, 1, 1, 1), (2, 2, 1, 1), (2, 1, 1, 1, 1, 1))
TREES_NGRAM: tuple[tuple[int, ...], ...] = ((2, *(1,) * 9), (3, *(1,) * 5))
#: The Medusa heads' tree: head 1's top 3, then head 2's top token under each (one of the live
#: page's shapes; picked from the held-out top-3 rate, never from this bench's prompts).
TREE_MEDUSA: tuple[int, ...] = (3, 1)


def shape_name(shape: tuple[int, ...]) -> str:
    """(3, 1, 1, 1, 1, 1) → "3-1×5"."""
    head, rest = shape[0], shape[1:]
    if rest and all(b == 1 for b in rest):
        return f"{head}-1×{len(rest)}"
    return "-".join(str(b) for b in shape)


@dataclass
class Contender:
    name: str
    run: Callable[[float | None], tuple[list[int], list[RoundEvent] | None, bool]]
    times: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    events: list[RoundEvent] | None = None
    abandoned: int = 0

    @property
    def best(self) -> float:
        return min(self.times)


def ours(events_fn: Callable[[], object]) -> Callable:
    """A contender running one of our generators; gives up once `deadline` has passed."""

    def run(deadline: float | None) -> tuple[list[int], list[RoundEvent], bool]:
        events: list[RoundEvent] = []
        for e in events_fn():
            events.append(e)
            if deadline is not None and time.perf_counter() > deadline:
                return [], events, False  # leaving the loop closes the generator
        return [t for e in events for t in e.committed], events, True

    return run


def hf_generate(module: torch.nn.Module, prompts: list[list[int]], n: int, **kwargs: object) -> Callable:
    """A contender running transformers' generate on each prompt in turn (its max_time stops a
    hopeless run)."""

    def run(deadline: float | None) -> tuple[list[int], None, bool]:
        tokens: list[int] = []
        for ids in prompts:
            inp = torch.tensor([ids])
            limit = {} if deadline is None else {"max_time": max(deadline - time.perf_counter(), 0.01)}
            with torch.inference_mode():
                out = module.generate(
                    inp, attention_mask=torch.ones_like(inp), do_sample=False, max_new_tokens=n,
                    pad_token_id=2, **kwargs, **limit,
                )  # fmt: skip
            tokens += out[0, len(ids) :].tolist()
            if deadline is not None and time.perf_counter() > deadline:
                return tokens, None, False
        return tokens, None, True

    return run


#: A run slower than this many times the contender's best so far is abandoned and retried
#: (it was slowed down by other processes on the machine): the reported time is the best
#: completed run either way, this only saves waiting for hopeless runs.
ABANDON_AFTER = 2.0
MAX_ABANDONED = 8


def measure(contenders: list[Contender], repeats: int, label: str) -> None:
    """Interleaved runs until each contender has `repeats` completed ones."""
    for r in range(repeats):
        for c in contenders:
            while True:
                deadline = None
                if c.times and c.abandoned < MAX_ABANDONED:
                    deadline = time.perf_counter() + ABANDON_AFTER * c.best
                start = time.perf_counter()
                tokens, events, done = c.run(deadline)
                elapsed = time.perf_counter() - start
                if done:
                    break
                c.abandoned += 1
                print(f"  [{label} {r + 1}/{repeats}] {c.name}: abandoned after {elapsed:.2f} s",
                      file=sys.stderr, flush=True)  # fmt: skip
            c.times.append(elapsed)
            c.tokens = tokens
            if events is not None and elapsed == c.best:
                c.events = events
            print(f"  [{label} {r + 1}/{repeats}] {c.name}: {elapsed:.2f} s", file=sys.stderr, flush=True)


def cold_load(tokens_dir: Path) -> float:
    """Seconds load_bundled() takes in a fresh process with an empty cache (imports excluded)."""
    code = (
        "import time\n"
        "import torch, transformers\n"
        "from specdec_core.models import load_bundled\n"
        "t = time.perf_counter(); load_bundled(); print(time.perf_counter() - t)\n"
    )
    env = dict(os.environ, SPECDEC_CACHE_DIR=str(tokens_dir))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def decode_time_per_token(events: list[RoundEvent]) -> float:
    s = summarize(events)
    return s.decode_s / s.tokens


def predicted_speedup(spec: list[RoundEvent], unit: float) -> tuple[float, float]:
    """(theory's speedup from the run's α and measured per-round costs, α)."""
    s = summarize(spec)
    alpha = 0.0 if s.alpha is None else min(max(s.alpha, 0.0), 1.0)
    tokens = sum(float(theory.expected_tokens(alpha, len(e.draft_tokens))) for e in spec)
    cost = sum(e.draft_s + e.verify_s for e in spec)
    return tokens * unit / cost, alpha


def forward_costs(
    target: object, ids: list[int], sizes: tuple[int, ...], repeats: int = 7
) -> dict[int, float]:
    """Median seconds of one target forward over `sizes` new tokens after `ids` (interleaved)."""
    sess = target.session(ids)
    base = sess.length
    times: dict[int, list[float]] = {k: [] for k in sizes}
    for _ in range(repeats):
        for k in sizes:
            start = time.perf_counter()
            sess.lazy_logits((ids * k)[:k]).row(0)
            times[k].append(time.perf_counter() - start)
            sess.truncate(base)
    return {k: sorted(v)[len(v) // 2] for k, v in times.items()}


def _best(contenders: dict[str, Contender], *prefixes: str) -> Contender:
    """The fastest contender whose name starts with one of `prefixes`."""
    return min((c for name, c in contenders.items() if name.startswith(prefixes)), key=lambda c: c.best)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tokens and repeats")
    parser.add_argument("--tokens", type=int, help="new tokens per run (default 128, quick 64)")
    parser.add_argument("--repeats", type=int, help="interleaved repeats per case (default 3, quick 2)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-load child process")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own choice)")
    prompt_sets.add_argument(parser)
    args = parser.parse_args(argv)
    texts = prompt_sets.merged(PROMPTS, args.prompts)
    n = args.tokens or (64 if args.quick else 128)
    repeats = args.repeats or (2 if args.quick else 3)
    started = time.perf_counter()
    if args.threads:
        torch.set_num_threads(args.threads)

    cold = float("nan")
    if not args.no_cold:
        with tempfile.TemporaryDirectory() as tmp:
            cold = cold_load(Path(tmp))
    load_bundled()  # makes sure the user cache exists, so the next load is a warm one
    t0 = time.perf_counter()
    target = load_bundled()
    warm = time.perf_counter() - t0
    target.session(target.encode("Hello", chat=True)).extend([1])  # touch every weight once
    memory = rss_mb()
    bf16 = precision_copy(target, "bfloat16")
    gen_cfg = bf16.module.generation_config
    gen_cfg.num_assistant_tokens = GAMMA_BF16
    gen_cfg.num_assistant_tokens_schedule = "constant"
    gen_cfg.assistant_confidence_threshold = 0.0  # exactly γ drafts per round, like ours

    ids = {k: [target.encode(t, chat=True) for t in texts[k]] for k in ("copy", "chat")}
    ngram = NGramDraft.for_model(target)
    ngram_hf_like = NGramDraft.for_model(target, max_ngram=2, min_ngram=1)  # transformers' n-gram sizes
    head = HeadDraft(target) if DEFAULT_WEIGHTS.is_file() else None  # the shipped trained head (assets/head/)

    medusa = MedusaDraft(target) if DEFAULT_MEDUSA.is_file() else None  # the shipped Medusa heads

    def head_cases(prompt: str) -> list[Contender]:
        if head is None:
            return []
        return [Contender("trained head, adaptive γ", spec(prompt, head, GAMMA_HEAD, True))]

    def medusa_cases(prompt: str) -> list[Contender]:
        if medusa is None:
            return []
        return [
            Contender("Medusa heads, adaptive γ", spec(prompt, medusa, GAMMA_MEDUSA, True)),
            Contender(f"Medusa heads, tree {shape_name(TREE_MEDUSA)}", tree(prompt, medusa, TREE_MEDUSA)),
        ]

    def each(prompt: str, run: Callable[[list[int]], object]) -> Callable:
        """One contender: `run` on every prompt of the category in turn."""
        return ours(lambda: chain.from_iterable(run(i) for i in ids[prompt]))

    def spec(prompt: str, draft: object, gamma: int, adaptive: bool | str) -> Callable:
        return each(prompt, lambda i: generate(target, draft, i, GREEDY, gamma, n, 0, adaptive))

    def tree(prompt: str, draft: object, shape: tuple[int, ...]) -> Callable:
        return each(prompt, lambda i: generate(target, draft, i, GREEDY, max_new_tokens=n, tree=shape))

    def alone(prompt: str) -> Callable:
        return each(prompt, lambda i: autoregressive(target, i, GREEDY, n))

    cases = {
        "copy": [
            Contender("target only (ours)", alone("copy")),
            Contender("n-gram, adaptive γ", spec("copy", ngram, GAMMA_NGRAM, True)),
            Contender("n-gram, heuristic γ", spec("copy", ngram, GAMMA_NGRAM, "heuristic")),
            *head_cases("copy"),
            Contender(f"n-gram, γ={GAMMA_NGRAM}", spec("copy", ngram, GAMMA_NGRAM, False)),
            Contender(f"n-gram (n=2..1), γ={GAMMA_NGRAM}", spec("copy", ngram_hf_like, GAMMA_NGRAM, False)),
            Contender(f"HF prompt lookup, γ={GAMMA_NGRAM}",
                      hf_generate(target.module, ids["copy"], n, prompt_lookup_num_tokens=GAMMA_NGRAM)),
            Contender("HF target only", hf_generate(target.module, ids["copy"], n)),
            *(Contender(f"n-gram, tree {shape_name(t)}", tree("copy", ngram, t)) for t in TREES_NGRAM),
        ],
        "chat": [
            Contender("target only (ours)", alone("chat")),
            Contender("n-gram, adaptive γ", spec("chat", ngram, GAMMA_NGRAM, True)),
            Contender("bf16 copy, adaptive γ", spec("chat", bf16, GAMMA_BF16, True)),
            *head_cases("chat"),
            *medusa_cases("chat"),
            Contender("bf16 copy, heuristic γ", spec("chat", bf16, GAMMA_BF16, "heuristic")),
            Contender(f"bf16 copy, γ={GAMMA_BF16}", spec("chat", bf16, GAMMA_BF16, False)),
            Contender(f"HF assisted bf16, γ={GAMMA_BF16}",
                      hf_generate(target.module, ids["chat"], n, assistant_model=bf16.module)),
            Contender("HF target only", hf_generate(target.module, ids["chat"], n)),
            *(Contender(f"bf16 copy, tree {shape_name(t)}", tree("chat", bf16, t)) for t in TREES_BF16),
            *(Contender(f"n-gram, tree {shape_name(t)}", tree("chat", ngram, t)) for t in TREES_NGRAM),
        ],
    }  # fmt: skip
    for label, contenders in cases.items():
        measure(contenders, repeats, label)

    print(f"SmolLM2-135M-Instruct, {n} new tokens, greedy, best of {repeats} interleaved runs, "
          f"torch threads {torch.get_num_threads()}")  # fmt: skip
    print(f"{'prompt':6} {'contender':30} {'best s':>8} {'completed runs (s)':>24} {'abandoned':>9} "
          f"{'speedup':>8} {'α':>5} {'tok/round':>9} {'same tokens':>11}")  # fmt: skip
    for prompt, contenders in cases.items():
        base = contenders[0]
        for c in contenders:
            alpha = tpr = ""
            if c.events is not None and c is not base:
                s = summarize(c.events)
                alpha = "-" if s.alpha is None else f"{s.alpha:.2f}"
                tpr = f"{s.tokens_per_round:.2f}"
            same = c.tokens[: len(base.tokens)] == base.tokens
            runs = " ".join(f"{t:.2f}" for t in c.times)
            print(f"{prompt:6} {c.name:30} {c.best:8.2f} {runs:>24} {c.abandoned:9d} "
                  f"{base.best / c.best:8.2f} {alpha:>5} {tpr:>9} {'yes' if same else 'NO':>11}")  # fmt: skip

    copy, chat = {c.name: c for c in cases["copy"]}, {c.name: c for c in cases["chat"]}
    vs_hf_ngram = copy[f"n-gram, γ={GAMMA_NGRAM}"].best / copy[f"HF prompt lookup, γ={GAMMA_NGRAM}"].best
    vs_hf_bf16 = chat[f"bf16 copy, γ={GAMMA_BF16}"].best / chat[f"HF assisted bf16, γ={GAMMA_BF16}"].best
    base_copy, base_chat = copy["target only (ours)"], chat["target only (ours)"]
    unit = decode_time_per_token(base_chat.events)
    spec_events = chat["bf16 copy, adaptive γ"].events
    measured = unit / decode_time_per_token(spec_events)
    predicted, alpha = predicted_speedup(spec_events, unit)
    s = summarize(spec_events)
    draft_ratio = (s.draft_s / max(s.draft_forwards, 1)) / unit
    hf_pl = copy[f"HF prompt lookup, γ={GAMMA_NGRAM}"].best
    hf_bf16 = chat[f"HF assisted bf16, γ={GAMMA_BF16}"].best
    adaptive_ngram = copy["n-gram, adaptive γ"].best / hf_pl
    adaptive_bf16 = chat["bf16 copy, adaptive γ"].best / hf_bf16
    print(f"vs transformers, same fixed γ: n-gram {vs_hf_ngram:.2f}, bf16 assisted {vs_hf_bf16:.2f} "
          f"(ours / theirs); our default adaptive γ instead: n-gram {adaptive_ngram:.2f}, "
          f"bf16 {adaptive_bf16:.2f}")  # fmt: skip
    print(f"theory (bf16 chat): α = {alpha:.3f}, draft step = {draft_ratio:.2f} target steps, "
          f"verify = {s.verify_s / s.rounds / unit:.2f} steps/round, predicted decode speedup "
          f"{predicted:.2f}, measured {measured:.2f}")  # fmt: skip
    print(f"loads: cold {cold:.1f} s, warm {warm:.2f} s; RSS after loading the target {memory:.0f} MB, "
          f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"bench took {time.perf_counter() - started:.0f} s")  # fmt: skip
    bf16_chain, bf16_tree = (
        _best(chat, "bf16 copy, γ", "bf16 copy, a", "bf16 copy, h"),
        _best(chat, "bf16 copy, tree"),
    )
    ngram_chain, ngram_tree = _best(copy, "n-gram, γ", "n-gram, a", "n-gram, h"), _best(copy, "n-gram, tree")
    tau_chain, tau_tree = (summarize(c.events).tokens_per_round for c in (bf16_chain, bf16_tree))
    round_chain, round_tree = (
        summarize(c.events).seconds / summarize(c.events).rounds for c in (bf16_chain, bf16_tree)
    )
    nodes = sum(e.extra.get("tree_nodes", 0) for e in bf16_tree.events) / len(bf16_tree.events)
    verify = {
        c.name: summarize(c.events).verify_s / summarize(c.events).rounds for c in (bf16_chain, bf16_tree)
    }
    print(f"trees (chat, bf16 copy): best chain {bf16_chain.name} τ = {tau_chain:.2f}, best tree "
          f"{bf16_tree.name} ({nodes:.1f} nodes) τ = {tau_tree:.2f}; τ ratio {tau_tree / tau_chain:.2f} "
          "against a "
          f"round-cost ratio (break-even) {round_tree / round_chain:.2f}; verify per round "
          + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in verify.items())
          + f"; target decode step {unit * 1000:.0f} ms")  # fmt: skip
    print(f"trees (copy, n-gram): best chain {ngram_chain.name}, best tree {ngram_tree.name}")
    costs = forward_costs(target, ids["chat"][0], (1, 5, 9, 13, 17, 25))
    print("target forward (body + first head block) by tokens scored: "
          + ", ".join(f"{k}: {v * 1000:.1f} ms ({v / costs[1]:.2f}×)" for k, v in costs.items()))  # fmt: skip
    head_run = chat.get("trained head, adaptive γ")
    medusa_run = chat.get("Medusa heads, adaptive γ")
    medusa_tree = chat.get(f"Medusa heads, tree {shape_name(TREE_MEDUSA)}")
    result = {
        "ngram_copy": round(base_copy.best / copy["n-gram, adaptive γ"].best, 3),
        "ngram_chat": round(base_chat.best / chat["n-gram, adaptive γ"].best, 3),
        "bf16_chat": round(base_chat.best / chat["bf16 copy, adaptive γ"].best, 3),
        "head_chat": None if head_run is None else round(base_chat.best / head_run.best, 3),
        "head_alpha": None if head_run is None else round(summarize(head_run.events).alpha or 0.0, 3),
        "medusa_chat": None if medusa_run is None else round(base_chat.best / medusa_run.best, 3),
        "medusa_alpha": None if medusa_run is None else round(summarize(medusa_run.events).alpha or 0.0, 3),
        "medusa_tree_chat": None if medusa_tree is None else round(base_chat.best / medusa_tree.best, 3),
        "vs_hf": round(max(vs_hf_ngram, vs_hf_bf16), 3),
        "efficiency": round(measured / predicted, 3),
        "cold_load_s": None if cold != cold else round(cold, 2),  # null with --no-cold
        "warm_load_s": round(warm, 2),
        "rss_mb": round(memory, 1),
        "tree_gain_chat": round(bf16_chain.best / bf16_tree.best, 3),
        "tree_gain_copy": round(ngram_chain.best / ngram_tree.best, 3),
        "tree_tau_ratio_chat": round(tau_tree / tau_chain, 3),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
