"""The internals of torch and transformers the model layer reaches (models/hf/library_internals.py):
each still does what the code relies on, so a library release that moves one fails here, loudly,
and no other file of specdec_core reaches one."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from specdec_core.models.hf import library_internals as internals

ROOT = Path(__file__).resolve().parents[1]
#: What reaching into a library's internals looks like in source (torch, transformers, accelerate).
INTERNAL = re.compile(
    r"\._version\b|\._modules\b|_forward_hooks|_forward_pre_hooks|_hf_hook|torch\.ops\.|torch\._C\b"
    r"|modeling_gguf_pytorch_utils|_set_mkldnn_enabled|_get_mkldnn_enabled"
)


def test_no_other_file_of_the_library_reaches_an_internal():
    home = Path(internals.__file__).resolve()
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "specdec_core").rglob("*.py"))
        if path.resolve() != home
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if INTERNAL.search(line)
    ]
    assert not found, "library internals belong in models/hf/library_internals.py:\n" + "\n".join(found)


def test_a_tensors_version_counts_its_in_place_updates():
    t = torch.zeros(3)
    before = internals.version(t)
    t.add_(1)
    assert internals.version(t) == before + 1
    with torch.inference_mode():
        assert internals.version(torch.zeros(3)) == -1  # an inference tensor keeps none


def test_a_shallow_twin_shares_weights_but_not_its_table_of_children():
    module = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    first = module[0]
    twin = internals.shallow_twin(module)
    twin[0] = torch.nn.Identity()  # replacing a child of the twin …
    assert module[0] is first and type(twin[0]) is torch.nn.Identity  # … leaves the original whole
    assert twin[1] is module[1]
    assert dict(twin.named_children())["0"] is twin[0] and dict(module.named_children())["0"] is first


def test_hooks_and_patched_forwards_are_seen():
    from accelerate.hooks import ModelHook, add_hook_to_module

    linear = torch.nn.Linear(4, 4)
    assert not internals.hooked(linear)
    handle = linear.register_forward_hook(lambda m, i, o: o)
    assert internals.hooked(linear)
    handle.remove()
    handle = linear.register_forward_pre_hook(lambda m, i: i)
    assert internals.hooked(linear)
    handle.remove()
    add_hook_to_module(linear, ModelHook())  # accelerate's offloading hooks patch the forward
    assert internals.hooked(linear)


def test_onednns_packed_linear_is_there_and_exact():
    if not torch.backends.mkldnn.is_available():
        pytest.skip("this torch build has no oneDNN (the packed kernel is then never a candidate)")
    torch.manual_seed(0)
    w, bias = torch.randn(24, 16), torch.randn(24)
    with torch.inference_mode():
        packed = internals.onednn_pack(w, 4)
        assert packed is not None, "torch.ops.mkldnn._reorder_linear_weight is gone or refuses"
        for rows in (1, 3, 9):
            x = torch.randn(rows, 16)
            got = internals.onednn_linear(x, packed, bias)
            torch.testing.assert_close(got, F.linear(x, w, bias), atol=1e-5, rtol=1e-5)


def test_transformers_still_dequantises_gguf_through_the_tqdm_it_imported():
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    assert hasattr(gguf_utils, "tqdm"), "transformers renamed the GGUF loader's tqdm: progress is lost"
    loop = inspect.getsource(gguf_utils.load_gguf_checkpoint)
    assert "tqdm(reader.tensors" in loop, "transformers' GGUF loader no longer loops through tqdm"
    original = gguf_utils.tqdm
    seen: list[tuple[int, int]] = []
    with internals.gguf_tensor_loop(lambda i, total: seen.append((i, total))):
        assert list(gguf_utils.tqdm(["a", "b", "c"], desc="…")) == ["a", "b", "c"]
    assert seen == [(0, 3), (1, 3), (2, 3)] and gguf_utils.tqdm is original
