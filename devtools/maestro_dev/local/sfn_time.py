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
        self._lock = threading.RLock()
        self._condition = threading.Condition(self._lock)
        self._closed = False
        self._ids = itertools.count()
        self._deadlines: dict[int, datetime] = {}
        # Each wait sleeps on a condition of its own (sharing the one lock), woken only when
        # its event is set or the clock reaches its deadline: one shared condition woke every
        # waiting thread (two per waiting execution) at every set and every tick.
        self._sleepers: dict[int, tuple[threading.Condition, threading.Event]] = {}
        self._tokens: dict[str, TokenWait] = {}
        # Each timed wait of an execution's thread, by key: whose, and whether it is the wait
        # of a Task's own timeout (the thread that runs the state) or one inside the task.
        self._owners: dict[int, tuple[str, bool]] = {}
        self._local = threading.local()  # the execution (and role) the current thread waits for
        self._stop_listening = clock.listen(self.wake)

    def wake(self) -> None:
        """The clock moved: the waits it brought to their deadlines look again."""
        with self._condition:
            now = self._clock.now()
            for key, (sleeper, _) in self._sleepers.items():
                deadline = self._deadlines.get(key)
                if deadline is not None and now >= deadline:
                    sleeper.notify()
            self._condition.notify_all()  # whoever waits on the shared one (none of ours)

    def event_set(self, event: threading.Event) -> None:
        """``event`` was set: its waits look again."""
        with self._condition:
            for sleeper, awaited in self._sleepers.values():
                if awaited is event:
                    sleeper.notify()

    def close(self) -> None:
        """Every wait ends now (as a timeout), and every later one at once."""
        with self._condition:
            self._closed = True
            for sleeper, _ in self._sleepers.values():
                sleeper.notify()
        self._stop_listening()

    @contextmanager
    def waiting_for(self, execution_arn: str, *, task_timeout: bool) -> Iterator[None]:
        """The current thread's timed waits are ``execution_arn``'s: its Task's own timeout
        (``task_timeout``) or a wait inside the task (a task token's)."""
        before = getattr(self._local, "owner", None)
        self._local.owner = (execution_arn, task_timeout)
        try:
            yield
        finally:
            self._local.owner = before

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """``event.wait(timeout)`` with ``timeout`` in virtual seconds."""
        key = next(self._ids)
        owner = getattr(self._local, "owner", None)
        with self._condition:
            if timeout is not None:
                self._deadlines[key] = self._clock.now() + timedelta(seconds=timeout)
                if owner is not None:
                    self._owners[key] = owner
        self._moved()
        sleeper = threading.Condition(self._lock)  # the one lock, a wake-up of its own
        try:
            with self._condition:
                self._sleepers[key] = (sleeper, event)
                while not event.is_set() and not self._closed:
                    deadline = self._deadlines.get(key)
                    if deadline is not None and self._clock.now() >= deadline:
                        break
                    sleeper.wait()
                return event.is_set()
        finally:
            with self._condition:
                self._sleepers.pop(key, None)
                self._deadlines.pop(key, None)
                self._owners.pop(key, None)
            # A wait that ends changes who is waiting; one that timed out inside an abandoned
            # task records no history event, and the stack must look again all the same.
            self._moved()

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
        self._moved()

    def task_ended(self, execution_arn: str) -> None:
        """A Task of ``execution_arn`` ended (answered, timed out, failed): whatever token wait
        it left behind (its own timeout can fire before the wait inside it, which then goes on
        for a moment) is over; the execution moves."""
        with self._condition:
            for callback_id in [
                c for c, w in self._tokens.items() if w.execution_arn == execution_arn
            ]:
                del self._tokens[callback_id]
        self._moved()

    def all_token_waits(self) -> list[TokenWait]:
        """Every task-token wait not yet ended, its deadline passed or not."""
        with self._condition:
            return list(self._tokens.values())

    def waiting_on_tokens(self) -> dict[str, TokenWait]:
        """Executions waiting on a task token, by ARN, with the moment the first of their
        waits times out. Waiting means: the token's wait began, the Task's own timeout wait
        began too (until then the execution is still moving: the clock must not move under
        it, or that timeout would count from a later moment than the token's), and no wait of
        the execution is at its deadline (that one is timing out: it is moving)."""
        now = self._clock.now()
        with self._condition:
            by_execution: dict[str, list[tuple[datetime, bool]]] = {}
            for key, (arn, task_timeout) in self._owners.items():
                if (deadline := self._deadlines.get(key)) is not None:
                    by_execution.setdefault(arn, []).append((deadline, task_timeout))
            found = {}
            for wait in self._tokens.values():
                waits = by_execution.get(wait.execution_arn, [])
                if not any(task_timeout for _, task_timeout in waits):
                    continue
                first = min(deadline for deadline, _ in waits)
                if first > now:
                    found[wait.execution_arn] = TokenWait(
                        wait.execution_arn, wait.callback_id, first
                    )
            return found


def _event_class(waits: VirtualWaits) -> type[threading.Event]:
    class VirtualEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            return waits.wait(self, timeout)

        def set(self) -> None:
            super().set()
            waits.event_set(self)

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

    original_timed: Callable[..., Any] = execute_state.ExecutionState._evaluate_with_timeout

    def tracked_wait(
        self: Any, env: Any, timeout_seconds: int, callback_endpoint: Any, heartbeat_endpoint: Any
    ) -> Any:
        limit = timeout_seconds
        if heartbeat_endpoint is not None:
            limit = min(limit, heartbeat_endpoint._heartbeat_seconds)
        arn = _execution_of(env)
        waits.token_wait_started(
            TokenWait(
                execution_arn=arn,
                callback_id=callback_endpoint.callback_id,
                deadline=waits._clock.now() + timedelta(seconds=limit),
            )
        )
        try:
            with waits.waiting_for(arn, task_timeout=False):
                return original_wait(
                    self, env, timeout_seconds, callback_endpoint, heartbeat_endpoint
                )
        finally:
            waits.token_wait_ended(callback_endpoint.callback_id)

    def timed(self: Any, env: Any) -> Any:
        # The thread that runs a Task with a timeout waits on it: that wait is the execution's.
        arn = _execution_of(env)
        try:
            with waits.waiting_for(arn, task_timeout=True):
                return original_timed(self, env)
        finally:
            waits.task_ended(arn)

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
        stack.enter_context(
            mock.patch.object(execute_state.ExecutionState, "_evaluate_with_timeout", timed)
        )
        yield


def _execution_of(env: Any) -> str:
    return str(env.states.context_object.context_object_data["Execution"]["Id"])
