"""The embedded stack's virtual Step Functions waits (``maestro_dev.local.sfn_time``): when an
execution counts as waiting on a person, and until when."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from maestro_dev.local.clock import VirtualClock
from maestro_dev.local.sfn_time import TokenWait, VirtualWaits

pytestmark = pytest.mark.integration

ARN = "arn:aws:states:us-east-1:123456789012:execution:maestro-local-work-order:WO-1"
START = datetime(2026, 6, 1, 12, tzinfo=UTC)


def _waiting(waits: VirtualWaits, task_timeout: bool, seconds: float) -> threading.Thread:
    """A thread of the execution in a timed wait of ``seconds`` (nobody sets its event)."""

    def wait() -> None:
        with waits.waiting_for(ARN, task_timeout=task_timeout):
            waits.wait(threading.Event(), seconds)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def _until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("never")


def test_a_token_wait_counts_from_the_first_of_the_executions_own_waits() -> None:
    # moto's Task waits twice: on its own timeout (the thread running the state) and, inside
    # the task, on the token; each counts its timeout from the moment it begins. The stack once
    # took an execution for idle as soon as the token's wait began and moved the clock before
    # the Task's own wait began: that wait then ended later than the token's recorded deadline,
    # and past that deadline the execution counted as moving though nothing moved (a load run
    # hung for its ten minutes of patience).
    clock = VirtualClock(START)
    waits = VirtualWaits(clock, lambda: None)
    try:
        waits.token_wait_started(TokenWait(ARN, "token-1", START + timedelta(hours=4)))
        inner = _waiting(waits, task_timeout=False, seconds=4 * 3600)
        _until(lambda: waits.next_deadline(START) is not None)
        assert waits.waiting_on_tokens() == {}  # the Task's own wait has not begun: moving
        clock.set(START + timedelta(seconds=5))  # what a stack that took it for idle did
        outer = _waiting(waits, task_timeout=True, seconds=4 * 3600)
        _until(lambda: ARN in waits.waiting_on_tokens())
        assert waits.waiting_on_tokens()[ARN].deadline == START + timedelta(hours=4)
        clock.set(START + timedelta(hours=4))  # the token's wait times out first
        inner.join(timeout=5)
        waits.token_wait_ended("token-1")
        assert waits.waiting_on_tokens() == {}
        assert waits.next_deadline(clock.now()) == START + timedelta(hours=4, seconds=5)
        clock.set(START + timedelta(hours=4, seconds=5))
        outer.join(timeout=5)
        assert not outer.is_alive()
    finally:
        waits.close()


def test_a_token_left_behind_by_a_task_that_timed_out_is_no_wait() -> None:
    clock = VirtualClock(START)
    waits = VirtualWaits(clock, lambda: None)
    try:
        waits.token_wait_started(TokenWait(ARN, "token-1", START + timedelta(hours=4)))
        waits.task_ended(ARN)  # its Task timed out (or failed) before the token's wait ended
        assert waits.all_token_waits() == []
    finally:
        waits.close()
