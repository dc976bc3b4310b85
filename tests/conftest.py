"""Shared fixtures. Each block is owned by the module that needs it; keep names explicit."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support.postgres import Cluster, Unavailable

# -- hypothesis: the same examples on every run, so CI is reproducible; HYPOTHESIS_PROFILE=explore
#    searches afresh (run it when changing the maths) -------------------------------------------

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# -- real and tiny transformer models (tests/test_models_*.py, tests/test_engine_*.py) ----------

TINY_TEXT = (
    "the quick brown fox jumps over the lazy dog. a naïve robot paints 中文 characters, "
    "then it repeats: the quick brown fox jumps over the lazy dog again and again.\n"
)
TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tiny_tokenizer(text: str = TINY_TEXT, vocab_size: int = 320):
    """A byte-level BPE tokenizer trained in milliseconds on `text` (same code path as real ones)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        [text] * 5,
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        show_progress=False,
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    tok.chat_template = TINY_CHAT_TEMPLATE
    return tok


def build_alien_tokenizer():
    """A word-level tokenizer that shares no token text with :func:`build_tiny_tokenizer`'s
    (whole words of circled letters, which byte-level pieces only ever hold in part)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "ⓐⓑ", "ⓒⓓ", "ⓔⓕ"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<unk>")


def build_tiny_model(folder: Path, tokenizer, layers: int = 4, seed: int = 0, arch: str = "llama") -> Path:
    """A random causal LM saved as safetensors + config + tokenizer, like a downloaded model.

    `arch`: "llama", "qwen2" (biases on q, k, v) or "mistral" (no sliding window). Norm
    weights and biases are random too, so code that uses them is tested.
    """
    import torch
    import transformers

    names = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}[arch]
    config_class = getattr(transformers, f"{names}Config")
    extra = {"sliding_window": None} if arch == "mistral" else {}
    config = config_class(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        initializer_range=0.2,  # peaked logits: greedy comparisons rarely meet near-ties
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
        **extra,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, f"{names}ForCausalLM")(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.uniform_(0.5, 1.5)
            elif name.endswith(".bias"):
                param.uniform_(-0.5, 0.5)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_hf_folders(tmp_path_factory) -> dict[str, Path]:
    """Folders of tiny random Llamas: "target" (4 layers), "draft" (2 layers, same tokenizer),
    "other" (a different tokenizer of the same size)."""
    root = tmp_path_factory.mktemp("tiny_hf")
    tok = build_tiny_tokenizer()
    other_tok = build_tiny_tokenizer(TINY_TEXT.upper() + "0123456789 xyz!?", vocab_size=len(tok))
    return {
        "target": build_tiny_model(root / "target", tok, layers=4, seed=0),
        "draft": build_tiny_model(root / "draft", tok, layers=2, seed=1),
        "other": build_tiny_model(root / "other", other_tok, layers=2, seed=2),
    }


@pytest.fixture(scope="session")
def bundled_model():
    """The bundled SmolLM2-135M-Instruct, loaded once per test session (slow tests only)."""
    from specdec_core.models import load_bundled

    # No skip: the setup script installs the model, and a missing one must fail the run.
    return load_bundled()


# -- a throwaway PostgreSQL cluster (tests of the class's answers; support/postgres.py) ----------


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One PostgreSQL cluster for the test session, removed at its end. Where none can be started
    the tests that need it fail and say why: they never skip."""
    try:
        cluster = Cluster()
    except Unavailable as exc:
        pytest.fail(f"PostgreSQL could not be started: {exc}", pytrace=False)
    yield cluster
    cluster.remove()


@pytest.fixture
def postgres(postgres_cluster: Cluster) -> Cluster:
    """The session's PostgreSQL cluster, running (a test that stopped it and failed before
    starting it again leaves it stopped)."""
    if not postgres_cluster.running():
        postgres_cluster.start()
    return postgres_cluster


# -- classroom servers: the server's rules come from the environment, read on every run ------------
#: The teacher's passcode of a :func:`classroom` server.
PASSCODE = "owl-42"


@pytest.fixture
def fresh_shelf() -> Iterator[None]:
    """The process's shelf of models and the preload's ticket (both st.cache_resource) emptied
    before and after the test, so no test sees another's models."""
    from pages.common.models import preload_ticket, shelf

    shelf().release()
    preload_ticket.clear()
    yield
    shelf().release()
    preload_ticket.clear()


@pytest.fixture
def classroom(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A classroom server: the toy pair preloaded, the teacher's passcode :data:`PASSCODE`, and
    class answers recorded into a fresh SQLite file (returned)."""
    db = tmp_path / "answers.sqlite"
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(db))
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_TEACHER_PASSCODE", PASSCODE)
    return db


@pytest.fixture
def classroom_models(classroom: Path, monkeypatch: pytest.MonkeyPatch, tiny_hf_folders) -> str:
    """A :func:`classroom` server whose teacher also preloads a tiny 4-layer transformer (its
    folder returned)."""
    folder = str(tiny_hf_folders["target"])
    monkeypatch.setenv("SPECDEC_PRELOAD", f"toy,{folder}")
    return folder


# -- this machine's profile (specdec_core/live/machine_profile.py): every test reads a folder of
#    its own, empty unless it asks for the pinned profile, so no test depends on the machine -----


@pytest.fixture(autouse=True)
def _own_profile_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, request):
    from specdec_core.live.machine_profile import PROFILE_ENV

    name = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv(PROFILE_ENV, str(tmp_path_factory.getbasetemp() / "profiles" / name))


#: The profile `pinned_profile` keeps as this machine's: figures no real machine is likely to give
#: exactly, so a page that shows them read them from the profile.
PINNED_PROFILE = dict(
    cpu="Pinned CPU",
    cores=4,
    threads=3,
    bandwidth_gbs=20.0,
    compute_gflops=150.0,
    step_ms={"smollm2": 48.0, "gemma": 90.0},
    floor_ms={"smollm2": 26.9, "gemma": 53.6},
    verify_ratio={
        "smollm2": {2: 1.05, 3: 1.1, 5: 1.3, 9: 1.7, 17: 2.6},
        "gemma": {2: 1.02, 3: 1.06, 5: 1.2, 9: 1.5, 17: 2.2},
    },
    draft_c={"smollm2": {"bf16": 0.71, "layerskip:8": 0.36}, "gemma": {"bf16": 0.64, "smollm2": 0.52}},
)


@pytest.fixture
def pinned_profile():
    """:data:`PINNED_PROFILE` kept as this machine's profile for the test (``machine_profile.load``
    returns it); the fixture's value is the profile."""
    from specdec_core.live.machine_profile import MachineProfile, save

    profile = MachineProfile(**PINNED_PROFILE)
    save(profile)
    return profile
