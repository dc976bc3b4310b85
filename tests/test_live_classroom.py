"""The classroom: identical requests share a stored trace, the others wait their turn in order."""

import threading
import time
from types import SimpleNamespace

import pytest

from specdec_core.live.classroom import FIRST_GUESS_S_PER_TOKEN, Classroom, request_key
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.settings import LiveSettings


def _settings(**kw):
    return LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("toy_draft"), **kw)


def test_identical_requests_share_a_key_and_any_difference_splits_it():
    base = request_key(_settings(), "the cat")
    assert request_key(_settings(), "the cat") == base
    assert hash(request_key(_settings(), "the cat")) == hash(base)
    for other in (
        request_key(_settings(seed=1), "the cat"),
        request_key(_settings(temperature=0.5), "the cat"),
        request_key(_settings(compare=False), "the cat"),
        request_key(_settings(max_new_tokens=65), "the cat"),
        request_key(LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("ngram")), "the cat"),
        request_key(_settings(), "the cat "),
    ):
        assert other != base


def test_stored_traces_are_returned_and_the_oldest_dropped():
    room = Classroom(max_traces=2)
    assert room.lookup("a") is None
    room.store("a", "trace a")
    room.store("b", "trace b")
    assert room.lookup("a").trace == "trace a"  # a is now the most recently used
    room.store("c", "trace c")
    assert room.lookup("b") is None
    assert room.lookup("a").trace == "trace a" and room.lookup("c").trace == "trace c"
    assert room.lookup("c").stored_at <= time.time()
    assert room.forget() == 2 and room.lookup("a") is None


def test_the_line_is_first_come_first_served_with_positions_and_estimates():
    room = Classroom()
    first, second, third = room.enqueue(10), room.enqueue(20), room.enqueue(30)
    assert [first.position, second.position, third.position] == [0, 1, 2]
    assert first.wait_turn(0) and not second.wait_turn(0.01)
    # nothing measured yet: the first guess, the head's share shrinking as it runs
    assert third.wait_estimate_s == pytest.approx(30 * FIRST_GUESS_S_PER_TOKEN, abs=0.05)
    first.release(tokens_made=10, seconds=5.0)  # 0.5 s a token from now on
    assert room.seconds_per_token == 0.5
    assert [second.position, third.position] == [0, 1]
    assert third.wait_estimate_s == pytest.approx(20 * 0.5, abs=0.05)
    first.release(tokens_made=10, seconds=1.0)  # a second release changes nothing
    assert room.seconds_per_token == 0.5 and room.waiting == 2
    second.release()  # a Stop or an error: leaves the line, measures nothing
    assert third.position == 0 and third.wait_estimate_s == 0 and room.seconds_per_token == 0.5
    third.release()
    assert room.waiting == 0


def test_only_one_request_runs_at_a_time_and_all_are_served_in_order():
    room = Classroom()
    running, most, order = [0], [0], []
    guard = threading.Lock()
    tickets = [room.enqueue(1) for _ in range(8)]  # taken in this order, served in this order

    def session(i):
        ticket = tickets[i]
        while not ticket.wait_turn(0.05):
            pass
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
            order.append(i)
        time.sleep(0.01)
        with guard:
            running[0] -= 1
        ticket.release(1, 0.01)

    threads = [threading.Thread(target=session, args=(i,)) for i in reversed(range(8))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == list(range(8)) and most[0] == 1 and room.waiting == 0


def _trace(tokens=4, seconds=1.0):
    """What Classroom.finish reads of a LiveTrace: both runs complete."""
    run = SimpleNamespace(tokens=[0] * tokens, wall_s=seconds, complete=True)
    return SimpleNamespace(speculative=run, baseline=run, settings=SimpleNamespace(compare=True))


def test_a_finished_run_is_stored_before_the_next_in_line_gets_its_turn():
    room = Classroom()
    first, second = room.enqueue(8, "same"), room.enqueue(8, "same")
    store = room.store

    def slow_store(key, trace):  # a thread switch in the middle of finish()
        time.sleep(0.05)
        store(key, trace)

    room.store = slow_store
    seen = []

    def next_in_line():
        while not second.wait_turn(0.01):
            if room.lookup("same") is not None:
                break
        seen.append(room.lookup("same"))

    waiter = threading.Thread(target=next_in_line)
    waiter.start()
    room.finish(first, "same", _trace())
    waiter.join(5)
    assert seen and seen[0] is not None, "the same request found no trace and would run again"


def test_an_identical_request_waits_for_its_twin_only_not_for_other_requests_between():
    room = Classroom()
    twin, other, mine = room.enqueue(10, "x"), room.enqueue(1000, "y"), room.enqueue(10, "x")
    assert [twin.position, other.position, mine.position] == [0, 1, 1]
    # the estimate counts the twin's tokens only, not the 1000 of the request between
    assert mine.wait_estimate_s == pytest.approx(10 * FIRST_GUESS_S_PER_TOKEN, abs=0.05)
    # a new request waits for two runs: the twin's trace answers the third request
    late = room.enqueue(5, "z")
    assert late.position == 2
    assert late.wait_estimate_s == pytest.approx(1010 * FIRST_GUESS_S_PER_TOKEN, abs=0.05)
    woke = []
    waiter = threading.Thread(target=lambda: woke.append((mine.wait_turn(30), time.perf_counter())))
    waiter.start()
    time.sleep(0.05)
    stored_at = time.perf_counter()
    room.finish(twin, "x", _trace())
    waiter.join(5)
    turn, at = woke[0]
    assert not turn and at - stored_at < 1, "woken when its answer was stored, long before 30 s"
    assert room.lookup("x") is not None and other.position == 0  # the other request runs next
    mine.release()
    assert room.waiting == 2 and late.position == 1


def test_a_stopped_twin_leaves_the_request_in_line_for_its_own_turn():
    room = Classroom()
    twin, other, mine = room.enqueue(10, "x"), room.enqueue(10, "y"), room.enqueue(10, "x")
    room.finish(twin, "x", None)  # Stop or an error: nothing stored
    assert room.lookup("x") is None and mine.position == 1 and not mine.wait_turn(0.01)
    other.release()
    assert mine.wait_turn(0)
