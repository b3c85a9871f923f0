"""In-memory stand-ins for the ports: unit tests, the core demo and the embedded stack use them.

They follow the port contracts *and* the DynamoDB adapters' observable behaviour, so a lane or a
step that passes against them does the same against the real stores: create-once
(AlreadyExistsError), optimistic versions (StaleVersionError, and a ValueError for a version that
is not +1), expiry filtering on every read, append-only logs, flush-order turns with takeover of an
expired holder, a task token answered once, and a messenger that never sends twice for one
idempotency key.

``RecordingMessenger`` is named for what it is: it records messages and sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

from maestro.domain.digest import DigestEntry, DigestLine, hour_of
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
from maestro.domain.ledger import LedgerRow, Resolution
from maestro.domain.models import Message, Party, WorkOrder
from maestro.domain.records import (
    ActionOutcomeRecord,
    HoldStatus,
    MaestroDecision,
    MaestroState,
    PackageCompletion,
    PendingClarification,
    PendingConfirmation,
    PendingStatus,
    SweepMark,
)
from maestro.domain.timeline import TimelineEntry
from maestro.ports.conversations import FlushClaim
from maestro.ports.evidence import MessageRead
from maestro.ports.limits import CapName, PageWindow
from maestro.ports.messaging import RECORDED_SID_PREFIX, SentMessage, recorded_sid
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro.ports.workflows import Gate, TaskTokenGoneError

__all__ = [
    "RECORDED_SID_PREFIX",
    "FixedClock",
    "InMemoryBus",
    "InMemoryDailyCaps",
    "InMemoryDecisionLog",
    "InMemoryDigest",
    "InMemoryDirectory",
    "InMemoryDispatchStore",
    "InMemoryGates",
    "InMemoryLeases",
    "InMemoryLedger",
    "InMemoryPageThrottle",
    "InMemoryPartyDirectory",
    "InMemoryPendingStore",
    "InMemoryStateStore",
    "InMemorySweepWatermark",
    "InMemoryTimeline",
    "InMemoryWorkOrderStore",
    "RecordingMessenger",
    "RecordingReader",
    "RecordingTaskTokens",
    "recorded_sid",
]


# The DynamoDB pending store files a clarification for an unknown sender under this key (an index
# key cannot be null); the fake answers ``clarifications_for("unknown")`` the same way.
UNKNOWN_PARTY_KEY = "unknown"

_CONFIRMATION_STATUSES = frozenset(get_args(HoldStatus))
_CLARIFICATION_STATUSES = frozenset(get_args(PendingStatus))


class InMemoryWorkOrderStore:
    """WorkOrderStore in a dict. ``writes`` logs every accepted write, so tests can count them."""

    def __init__(self, work_orders: Iterable[WorkOrder] = ()) -> None:
        self._items: dict[str, WorkOrder] = {wo.wo_id: wo for wo in work_orders}
        self.writes: list[tuple[Literal["create", "update"], str, int]] = []

    def get(self, wo_id: str) -> WorkOrder | None:
        return self._items.get(wo_id)

    def create(self, wo: WorkOrder) -> None:
        if wo.wo_id in self._items:
            raise AlreadyExistsError(f"work order {wo.wo_id} already exists")
        self._items[wo.wo_id] = wo
        self.writes.append(("create", wo.wo_id, wo.version))

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        # Same order as the adapter: a wrong next version is a caller bug, checked before the race.
        if wo.version != expected_version + 1:
            raise ValueError(
                f"version must be {expected_version + 1} after {expected_version}, got {wo.version}"
            )
        stored = self._items.get(wo.wo_id)
        # A conditional put on a missing item fails too: update never creates.
        if stored is None or stored.version != expected_version:
            found = None if stored is None else stored.version
            raise StaleVersionError(f"{wo.wo_id}: expected version {expected_version}, got {found}")
        self._items[wo.wo_id] = wo
        self.writes.append(("update", wo.wo_id, wo.version))

    def open_for_party(self, party_id: str) -> list[WorkOrder]:
        """WOs in conversation (open, or completed awaiting a rating) where the party is the
        tenant or the vendor, sorted by id (as the adapter)."""
        return [
            wo
            for _, wo in sorted(self._items.items())
            if wo.in_conversation and party_id in (wo.tenant_id, wo.vendor_id)
        ]

    def open_for_property(self, property_id: str, limit: int) -> tuple[list[WorkOrder], int]:
        """Up to ``limit`` of the property's open WOs by id, and how many in all (as the
        adapter)."""
        found = [
            wo
            for _, wo in sorted(self._items.items())
            if wo.is_open and wo.property_id == property_id
        ]
        return found[:limit], len(found)

    def all(self) -> list[WorkOrder]:
        return [wo for _, wo in sorted(self._items.items())]


class InMemoryTimeline:
    """WO timelines: create-once entries, read back by WO (oldest first) or by id."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], TimelineEntry] = {}

    def append(self, entry: TimelineEntry) -> bool:
        key = (entry.wo_id, entry.entry_id)
        if key in self.entries:
            return False
        self.entries[key] = entry
        return True

    def get(self, wo_id: str, entry_id: str) -> TimelineEntry | None:
        return self.entries.get((wo_id, entry_id))

    def for_wo(self, wo_id: str) -> list[TimelineEntry]:
        found = [e for (w, _), e in self.entries.items() if w == wo_id]
        return sorted(found, key=lambda e: (e.at, e.entry_id))


