"""What `maestro serve` prints as packages flow: one line when a package's execution starts,
one when it pauses at a gate (step mode), and one when it ends, with its route, its action
queue, what each action did, and how many of its claims the watcher has read back as evidence.

Everything is read back from the stack, as `maestro executions` and `maestro ledger` read it:
the execution's input and output (DescribeExecution), the open gates, and the ledger rows.
The end line waits for the watcher to have read the package's claims (a ledger row for each
event its output names), at most :data:`EVIDENCE_PATIENCE_SECONDS`; past that it says the
count is so far.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from maestro.domain.privacy import mask_phone_numbers
from maestro_dev.core_demo import action_label
from maestro_dev.local.stack import LocalStack

POLL_SECONDS = 0.25
EVIDENCE_PATIENCE_SECONDS = 10.0
"""Real seconds an ended package's line waits for the watcher before it prints the count so
far (a watcher retrying a claim, or a clock that stands still at ``--speed 0``)."""


@dataclass
class _Ended:
    arn: str
    since: float


@dataclass
class PackageFeed:
    """Call :meth:`poll` (or :meth:`run` on a thread) to print what changed since the last
    poll; each package is printed started, paused (each gate) and ended once."""

    stack: LocalStack
    out: TextIO
    patience: float = EVIDENCE_PATIENCE_SECONDS
    _started: set[str] = field(default_factory=set)
    _ended: dict[str, _Ended] = field(default_factory=dict)
    _printed: set[str] = field(default_factory=set)
    _gates: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(POLL_SECONDS):
            try:
                self.poll()
            except Exception as error:  # a feed that failed must not stop the server
                self._print(f"  (the package feed could not read the stack: {error})")

    def poll(self) -> None:
        with self._lock:
            now = time.monotonic()
            for execution in self.stack.executions():
                arn = execution["executionArn"]
                if arn not in self._started:
                    self._started.add(arn)
                    self._print(self._started_line(arn))
                if execution["status"] != "RUNNING" and arn not in self._ended:
                    self._ended[arn] = _Ended(arn, now)
            for gate in self.stack.pipeline.deps.gates.open_gates():
                if (gate.execution_id, gate.gate) not in self._gates:
                    self._gates.add((gate.execution_id, gate.gate))
                    name = gate.execution_id.rsplit(":", 1)[-1]
                    self._print(
                        f"package {name} paused {gate.gate}: `maestro step {name}` releases it"
                    )
            for arn, ended in list(self._ended.items()):
                if arn not in self._printed:
                    line = self._ended_line(arn, patient=now - ended.since < self.patience)
                    if line is not None:
                        self._printed.add(arn)
                        self._print(line)

    def _started_line(self, arn: str) -> str:
        described = self.stack.sfn.describe_execution(executionArn=arn)
        package = json.loads(described["input"])["package"]
        texts = len(package["messages"])
        sender = mask_phone_numbers(package.get("sender_phone") or "an unknown number")
        return (
            f"package {described['name']} started: {texts} text{'' if texts == 1 else 's'} "
            f"from {sender} (trigger {package['trigger']})"
        )

    def _ended_line(self, arn: str, *, patient: bool) -> str | None:
        """The package's end line; None while its claims are not all read and ``patient``."""
        described = self.stack.sfn.describe_execution(executionArn=arn)
        name = described["name"]
        output: dict[str, Any] = json.loads(described.get("output") or "{}")
        # An emergency is disposed and acted on before the lease: its queue is under "escalated".
        ran = output.get("escalated") or output
        rows = self.stack.ledger.for_package(json.loads(described["input"])["package_id"])
        read = {row.event_id for row in rows if row.event_id}
        unread = _claims(output, ran) - read
        if unread and patient:
            return None
        route = (output.get("precheck") or {}).get("route", "?")
        queued = [q["action"] for q in (ran.get("disposal") or {}).get("actions", [])]
        actions = ", ".join(action_label(a["lane"], a.get("target_wo_id")) for a in queued)
        evidence = sum(r.verdict == "evidence" for r in rows)
        shame = sum(r.standing_shame for r in rows)
        counted = f"evidence {evidence}, shame {shame}" + (
            f" so far ({len(unread)} claim{'' if len(unread) == 1 else 's'} not read yet)"
            if unread
            else ""
        )
        return (
            f"package {name} {described['status']}: route {route}; actions "
            f"{actions or 'none'}; {_outcome(ran, described)}; {counted}"
        )

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def _claims(output: dict[str, Any], ran: dict[str, Any]) -> set[str]:
    """The ids of the events the package's output says it announced: its effects' and its
    decision's."""
    events = [event for effect in ran.get("effects") or [] for event in effect.get("events", [])]
    decision = (output.get("persisted") or {}).get("event")
    return {event["event_id"] for event in [*events, *([decision] if decision else [])]}


def _outcome(ran: dict[str, Any], described: dict[str, Any]) -> str:
    """What each action did (``create_wo done → WO-…``), or why the execution did not end."""
    if described["status"] != "SUCCEEDED":
        cause = described.get("error") or described["status"].lower()
        return f"outcome {cause}"
    done = []
    for effect in ran.get("effects") or []:
        made = f" → {effect['created_wo_id']}" if effect.get("created_wo_id") else ""
        texts = len(effect.get("message_sids") or [])
        sent = f", {texts} text{'' if texts == 1 else 's'} sent" if texts else ""
        done.append(f"{effect['lane']} {effect['status']}{made}{sent}")
    return "outcome " + ("; ".join(done) if done else "nothing to do")
