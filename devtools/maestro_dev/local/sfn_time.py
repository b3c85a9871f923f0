"""moto's Step Functions waits on the embedded stack's virtual clock.

moto runs a Task's ``TimeoutSeconds``/``TimeoutSecondsPath`` as a wait on a ``threading.Event``
(``ExecuteState._evaluate_with_timeout``), and a ``.waitForTaskToken`` callback, with its
heartbeat, as waits on more of them (``CallbackEndpoint.wait``,
``HeartbeatEndpoint.clear_and_wait``): wall-clock seconds. On the stack they count virtual
seconds instead, so ``stack.advance(4 * 3600)`` times out a routine offer and a test costs no
wall time: :func:`virtual_step_functions_time` swaps those modules' ``Event`` for one whose
timed wait ends when the event is set, when the virtual clock reaches its deadline, or when the
stack closes (so no thread is left waiting after a test).

:class:`VirtualWaits` also knows every deadline waited on (``advance`` stops at each on its
way, as it stops at each debounce signal) and which execution waits on a task token, until when
(such an execution waits for a person: it is idle until time passes or someone answers).
Devtools only; the runtime never imports this.
"""

from __future__ import annotations

import itertools
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

from maestro_dev.local.clock import VirtualClock

__all__ = ["TokenWait", "VirtualWaits", "virtual_step_functions_time"]


@dataclass(frozen=True)
class TokenWait:
    """An execution waiting on a task token: which, for which token, and until when."""

    execution_arn: str
    callback_id: str
    deadline: datetime


class VirtualWaits:
    def __init__(self, clock: VirtualClock, moved: Callable[[], None]) -> None:
        self._clock = clock
        self._moved = moved  # the stack's progress: a new wait is something a waiter looks at
        self._condition = threading.Condition()
        self._closed = False
        self._ids = itertools.count()
        self._deadlines: dict[int, datetime] = {}
        self._tokens: dict[str, TokenWait] = {}
        self._stop_listening = clock.listen(self.wake)

    def wake(self) -> None:
        with self._condition:
            self._condition.notify_all()

    def close(self) -> None:
        """Every wait ends now (as a timeout), and every later one at once."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        self._stop_listening()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """``event.wait(timeout)`` with ``timeout`` in virtual seconds."""
        key = next(self._ids)
        with self._condition:
            if timeout is not None:
                self._deadlines[key] = self._clock.now() + timedelta(seconds=timeout)
        self._moved()
        try:
            with self._condition:
                while not event.is_set() and not self._closed:
                    deadline = self._deadlines.get(key)
                    if deadline is not None and self._clock.now() >= deadline:
                        break
                    self._condition.wait()
                return event.is_set()
        finally:
            with self._condition:
                self._deadlines.pop(key, None)

    def next_deadline(self, after: datetime) -> datetime | None:
        """The earliest deadline waited on later than ``after``."""
        with self._condition:
            later = [d for d in self._deadlines.values() if d > after]
        return min(later, default=None)

    def token_wait_started(self, wait: TokenWait) -> None:
        with self._condition:
            self._tokens[wait.callback_id] = wait
        self._moved()

    def token_wait_ended(self, callback_id: str) -> None:
        with self._condition:
            self._tokens.pop(callback_id, None)

    def all_token_waits(self) -> list[TokenWait]:
        """Every task-token wait not yet ended, its deadline passed or not."""
        with self._condition:
            return list(self._tokens.values())

    def waiting_on_tokens(self) -> dict[str, TokenWait]:
        """Executions waiting on a task token whose deadline is still ahead, by ARN (one at
        the deadline is about to time out: it is moving, not waiting)."""
        now = self._clock.now()
        with self._condition:
            return {w.execution_arn: w for w in self._tokens.values() if w.deadline > now}


def _event_class(waits: VirtualWaits) -> type[threading.Event]:
    class VirtualEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            return waits.wait(self, timeout)

        def set(self) -> None:
            super().set()
            waits.wake()

    return VirtualEvent


@contextmanager
def virtual_step_functions_time(waits: VirtualWaits) -> Iterator[None]:
    """moto's Task timeouts, callback waits and heartbeats wait on ``waits``' virtual clock;
    each ``.waitForTaskToken`` wait is known to ``waits`` while it lasts."""
    from moto.stepfunctions.parser.asl.component.state.exec import execute_state
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_callback as service_callback,
    )
    from moto.stepfunctions.parser.asl.eval.callback import callback

    event = _event_class(waits)
    threading_with_virtual_events = types.SimpleNamespace(
        **{k: getattr(threading, k) for k in dir(threading) if not k.startswith("__")}
    )
    threading_with_virtual_events.Event = event
    service = service_callback.StateTaskServiceCallback
    original_wait: Callable[..., Any] = service._eval_wait_for_task_token
    original_notify: Callable[..., Any] = callback.CallbackEndpoint.notify

    def tracked_wait(
        self: Any, env: Any, timeout_seconds: int, callback_endpoint: Any, heartbeat_endpoint: Any
    ) -> Any:
        limit = timeout_seconds
        if heartbeat_endpoint is not None:
            limit = min(limit, heartbeat_endpoint._heartbeat_seconds)
        arn = env.states.context_object.context_object_data["Execution"]["Id"]
        waits.token_wait_started(
            TokenWait(
                execution_arn=arn,
                callback_id=callback_endpoint.callback_id,
                deadline=waits._clock.now() + timedelta(seconds=limit),
            )
        )
        try:
            return original_wait(self, env, timeout_seconds, callback_endpoint, heartbeat_endpoint)
        finally:
            waits.token_wait_ended(callback_endpoint.callback_id)

    def notify(self: Any, outcome: Any) -> None:
        # Answered (SendTaskSuccess/Failure): it waits no more from this instant, before its
        # thread wakes, so nobody takes the execution for idle in between.
        waits.token_wait_ended(self.callback_id)
        original_notify(self, outcome)

    with ExitStack() as stack:
        stack.enter_context(
            mock.patch.object(execute_state, "threading", threading_with_virtual_events)
        )
        stack.enter_context(mock.patch.object(callback, "Event", event))
        stack.enter_context(mock.patch.object(service, "_eval_wait_for_task_token", tracked_wait))
        stack.enter_context(mock.patch.object(callback.CallbackEndpoint, "notify", notify))
        yield