class InMemoryPendingStore:
    """PendingStore in two dicts. Clarification puts overwrite by id (as the adapter's
    unconditional put); confirmations are created once."""

    def __init__(self) -> None:
        self._clarifications: dict[str, PendingClarification] = {}
        self._confirmations: dict[str, PendingConfirmation] = {}

    def put_clarification(self, item: PendingClarification) -> None:
        self._clarifications[item.clarification_id] = item

    def put_confirmation(self, item: PendingConfirmation) -> None:
        if item.confirmation_id in self._confirmations:
            raise AlreadyExistsError(item.confirmation_id)
        self._confirmations[item.confirmation_id] = item

    def clarifications_for(self, party_id: str, now: datetime) -> list[PendingClarification]:
        live = [
            c
            for c in self._clarifications.values()
            if (c.party_id or UNKNOWN_PARTY_KEY) == party_id and c.expires_at > now and c.is_open
        ]
        return sorted(live, key=lambda c: (c.asked_at, c.clarification_id))

    def confirmations_for(self, party_id: str, now: datetime) -> list[PendingConfirmation]:
        live = [
            c
            for c in self._confirmations.values()
            if c.party_id == party_id and c.status == "held" and c.expires_at > now
        ]
        return sorted(live, key=lambda c: (c.held_at, c.confirmation_id))

    def open_items(
        self, party_id: str
    ) -> tuple[list[PendingClarification], list[PendingConfirmation]]:
        questions = [
            c
            for c in self._clarifications.values()
            if (c.party_id or UNKNOWN_PARTY_KEY) == party_id and c.is_open
        ]
        holds = [c for c in self._confirmations.values() if c.party_id == party_id and c.is_open]
        return (
            sorted(questions, key=lambda c: (c.asked_at, c.clarification_id)),
            sorted(holds, key=lambda c: (c.held_at, c.confirmation_id)),
        )

    def set_status(
        self,
        kind: Literal["clarification", "confirmation"],
        pending_id: str,
        expected: str,
        status: str,
        closed_by: str | None = None,
    ) -> None:
        allowed = _CONFIRMATION_STATUSES if kind == "confirmation" else _CLARIFICATION_STATUSES
        if status not in allowed:
            raise ValueError(f"unknown {kind} status {status!r}")
        store: dict[str, Any] = (
            self._confirmations if kind == "confirmation" else self._clarifications
        )
        stored = store.get(pending_id)
        if stored is None or stored.status != expected:
            raise StaleVersionError(f"{kind} {pending_id} is not {expected!r}")
        store[pending_id] = stored.model_copy(update={"status": status, "closed_by": closed_by})

    def set_confirmation_status(self, confirmation_id: str, expected: str, status: str) -> None:
        self.set_status("confirmation", confirmation_id, expected, status)

    def get(
        self, kind: Literal["clarification", "confirmation"], pending_id: str
    ) -> PendingClarification | PendingConfirmation | None:
        if kind == "confirmation":
            return self._confirmations.get(pending_id)
        return self._clarifications.get(pending_id)

    def confirmation(self, confirmation_id: str) -> PendingConfirmation | None:
        """Any stored confirmation, whatever its status or expiry (for tests and the demo)."""
        return self._confirmations.get(confirmation_id)

    def clarification(self, clarification_id: str) -> PendingClarification | None:
        return self._clarifications.get(clarification_id)


