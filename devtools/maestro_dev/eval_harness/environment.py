"""The seam between the eval executor and where it runs.

:class:`maestro_dev.eval_harness.executor.EvalExecutor` (setup, inject, settle, grade, finish) and
:class:`maestro_dev.eval_harness.surfaces.StackSurfaces` (the independent reads) are written once,
against :class:`EvalStack`: what a scenario needs of a stack. Two stacks provide it:

- the embedded stack (:class:`maestro_dev.local.stack.LocalStack`): signed webhooks into the
  in-process resolver, a virtual clock, moto's Step Functions;
- the eval copy in the cloud (:class:`maestro_dev.eval_harness.cloud.CloudEvalStack`): the same
  signed webhooks invoked on the copy's inbound function, real time (a wait is slept, bounded),
  the copy's own tables, queues and state machine (docs/evals-in-the-cloud.md).

What differs is only how a request goes in, how time passes and where the surfaces are; the
scenario, the grading lenses and the eval-run rows are the same code. Nothing here imports
boto3 or moto.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from maestro.domain.ledger import LedgerRow
from maestro.ports.evidence import MessageReader


class StackClock(Protocol):
    def now(self) -> datetime: ...


class WatcherDeps(Protocol):
    @property
    def messages(self) -> MessageReader: ...


class Watcher(Protocol):
    """The watcher's messenger reader: messages are read back by SID through it."""

    @property
    def deps(self) -> WatcherDeps: ...


class LedgerReader(Protocol):
    def for_package(self, package_id: str) -> list[LedgerRow]: ...


class EvalStack(Protocol):
    """What the eval executor and its reads use of a stack."""

    ddb: Any  # a DynamoDB client for the stack's stores
    tables: dict[str, str]  # logical table name (maestro.tables) → the stack's table
    idle: int  # the idle window (seconds): what an idle flush waits for
    max_wait: int  # the max-wait cap (seconds)

    @property
    def sfn(self) -> Any:
        """Step Functions: the package pipeline's executions (DescribeExecution)."""

    @property
    def twilio_token(self) -> str:
        """The stack's Twilio auth token (the scenario's webhooks are signed with it)."""

    @property
    def app_secret(self) -> str:
        """The stack's app signing secret (app messages and the assistant's kickoff)."""

    @property
    def directory(self) -> Any:
        """The directory's store, as the importer writes it (seeding a world)."""

    @property
    def parties(self) -> Any:
        """The parties' store, as the importer writes it."""

    @property
    def clock(self) -> StackClock: ...

    @property
    def watcher(self) -> Watcher: ...

    @property
    def ledger(self) -> LedgerReader: ...

    def http(self, event: dict[str, Any]) -> dict[str, Any]:
        """An API Gateway-shaped request through the stack's real inbound route; its answer."""

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, and what they start (flushes, executions) run."""

    def settle(self) -> None:
        """Let the watcher read every claim made so far."""

    def executions(self) -> list[dict[str, Any]]:
        """The package pipeline's executions, oldest first (ListExecutions items)."""

    def wait_for_executions(self, timeout: float = 30) -> None:
        """Until no package execution runs (raises TimeoutError past ``timeout``)."""

    def carrier_opt_out(self, phone: str) -> None:
        """From now on the carrier refuses texts to ``phone`` (Twilio's 21610 on each)."""
