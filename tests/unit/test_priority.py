"""The embedded stack's priority for requests being answered (``maestro_dev.local.threads``):
who gives way, for how long, and that nothing is left counted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from maestro_dev.local.threads import Priority

LIVENESS = 30.0  # seconds before a test gives up on a thread (never reached when it passes)


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIVENESS
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


def _in_thread(work: Callable[[], None]) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def test_another_thread_waits_while_a_request_is_answered_and_goes_on_after() -> None:
    priority = Priority(max_wait_seconds=LIVENESS)
    request = object()
    priority.arrived(request)
    thread, done = _in_thread(priority.give_way)
    _until(lambda: priority.waiting == 1)
    assert not done.is_set()
    priority.answered(request)
    thread.join(LIVENESS)
    assert done.is_set()
    assert (priority.waiting, priority.waits, priority.pending) == (0, 1, 0)


def test_the_thread_answering_a_request_never_waits() -> None:
    priority = Priority(max_wait_seconds=LIVENESS)
    other = object()
    priority.arrived(other)
    with priority.request():
        assert priority.pending == 2
        priority.give_way()  # would wait for ``other`` if it were not answering one itself
    assert priority.waits == 0
    assert priority.pending == 1
    priority.answered(other)
    assert priority.pending == 0


def test_a_nested_request_in_the_same_thread_is_counted_once() -> None:
    priority = Priority()
    with priority.request():
        with priority.request():
            assert priority.pending == 1
        assert priority.answers_a_request()
    assert not priority.answers_a_request()
    assert priority.pending == 0


def test_nothing_waits_when_no_request_is_being_answered() -> None:
    priority = Priority(max_wait_seconds=LIVENESS)
    priority.give_way()
    with priority.request():
        pass
    priority.give_way()
    assert priority.waits == 0


def test_a_request_past_its_budget_holds_no_one() -> None:
    # A client that connects and sends nothing keeps its thread until the read times out; the
    # pipeline must not wait for it that long.
    priority = Priority(max_wait_seconds=LIVENESS, request_budget_seconds=0.0)
    priority.arrived(object())
    thread, done = _in_thread(priority.give_way)
    thread.join(LIVENESS)
    assert done.is_set()
    assert priority.waits == 0


def test_a_flood_of_requests_slows_the_others_but_never_stops_them() -> None:
    priority = Priority(max_wait_seconds=0.01, request_budget_seconds=LIVENESS)
    priority.arrived(object())  # never answered
    thread, done = _in_thread(priority.give_way)
    thread.join(LIVENESS)
    assert done.is_set()
    assert priority.waits == 1
