"""In-memory stand-ins for the pipeline's remaining ports (tests only).

The lane ports' fakes live in ``maestro_dev.fakes``; these complete the set so the pipeline's
steps can run in-process without AWS: the decision log, the state store, the conversation
buffer's lease, the event bus and the gate store; and for the work order machine's steps, the
dispatch runs, the directory and the task tokens. They follow the adapters' observable rules
(append-only, optimistic versions, flush-order turns with takeover of an expired holder, a task
token answered once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from maestro.domain.directory import (
    ALL_PROPERTIES,
    Directory,
    OnCall,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
    on_call_at,
    vendors_for,
)
from maestro.domain.dispatch import DispatchRun
from maestro.domain.events import DomainEvent
from maestro.domain.models import Message
from maestro.domain.records import (
    ActionOutcomeRecord,
    MaestroDecision,
    MaestroState,
    PackageCompletion,
    SweepMark,
)
from maestro.ports.conversations import FlushClaim
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro.ports.workflows import Gate, TaskTokenGoneError


class InMemoryDecisionLog:
    def __init__(self) -> None:
        self.decisions: dict[str, MaestroDecision] = {}
        self.outcomes: dict[str, ActionOutcomeRecord] = {}
        self.completions: dict[str, PackageCompletion] = {}

    def append(self, decision: MaestroDecision) -> None:
        if decision.decision_id in self.decisions:
            raise AlreadyExistsError(decision.decision_id)
        self.decisions[decision.decision_id] = decision

    def get(self, package_id: str, decision_id: str) -> MaestroDecision | None:
        found = self.decisions.get(decision_id)
        return found if found is not None and found.package_id == package_id else None

    def for_package(self, package_id: str) -> list[MaestroDecision]:
        found = [d for d in self.decisions.values() if d.package_id == package_id]
        return sorted(found, key=lambda d: (d.index, d.recorded_at, d.decision_id))

    def recent(self, conversation_id: str, limit: int) -> list[MaestroDecision]:
        found = [d for d in self.decisions.values() if d.conversation_id == conversation_id]
        found.sort(key=lambda d: (d.recorded_at, d.decision_id))
        return found[-limit:] if limit > 0 else []

    def record_outcome(self, outcome: ActionOutcomeRecord) -> bool:
        if outcome.record_id in self.outcomes:
            return False
        self.outcomes[outcome.record_id] = outcome
        return True

    def outcomes_for(
        self,
        package_id: str,
        *,
        consistent: bool = True,  # a dict is always consistent
    ) -> list[ActionOutcomeRecord]:
        found = [o for o in self.outcomes.values() if o.package_id == package_id]
        return sorted(found, key=lambda o: o.index)

    def complete(self, completion: PackageCompletion) -> bool:
        if completion.package_id in self.completions:
            return False
        self.completions[completion.package_id] = completion
        return True

    def completion_for(self, package_id: str) -> PackageCompletion | None:
        return self.completions.get(package_id)

    def completed_between(
        self,
        start: datetime,
        end: datetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,  # a dict has no shards
    ) -> list[PackageCompletion]:
        found = [
            c
            for c in self.completions.values()
            if start <= c.recorded_at < end and not (after is not None and after.passed(c))
        ]
        return sorted(found, key=lambda c: (c.recorded_at, c.package_id))[:limit]


class InMemoryStateStore:
    def __init__(self) -> None:
        self.items: dict[str, MaestroState] = {}

    def get(self, wo_id: str) -> MaestroState | None:
        return self.items.get(wo_id)

    def put(self, state: MaestroState, expected_version: int | None) -> None:
        wanted = 1 if expected_version is None else expected_version + 1
        if state.version != wanted:
            raise ValueError(f"version must be {wanted}, got {state.version}")
        current = self.items.get(state.wo_id)
        if (current.version if current else None) != expected_version:
            raise StaleVersionError(state.wo_id)
        self.items[state.wo_id] = state


class InMemoryLeases:
    """The lease half of the conversation buffer, with the DynamoDB adapter's rules."""

    def __init__(self) -> None:
        self.holder: dict[str, tuple[str, int, datetime]] = {}
        self.next_flush: dict[str, int] = {}
        self.skipped: dict[str, set[int]] = {}
        self.messages: dict[tuple[str, int], Message] = {}

    def acquire_lease(
        self, conversation_id: str, package_id: str, flush_number: int, at: datetime, ttl: int
    ) -> bool:
        held = self.holder.get(conversation_id)
        if held is not None and held[0] != package_id:
            if held[2] >= at:
                return False
            del self.holder[conversation_id]  # an expired holder's turn is over
            self.next_flush[conversation_id] = held[1] + 1
            self._advance(conversation_id)
        mine = held is not None and held[0] == package_id
        if not mine and self.next_flush.get(conversation_id, 1) != flush_number:
            return False
        self.holder[conversation_id] = (package_id, flush_number, at + timedelta(seconds=ttl))
        return True

    def renew_lease(self, conversation_id: str, package_id: str, at: datetime, ttl: int) -> bool:
        held = self.holder.get(conversation_id)
        if held is None or held[0] != package_id:
            return False
        self.holder[conversation_id] = (package_id, held[1], at + timedelta(seconds=ttl))
        return True

    def release_lease(self, conversation_id: str, package_id: str, flush_number: int) -> bool:
        held = self.holder.get(conversation_id)
        if held is None or held[0] != package_id:
            return False
        del self.holder[conversation_id]
        self.next_flush[conversation_id] = flush_number + 1
        self._advance(conversation_id)
        return True

    def forfeit_turn(self, conversation_id: str, flush_number: int) -> None:
        self.skipped.setdefault(conversation_id, set()).add(flush_number)
        self._advance(conversation_id)

    def _advance(self, conversation_id: str) -> None:
        while conversation_id not in self.holder and self.next_flush.get(
            conversation_id, 1
        ) in self.skipped.get(conversation_id, set()):
            self.next_flush[conversation_id] = self.next_flush.get(conversation_id, 1) + 1

    def recent_messages(self, conversation_id: str, limit: int) -> list[Message]:
        mine = sorted(
            (m for (cid, _), m in self.messages.items() if cid == conversation_id),
            key=lambda m: m.seq,
        )
        return mine[-limit:] if limit > 0 else []

    def messages_for(self, claim: FlushClaim) -> list[Message]:
        return [
            self.messages[(claim.conversation_id, seq)]
            for seq in range(claim.after_seq + 1, claim.through_seq + 1)
        ]


