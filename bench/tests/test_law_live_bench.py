"""bench/law_live.py runs the lab's own code end to end and prints the keys RESULTS.md quotes
(on the toy pair here: instant, exact)."""

import json

from bench import law_live


def test_the_bench_prints_its_keys_and_tells_the_rules_apart(capsys):
    assert law_live.main(["--target", "toy", "--samples", "200"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in (
        "samples",
        "broken_samples",
        "samples_per_s",
        "chi2_p_exact",
        "chi2_p_broken",
        "tv_exact",
        "tv_noise",
        "estimate_ratio",
    ):
        assert key in out, key
    assert out["samples"] == out["broken_samples"] == 200
    assert out["chi2_p_exact"] > 1e-3 > 1e-6 > out["chi2_p_broken"]
    assert out["samples_per_s"] > 0 and out["tv_exact"] < out["tv_broken"]
