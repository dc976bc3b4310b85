"""Training the head (train/fit.py) on a tiny random Llama's own prefill features.

The closed-form start must predict the next feature better than a constant, and gradient
steps on the unrolled loss must lower it; both on real features of a real (tiny) target.
"""

from __future__ import annotations

from pathlib import Path

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
    assert (
        float(head.o.weight.detach().abs().sum()) == 0.0
        and float(head.down.weight.detach().abs().sum()) == 0.0
    )


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
        first = first if first is not None else loss.item()
    assert loss.item() < 0.8 * first
    assert len(agree) == 3 and all(0.0 <= a <= 1.0 for a in agree)


def _work_folder(setup, folder: Path, monkeypatch) -> None:
    """`folder` as the training work folder, holding the tiny target's features as one shard."""
    import specdec_core.models
    from train import paths

    model, data, _, _ = setup
    monkeypatch.setattr(paths, "WORK", folder)
    monkeypatch.setattr(specdec_core.models, "load_bundled", lambda: model)
    shards = folder / "features" / "train"
    shards.mkdir(parents=True)
    feats, toks, lse = (np.concatenate([s[i] for s in data.seqs]) for i in range(3))
    lengths = np.asarray([len(s[1]) for s in data.seqs], np.int32)
    np.savez(shards / "shard_0000.npz", features=feats, tokens=toks, lse=lse, argmax=toks,
             answer_start=np.ones(len(lengths), np.int32), length=lengths)  # fmt: skip
    np.save(folder / "vocab.npy", np.arange(model.module.config.vocab_size, dtype=np.int64))


def test_a_stopped_run_resumes_to_the_weights_of_one_that_never_stopped(setup, tmp_path, monkeypatch):
    """A fit stopped part-way (time budget, step limit or a `stop` file) and rerun continues
    from its checkpoint: same batches, optimiser state and schedule, so its weights equal those
    of a run that never stopped, bit for bit on the same machine."""
    from train import fit

    monkeypatch.setattr(fit, "BATCH_TOKENS", 40)  # several batches an epoch, so order matters
    monkeypatch.setattr(fit, "SAVE_EVERY", 2)
    _work_folder(setup, tmp_path / "whole", monkeypatch)
    fit.run(minutes=5, max_steps=7, schedule=7, lr=1e-3)
    whole = torch.load(fit.checkpoint_path(), weights_only=False)

    _work_folder(setup, tmp_path / "parts", monkeypatch)
    fit.run(minutes=5, max_steps=3, schedule=7, lr=1e-3)
    (tmp_path / "parts" / "stop").touch()  # a stop file ends a run at once, after saving
    fit.run(minutes=5, max_steps=7)
    stopped = torch.load(fit.checkpoint_path(), weights_only=False)
    assert stopped["state"]["step"] == 3
    (tmp_path / "parts" / "stop").unlink()
    fit.run(minutes=5, max_steps=7)  # schedule and learning rate come from the checkpoint
    parts = torch.load(fit.checkpoint_path(), weights_only=False)

    assert parts["state"]["step"] == whole["state"]["step"] == 7
    assert [row[:2] for row in parts["state"]["log"]] == [row[:2] for row in whole["state"]["log"]]
    assert all(torch.equal(parts["head"][k], v) for k, v in whole["head"].items())
    assert not all(torch.equal(stopped["head"][k], v) for k, v in whole["head"].items())  # it trained on


