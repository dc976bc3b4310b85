"""The live page on the real bundled model with the shipped Medusa heads (assets/medusa/).

Slow (a real model on CPU). A learner picks "Medusa heads" as the draft, as a chain and as a
tree, and the greedy comparison run says the speculative text is the target's own.
"""

import pytest

from support.apptest import open_page, rerun

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("shape", ["chain", "3-1"])
def test_medusa_heads_draft_on_the_live_page_and_keep_the_targets_greedy_text(shape):
    state = {
        "live_target": "bundled",
        "live_draft": "medusa",
        "live_t": 0.0,
        "live_max": 24,
        "live_shape": shape,
    }
    at = open_page("live", state=state, timeout=240)
    assert "Medusa heads (4 heads, shipped)" in at.selectbox(key="live_draft").options
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    assert any("identical token for token" in s.value for s in at.success)
    trace = at.session_state["live_trace"]
    assert trace.speculative.tokens == trace.baseline.tokens
    drafted = [e for e in trace.speculative.events if e.draft_tokens]
    assert drafted, "the heads drafted nothing"
    if shape != "chain":
        assert all(e.tree is not None for e in drafted)
