"""Queues and workflows: the debounce queue, the package executions, the step gates and the task
tokens they wait on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.models import FlushTrigger, Package


class DebounceSignal(Frozen):
    """What the debounce queue carries: "look at this conversation as of this seq"."""

    conversation_id: str
    seq: int = Field(ge=0)
    trigger: FlushTrigger | None = Field(
        default=None, description="None: an idle check; otherwise flush at once for this trigger"
    )
    probe: str | None = Field(
        default=None, description="A message id: run the severity probe on it (expedite if so)"
    )
    urgent_for: str | None = Field(
        default=None,
        description="A party id: an early idle check (the urgent idle window), which flushes "
        "only if that party has something urgent outstanding in memory (docs/flush-triggers.md)",
    )
    sent_at: AwareDatetime


class StrandedSweep(Frozen):
    """The debounce queue's scheduled record (every five minutes): look for conversations whose
    messages have waited past ``max_wait`` with no flush (a signal lost after the message was
    stored, a flush that failed every retry) and flush them: a stored message is never left."""

    sweep: Literal["stranded"] = "stranded"


MAX_DEBOUNCE_DELAY_SECONDS = 900
"""The longest delay a debounce signal can have (SQS's own cap)."""


class DebounceQueue(Protocol):
    def send(self, signal: DebounceSignal, delay_seconds: int) -> None:
        """Deliver ``signal`` after ``delay_seconds`` (at most MAX_DEBOUNCE_DELAY_SECONDS)."""


class WorkflowStarter(Protocol):
    def start(self, package: Package) -> bool:
        """Start the package pipeline execution named by the package id.

        Starting again with the same input is idempotent (True); an execution of that name with
        other input raises ExecutionAlreadyExists in Step Functions, returned as False. Either
        way the package's execution exists: a redelivery counts as done.
        """


class Gate(Frozen):
    """A paused step gate: its task token waits for SendTaskSuccess."""

    execution_id: str
    gate: str
    token: str
    package_id: str
    index: int | None = None
    paused_at: AwareDatetime


class TaskTokenGoneError(Exception):
    """The task token no longer waits (answered already, timed out, or its execution ended)."""


class TaskTokens(Protocol):
    """Completing a Step Functions task token (a WO execution's wait)."""

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess; raises TaskTokenGoneError when the token waits no more."""


class GateStore(Protocol):
    def put(self, gate: Gate) -> None: ...

    def open_gates(self) -> list[Gate]: ...

    def remove(self, execution_id: str, gate: str, index: int | None) -> None: ...