def test_a_new_run_can_start_from_a_finished_one(setup, tmp_path, monkeypatch):
    """`fit --init`: a second run takes the first's weights (not its optimiser or schedule) and
    records where it started, so the card can give both stages' commands."""
    from train import fit

    model, _, _, _ = setup
    _work_folder(setup, tmp_path, monkeypatch)

    fit.run(minutes=5, max_steps=3, schedule=3, lr=1e-3)
    first = torch.load(fit.checkpoint_path(), weights_only=False)
    assert first["state"]["step"] == 3 and "init_r2" in first["state"]
    assert first["state"]["feature_shards"] == {"train": 1, "corpus": 0}
    fit.checkpoint_path().rename(tmp_path / "stage1.pt")

    fit.run(minutes=5, max_steps=0, schedule=10, lr=5e-4, init=str(tmp_path / "stage1.pt"))
    second = torch.load(fit.checkpoint_path(), weights_only=False)
    state = second["state"]
    assert state["step"] == 0 and state["schedule"] == 10 and state["lr"] == 5e-4
    assert state["init"]["file"] == "stage1.pt" and state["init"]["step"] == 3
    assert state["init"]["schedule"] == 3 and state["init"]["feature_shards"] == {"train": 1, "corpus": 0}
    assert all(torch.equal(second["head"][k], v) for k, v in first["head"].items())
    assert "init_r2" not in state  # no least-squares start: the weights came from stage 1

    # an exported head file starts a run too: its float16 weights, its card's numbers
    from specdec_core.models.head import EagleHead, HeadConfig, save_head

    head = EagleHead(HeadConfig.for_target(model.module, model.name))
    head.load_state_dict(second["head"])
    exported = tmp_path / "shipped-head.safetensors"
    card = {"steps": 7, "schedule": 9, "lr": 1e-4, "feature_shards": {"train": 1, "corpus": 0},
            "train_sequences": 12, "train_positions": 99, "train_answer_tokens": 80,
            "init": {"file": "stage1.pt", "step": 3}}  # fmt: skip
    save_head(head, torch.arange(5), exported, card)
    fit.checkpoint_path().unlink()
    fit.run(minutes=5, max_steps=0, schedule=4, lr=1e-4, init=str(exported))
    third = torch.load(fit.checkpoint_path(), weights_only=False)
    init = third["state"]["init"]
    assert init["file"] == "checkpoint_shipped-head.pt" and init["exported"] is True
    assert init["step"] == 7 and init["vocabulary"] == 5 and init["init"]["file"] == "stage1.pt"
    assert init["data"] == {"sequences": 12, "positions": 99, "answer_tokens": 80}
    assert third["state"]["vocabulary"] == model.module.config.vocab_size
    assert all(torch.equal(third["head"][k], v.half().float()) for k, v in second["head"].items())


def test_the_model_card_gives_both_stages_of_a_run_started_from_another():
    import json

    from train import export, paths

    card = json.loads((paths.ASSET / "card.json").read_text())
    card.pop("init", None)
    plain = export.model_card(card)
    assert "--init" not in plain and "stage 1" not in plain
    card["init"] = {"file": "stage1.pt", "step": 710, "schedule": 300, "lr": 2e-4,
                    "feature_shards": {"train": 9, "corpus": 9}}  # fmt: skip
    card["feature_shards"] = {"train": 20, "corpus": 15, "held_out": 2}
    text = export.model_card(card)
    first, second = text.split("# stage 2")
    assert "--limit 288" in first and "fit --steps 710 --schedule 300 --lr 0.0002" in first
    assert "mv artifacts/head/checkpoint.pt artifacts/head/stage1.pt" in first
    assert "--limit 640" in second and "--shards 15" in second
    assert "fit --init artifacts/head/stage1.pt" in second
    assert "train vocab" not in text  # both stages had the default vocabulary

    card["vocabulary"] = 8192  # a wider vocabulary for the last stage, started from an export
    card["init"].update(vocabulary=4096, exported=True)
    first, second = export.model_card(card).split("# stage 2")
    assert "train vocab" not in first and "started from its exported float16 weights" in second
    assert (
        second.index("features --split train") < second.index("train vocab --size 8192") < second.index("fit")
    )


def test_the_model_card_unrolls_a_chain_of_stages():
    import json

    from train import export, paths

    card = json.loads((paths.ASSET / "card.json").read_text())
    first = {
        "file": "s1.pt",
        "step": 710,
        "schedule": 300,
        "lr": 2e-4,
        "feature_shards": {"train": 9, "corpus": 9},
    }
    second = {"file": "s2.pt", "step": 1000, "schedule": 1000, "lr": 3e-4,
              "feature_shards": {"train": 38, "corpus": 15}, "init": first}  # fmt: skip
    card["init"] = second
    card["feature_shards"] = {"train": 57, "corpus": 15, "held_out": 2}
    text = export.model_card(card)
    one, rest = text.split("# stage 2")
    two, three = rest.split("# stage 3")
    assert "fit --steps 710 --schedule 300" in one and "artifacts/head/s1.pt" in one and "--init" not in one
    assert "--limit 1216" in two and "fit --init artifacts/head/s1.pt --steps 1000" in two
    assert "mv artifacts/head/checkpoint.pt artifacts/head/s2.pt" in two
    assert "--limit 1824" in three and "fit --init artifacts/head/s2.pt" in three