class InMemoryPartyDirectory:
    """PartyDirectory keyed by phone, with look-up by party id; ``put`` overwrites, as the
    adapter's does."""

    def __init__(self, parties: Iterable[Party] = ()) -> None:
        self._by_phone: dict[str, Party] = {}
        for party in parties:
            self.put(party)

    def by_phone(self, phone: str) -> Party | None:
        return self._by_phone.get(phone)

    def put(self, party: Party) -> None:
        self._by_phone[party.phone] = party

    def by_party_id(self, party_id: str) -> Party | None:
        # Several phones may carry the same id after a number change: the newest put wins.
        found = [p for p in self._by_phone.values() if p.party_id == party_id]
        return found[-1] if found else None

    def phone_of(self, party_id: str) -> str | None:
        party = self.by_party_id(party_id)
        return party.phone if party else None


class RecordingMessenger:
    """A Messenger that records messages and sends nothing.

    The same idempotency key returns the first SentMessage and records nothing new, whatever the
    recipient or body of the repeat (as the port promises).
    """

    def __init__(self) -> None:
        self.sent: list[SentMessage] = []
        self._by_key: dict[str, SentMessage] = {}

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        first = self._by_key.get(idempotency_key)
        if first is not None:
            return first
        # SentMessage validates ``to`` as E.164, as Twilio would refuse a malformed number.
        message = SentMessage(
            sid=recorded_sid(idempotency_key), to=to, body=body, status="recorded"
        )
        self._by_key[idempotency_key] = message
        self.sent.append(message)
        return message

    def get(self, sid: str) -> SentMessage | None:
        """Read a recorded message back by SID (what the watcher does against Twilio)."""
        return next((m for m in self.sent if m.sid == sid), None)

    def to(self, phone: str) -> list[SentMessage]:
        return [m for m in self.sent if m.to == phone]


class RecordingReader:
    """MessageReader over a RecordingMessenger: the messages it recorded, read back by SID
    (``ddb-read``: the recording messenger's only surface)."""

    provenance: Literal["twilio-read", "ddb-read"] = "ddb-read"
    surface = "the recording messenger's records (nothing is sent)"

    def __init__(self, messenger: RecordingMessenger) -> None:
        self.messenger = messenger

    def read(self, sid: str) -> MessageRead | None:
        found = self.messenger.get(sid)
        if found is None:
            return None
        return MessageRead(
            sid=found.sid,
            to=found.to,
            body=found.body,
            status=found.status,
            provenance="ddb-read",
            surface=f"recorded message {sid} (recording messenger: not sent)",
        )


class InMemoryLedger:
    """The ledger in a dict: create-once rows, by package and by WO."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], LedgerRow] = {}
        self.writes = 0

    def record(self, row: LedgerRow) -> bool:
        key = (row.package_id, row.row_id)
        if key in self.rows:
            return False
        self.rows[key] = row
        self.writes += 1
        return True

    def resolve(self, row: LedgerRow, resolution: Resolution) -> bool:
        key = (row.package_id, row.row_id)
        stored = self.rows.get(key)
        if stored is None or stored.resolution is not None:
            return False
        self.rows[key] = LedgerRow.model_validate({**stored.model_dump(), "resolution": resolution})
        return True

    def get(self, package_id: str, row_id: str) -> LedgerRow | None:
        return self.rows.get((package_id, row_id))

    def for_package(
        self,
        package_id: str,
        *,
        consistent: bool = True,  # noqa: ARG002 - a dict is always consistent
    ) -> list[LedgerRow]:
        return [r for (p, _), r in self.rows.items() if p == package_id]

    def for_wo(self, wo_id: str) -> list[LedgerRow]:
        return [r for r in self.rows.values() if r.wo_id == wo_id]


class InMemorySweepWatermark:
    """The sweeper's watermark in a field, never moved back; ``advances`` counts the moves."""

    def __init__(self) -> None:
        self.mark: SweepMark | None = None
        self.advances = 0

    def read(self) -> SweepMark | None:
        return self.mark

    def advance(self, mark: SweepMark) -> bool:
        if self.mark is not None and (mark.recorded_at, mark.package_id) <= (
            self.mark.recorded_at,
            self.mark.package_id,
        ):
            return False
        self.mark = mark
        self.advances += 1
        return True


