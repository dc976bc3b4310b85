"""A draft's step cost as a fraction of the target's, which the exported cards record as ``cost_ratio``."""

from __future__ import annotations


def step_cost_ratio(target, steps: int = 40, draft=None) -> float:
    """Median draft step ÷ median target decode step (one token each, warm caches); the
    draft is the shipped EAGLE head unless given."""
    import time

    from specdec_core.models.head import HeadDraft

    ids = target.encode("Explain how bridges carry their weight.", chat=True)
    t_sess = target.session(ids)
    draft = draft or HeadDraft(target)
    d_sess = draft.session(ids)
    d_sess.bind_target(t_sess)
    d_sess.logits([ids[-1]], last_only=True)
    base_t, base_d = t_sess.length, d_sess.length
    t_times, d_times = [], []
    for i in range(steps):
        tok = ids[i % len(ids)]
        start = time.perf_counter()
        t_sess.logits([tok], last_only=True)
        t_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        d_sess.logits([tok], last_only=True)
        d_times.append(time.perf_counter() - start)
    t_sess.truncate(base_t)
    d_sess.truncate(base_d)
    return sorted(d_times)[steps // 2] / sorted(t_times)[steps // 2]
