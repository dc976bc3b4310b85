"""Training the head (train/fit.py) on a tiny random Llama's own prefill features.

The closed-form start must predict the next feature better than a constant, and gradient
steps on the unrolled loss must lower it; both on real features of a real (tiny) target.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec_core.models import HFCausalLM
from specdec_core.models.head import EagleHead, HeadConfig
from train.fit import Data, least_squares_init, unrolled_loss

TEXTS = [
    "the quick brown fox jumps over the lazy dog",
    "the lazy dog sleeps and the quick fox runs",
    "a brown dog and a quick cat jump over the fox",
    "the cat sat on the mat and the dog ran home",
]


@pytest.fixture(scope="module")
def setup(tiny_hf_folders):
    model = HFCausalLM.load(tiny_hf_folders["target"], device="cpu")
    module = model.module
    data = Data.__new__(Data)
    data.seqs = []
    with torch.inference_mode():
        for text in TEXTS * 3:
            ids = model.encode(text)
            hidden = module.model(torch.tensor([ids])).last_hidden_state[0]
            lse = torch.logsumexp(module.lm_head(hidden), -1)
            data.seqs.append((hidden.numpy().astype(np.float16), np.asarray(ids, np.int32), lse.numpy(), 1))
    data.tokens = sum(len(s[1]) for s in data.seqs)
    data.answer_tokens = data.tokens
    embed = module.get_input_embeddings().weight.detach().float()
    lm_rows = module.get_output_embeddings().weight.detach().float()
    return model, data, embed, lm_rows


def test_least_squares_start_predicts_the_next_feature(setup):
    model, data, embed, _ = setup
    torch.manual_seed(0)
    head = EagleHead(HeadConfig.for_target(model.module, model.name))
    r2 = least_squares_init(head, data, embed, model.module.model.norm.weight.detach().float())
    assert 0.2 < r2 <= 1.0
    assert float(head.o.weight.abs().sum()) == 0.0 and float(head.down.weight.abs().sum()) == 0.0


def test_unrolled_loss_goes_down_with_training(setup):
    model, data, embed, lm_rows = setup
    torch.manual_seed(0)
    head = EagleHead(HeadConfig.for_target(model.module, model.name))
    for p in head.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    opt = torch.optim.AdamW(head.parameters(), lr=3e-3)
    batch = data.tensors(list(range(len(data.seqs))))
    first = None
    for _ in range(30):
        loss, agree = unrolled_loss(head, embed, lm_rows, *batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = first if first is not None else float(loss)
    assert float(loss) < 0.8 * first
    assert len(agree) == 3 and all(0.0 <= a <= 1.0 for a in agree)