class InMemoryPageThrottle:
    """PageThrottle in a dict, with the adapter's rules: the window's claimant may claim again."""

    def __init__(self) -> None:
        self._windows: dict[str, PageWindow] = {}

    def claim(self, key: str, claimant: str, at: datetime, window_seconds: int) -> str | None:
        held = self._windows.get(key)
        if held is not None and held.until >= at and held.claimant != claimant:
            return held.claimant
        if held is None or held.claimant != claimant:
            self._windows[key] = PageWindow(
                claimant=claimant, until=at + timedelta(seconds=window_seconds)
            )
        return None

    def window(self, key: str) -> PageWindow | None:
        return self._windows.get(key)

    def record(
        self,
        key: str,
        claimant: str,
        *,
        page_sid: str | None = None,
        paged_at: datetime | None = None,
        digest_hour: datetime | None = None,
    ) -> None:
        held = self._windows.get(key)
        if held is None or held.claimant != claimant:
            return
        given = {"page_sid": page_sid, "paged_at": paged_at, "digest_hour": digest_hour}
        self._windows[key] = held.model_copy(
            update={k: v for k, v in given.items() if v is not None}
        )


class InMemoryDailyCaps:
    """DailyCaps in a dict, with the adapter's rules: once per key, refused past the limit
    unless forced. ``reached`` lists each cap every time it refused or was exceeded (the
    adapter's ``DailyCapReached`` metric)."""

    def __init__(self, pages: int = 100, texts: int = 2000) -> None:
        self.limits: dict[str, int] = {"pages": pages, "texts": texts}
        self.used: dict[tuple[str, str], int] = {}
        self._charged: set[tuple[str, str, str]] = set()
        self.reached: list[str] = []

    def charge(self, cap: CapName, key: str, at: datetime, *, force: bool = False) -> bool:
        day = f"{at.astimezone(UTC):%Y-%m-%d}"
        if (day, cap, key) in self._charged:
            return True
        used = self.used.get((day, cap), 0)
        if used >= self.limits[cap]:
            self.reached.append(cap)
            if not force:
                return False
        self.used[(day, cap)] = used + 1
        self._charged.add((day, cap, key))
        return True


class InMemoryDigest:
    """Digest in dicts, with the adapter's rules: one line per subject per hour, a package
    counted once, an entry for a closed hour going to the next."""

    def __init__(self) -> None:
        self.lines: dict[datetime, dict[str, tuple[DigestEntry, datetime, set[str]]]] = {}
        self.closed: dict[datetime, str | None] = {}

    def add(self, entry: DigestEntry) -> datetime:
        hour = hour_of(entry.at)
        while hour in self.closed:
            hour += timedelta(hours=1)
        lines = self.lines.setdefault(hour, {})
        first, _, packages = lines.get(entry.subject, (entry, entry.at, set()))
        packages.add(f"{entry.package_id}:{entry.messages}")
        lines[entry.subject] = (first, entry.at, packages)
        return hour

    def due(self, now: datetime, lookback_hours: int) -> list[datetime]:
        current = hour_of(now)
        return sorted(
            hour
            for hour, lines in self.lines.items()
            if lines
            and current - timedelta(hours=lookback_hours) <= hour < current
            and self.closed.get(hour) is None
        )

    def close(self, hour: datetime, at: datetime) -> list[DigestLine]:  # noqa: ARG002
        self.closed.setdefault(hour, None)
        return [
            DigestLine(
                subject=subject,
                kind=first.kind,
                who=first.who,
                excerpt=first.excerpt,
                why=first.why,
                first_at=first.at,
                last_at=last,
                packages=len(packages),
                messages=sum(int(p.rsplit(":", 1)[1]) for p in packages),
            )
            for subject, (first, last, packages) in self.lines.get(hour, {}).items()
        ]

    def record_sent(self, hour: datetime, sid: str, at: datetime) -> None:  # noqa: ARG002
        self.closed[hour] = sid


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
        consistent: bool = True,  # noqa: ARG002 - a dict is always consistent
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
        unsharded: bool = True,  # noqa: ARG002 - a dict has no shards
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