def test_every_step_has_a_batch_when_epochs_pack_differently(setup, monkeypatch):
    """Epochs are shuffled and packed afresh, so their batch counts differ; a step must still
    find a batch in any epoch (a fit once stopped on an IndexError there)."""
    from train import fit

    _, data, _, _ = setup
    monkeypatch.setattr(fit, "BATCH_TOKENS", 40)  # a few sequences a batch
    counts = {e: len(data.batches(e)) for e in range(40)}
    assert len(set(counts.values())) > 1  # the packing does differ between epochs
    per_epoch = counts[0]
    for step in range(40 * per_epoch):
        batch = data.batch_at(step, per_epoch)
        assert batch and all(0 <= i < len(data.seqs) for i in batch)
    epoch = next(e for e, n in counts.items() if n != per_epoch)
    assert data.batch_at(epoch * per_epoch + per_epoch - 1, per_epoch) in data.batches(epoch)


def test_the_vocabulary_counts_only_the_first_answer_shards(tmp_path, monkeypatch):
    """A later wave of answers must not move the vocabulary the shipped heads were trained on."""
    import json

    from train import features, paths

    for split, shards in (("train", ([5, 5, 6], [7, 7, 7, 7])), ("corpus", ([6, 6],))):
        folder = tmp_path / "data" / split
        folder.mkdir(parents=True)
        for i, answer in enumerate(shards):
            (folder / f"shard_{i:04d}.json").write_text(json.dumps({"records": [{"answer": answer}]}))
    monkeypatch.setattr(paths, "GENERATED", tmp_path / "data")
    monkeypatch.setattr(paths, "WORK", tmp_path)
    monkeypatch.setattr(paths, "HEAD_VOCAB", 1)
    monkeypatch.setattr(paths, "VOCAB_TRAIN_SHARDS", 1)
    features.write_vocab(None)
    assert np.load(tmp_path / "vocab.npy").tolist() == [6]  # 7 leads only in the second shard
    monkeypatch.setattr(paths, "VOCAB_TRAIN_SHARDS", 2)
    features.write_vocab(None)
    assert np.load(tmp_path / "vocab.npy").tolist() == [7]
    features.write_vocab(None, 2)  # `python -m train vocab --size 2`
    assert np.load(tmp_path / "vocab.npy").tolist() == [6, 7]


def test_recording_bench_figures_rewrites_both_model_cards(tmp_path, monkeypatch):
    """`python -m train card --bench LOG`: card.json and MODEL_CARD.md show the same figures."""
    import json
    import shutil

    from specdec_core.models import medusa as medusa_model
    from train import bench_card, paths

    root = Path(__file__).resolve().parents[1] / "assets"
    for name in ("head", "medusa"):
        (tmp_path / name).mkdir()
        shutil.copy(root / name / "card.json", tmp_path / name / "card.json")
    monkeypatch.setattr(paths, "ASSET", tmp_path / "head")
    monkeypatch.setattr(medusa_model, "DEFAULT_MEDUSA", tmp_path / "medusa" / "weights.safetensors")
    log = tmp_path / "bench.log"
    log.write_text('table\n{"head_chat": 9.87, "head_alpha": 0.65, "medusa_chat": 5.43, "ngram_copy": 1.0}\n')
    bench_card.record_bench(str(log))
    assert json.loads((tmp_path / "head" / "card.json").read_text())["bench"]["head_chat"] == 9.87
    assert "head_chat 9.87" in (tmp_path / "head" / "MODEL_CARD.md").read_text()
    assert "medusa_chat 5.43" in (tmp_path / "medusa" / "MODEL_CARD.md").read_text()
