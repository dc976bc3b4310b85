"""The loaders warm each transformer they build, so the first run anyone times is not the
process's first forward (specdec_core/live/warmup.py); warming changes nothing a run gives."""

from specdec_core.engine import RunOptions, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec, load_draft, load_target
from specdec_core.models import HFCausalLM
from specdec_core.sampling import SamplingConfig


def _tokens(target, draft, ids):
    run = generate(
        target,
        draft,
        ids,
        SamplingConfig(temperature=1.0),
        3,
        12,
        seed=7,
        options=RunOptions(stop_at_eos=False),
    )
    return [t for e in run for t in e.committed]


def test_the_loaders_warm_every_transformer_they_build(tiny_hf_folders):
    target = load_target(TargetSpec("custom", str(tiny_hf_folders["target"])))
    assert target.warm_up_s > 0
    for spec in (DraftSpec("custom", source=str(tiny_hf_folders["draft"])), DraftSpec("layerskip", 2)):
        assert load_draft(target, spec).warm_up_s > 0, spec
    assert not hasattr(load_draft(target, DraftSpec("ngram")), "warm_up_s")  # no model of its own


def test_a_warmed_pair_runs_exactly_as_a_cold_one(tiny_hf_folders):
    cold = HFCausalLM.load(tiny_hf_folders["target"])
    cold_draft = HFCausalLM.load(tiny_hf_folders["draft"])
    ids = cold.encode("the cat sat")
    expected = _tokens(cold, cold_draft, ids)
    warm = load_target(TargetSpec("custom", str(tiny_hf_folders["target"])))
    warm_draft = load_draft(warm, DraftSpec("custom", source=str(tiny_hf_folders["draft"])))
    assert _tokens(warm, warm_draft, ids) == expected


def test_a_model_that_cannot_run_the_warm_up_prompt_still_loads(tiny_hf_folders, monkeypatch):
    from specdec_core.live import warmup

    monkeypatch.setattr(warmup, "WARM_TOKENS", 10**6)  # more than any context holds
    target = load_target(TargetSpec("custom", str(tiny_hf_folders["target"])))
    assert not hasattr(target, "warm_up_s")
    assert _tokens(target, HFCausalLM.load(tiny_hf_folders["draft"]), target.encode("the cat"))  # it runs