class InMemoryBus:
    def __init__(self) -> None:
        self.events: dict[str, DomainEvent] = {}

    def publish(self, events: Sequence[DomainEvent]) -> None:
        for event in events:
            self.events[event.event_id] = event


class InMemoryGates:
    def __init__(self) -> None:
        self.gates: dict[tuple[str, str, int | None], Gate] = {}

    def put(self, gate: Gate) -> None:
        self.gates[(gate.execution_id, gate.gate, gate.index)] = gate

    def open_gates(self) -> list[Gate]:
        return list(self.gates.values())

    def remove(self, execution_id: str, gate: str, index: int | None) -> None:
        self.gates.pop((execution_id, gate, index), None)


class FixedClock:
    def __init__(self, now: datetime) -> None:
        self.at = now

    def now(self) -> datetime:
        return self.at


class InMemoryDispatchStore:
    """DispatchStore with the adapter's rules: create-once, versioned replace, waiting index."""

    def __init__(self) -> None:
        self.runs: dict[str, DispatchRun] = {}
        self.writes = 0

    def get(self, wo_id: str) -> DispatchRun | None:
        return self.runs.get(wo_id)

    def put(self, run: DispatchRun, expected_version: int | None) -> None:
        current = self.runs.get(run.wo_id)
        if expected_version is None:
            if current is not None:
                raise AlreadyExistsError(run.wo_id)
        elif current is None or current.version != expected_version:
            raise StaleVersionError(run.wo_id)
        self.runs[run.wo_id] = run
        self.writes += 1

    def waiting_for(self, party_id: str) -> list[DispatchRun]:
        return sorted(
            (r for r in self.runs.values() if r.waiting and r.waiting.party_id == party_id),
            key=lambda r: r.wo_id,
        )


class InMemoryDirectory:
    """DirectoryReader over a whole :class:`Directory`, with the domain's own choices."""

    def __init__(self, directory: Directory) -> None:
        self.directory = directory

    def person(self, person_id: str) -> Person | None:
        return next((p for p in self.directory.people if p.person_id == person_id), None)

    def vendor(self, vendor_id: str) -> Vendor | None:
        return next((v for v in self.directory.vendors if v.vendor_id == vendor_id), None)

    def property(self, property_id: str) -> Property | None:
        return next((p for p in self.directory.properties if p.property_id == property_id), None)

    def unit(self, unit_id: str) -> Unit | None:
        return next((u for u in self.directory.units if u.unit_id == unit_id), None)

    def on_call_at(self, property_id: str | None, at: datetime) -> OnCall | None:
        return on_call_at(self.directory.on_call, property_id, at)

    def managers_of(self, property_id: str | None) -> list[Person]:
        if property_id is None or property_id == ALL_PROPERTIES:
            return []
        found = [
            p
            for p in self.directory.people
            if p.role is PersonRole.PM and property_id in p.property_ids
        ]
        return sorted(found, key=lambda p: p.person_id)

    def vendors_for(
        self, property_id: str | None, trade: Trade, *, after_hours: bool = False
    ) -> list[Vendor]:
        return vendors_for(self.directory.vendors, property_id, trade, after_hours=after_hours)


class RecordingTaskTokens:
    """:class:`maestro.ports.workflows.TaskTokens`: records each SendTaskSuccess; a token answered
    once, or marked ``gone`` (timed out, its execution stopped), raises TaskTokenGoneError."""

    def __init__(self) -> None:
        self.succeeded: list[tuple[str, dict[str, Any]]] = []
        self.gone: set[str] = set()

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        if token in self.gone:
            raise TaskTokenGoneError(token)
        self.gone.add(token)
        self.succeeded.append((token, dict(output)))

    def outputs(self, token: str) -> list[dict[str, Any]]:
        return [output for sent, output in self.succeeded if sent == token]
