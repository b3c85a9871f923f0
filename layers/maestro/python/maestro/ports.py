"""Ports: what maestro needs from the outside world, as Protocols.

Handlers receive adapters implementing these (DynamoDB, SQS, Step Functions, Twilio…), and
tests pass fakes. Nothing here imports boto3, twilio or anthropic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.digest import DigestEntry as DigestEntry
from maestro.domain.digest import DigestKind as DigestKind
from maestro.domain.digest import DigestLine as DigestLine
from maestro.domain.events import DomainEvent as DomainEvent
from maestro.domain.events import Effect as Effect
from maestro.domain.events import EventType as EventType
from maestro.domain.models import (
    MAX_MEDIA,
    Attestation,
    Channel,
    FlushTrigger,
    MediaRef,
    Message,
    Package,
    Party,
    PreCheckResult,
    WorkOrder,
)

if TYPE_CHECKING:
    from datetime import datetime

    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.
    from maestro.domain.consent import ConsentChange, ConsentState
    from maestro.domain.directory import OnCall, Person, Property, Trade, Unit, Vendor
    from maestro.domain.dispatch import DispatchRun
    from maestro.domain.ledger import LedgerRow, Resolution
    from maestro.domain.memory import BrainRequest
    from maestro.domain.records import (
        ActionOutcomeRecord,
        BrainSample,
        MaestroDecision,
        MaestroState,
        PackageCompletion,
        PendingClarification,
        PendingConfirmation,
        SweepMark,
    )
    from maestro.domain.timeline import TimelineEntry


class ConflictError(Exception):
    """A conditional write lost: the item already exists or changed since it was read."""


class AlreadyExistsError(ConflictError):
    """An append-only or create-once item is already there."""


class StaleVersionError(ConflictError):
    """An optimistic-concurrency write saw a different version than expected."""


# ---------------------------------------------------------------------------------------------
# The conversation buffer: inbound messages, the per-conversation counters, flush claims, lease.
# ---------------------------------------------------------------------------------------------


class InboundDraft(Frozen):
    """An inbound message as received, before the buffer gives it its place (seq)."""

    message_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    channel: Channel
    from_phone: E164
    to_phone: E164 | None = None
    body: str = ""
    media: tuple[MediaRef, ...] = Field(default=(), max_length=MAX_MEDIA)
    received_at: AwareDatetime
    sender_party_id: str | None = None
    unknown_sender: bool = Field(description="No party has this number: stored, never bound")
    attestation: Attestation | None = Field(
        default=None, description="A call's verified STIR/SHAKEN attestation, if any"
    )


class ConversationMeta(Frozen):
    conversation_id: str
    seq: int = Field(ge=0, description="The latest message's seq (0: none yet)")
    flush_number: int = Field(ge=0, description="Flushes claimed so far")
    flushed_through: int = Field(ge=0, description="Every seq up to this is in a package")
    first_unflushed_at: AwareDatetime | None = None
    last_inbound_at: AwareDatetime | None = None
    sender_phone: E164 | None = None

    @property
    def has_unflushed(self) -> bool:
        return self.seq > self.flushed_through


class AppendResult(Frozen):
    message: Message
    duplicate: bool = Field(description="The provider id was already stored: nothing new")
    opened_batch: bool = Field(
        default=False, description="This message started a new run of unflushed messages"
    )
    meta: ConversationMeta


class FlushClaim(Frozen):
    """The messages one package holds: seqs in (after_seq, through_seq] of one conversation."""

    conversation_id: str
    flush_number: int = Field(ge=1)
    package_id: str
    after_seq: int = Field(ge=0)
    through_seq: int = Field(ge=1)
    trigger: FlushTrigger
    claimed_at: AwareDatetime
    started: bool = False


class ConversationBuffer(Protocol):
    def append(self, draft: InboundDraft) -> AppendResult:
        """Store a message and give it the conversation's next seq, atomically.

        A message id seen before returns ``duplicate=True`` and changes nothing.
        """

    def get_message(self, message_id: str) -> Message | None: ...

    def meta(self, conversation_id: str) -> ConversationMeta | None: ...

    def unflushed(self, seen: ConversationMeta, limit: int) -> list[Message]:
        """The first ``limit`` messages after ``seen.flushed_through``, in seq order."""

    def claim_flush(
        self,
        seen: ConversationMeta,
        trigger: FlushTrigger,
        at: AwareDatetime,
        through: Message | None = None,
        next_unflushed: Message | None = None,
    ) -> FlushClaim | None:
        """Claim the unflushed messages up to ``through`` (default: up to ``seen.seq``) as the
        next package; a partial claim names ``next_unflushed``, the first message it leaves.

        Conditional on the conversation being exactly as ``seen``: if another flusher claimed
        first or a newer message arrived, nothing is claimed and None is returned.
        """

    def unstarted_claims(self, conversation_id: str) -> list[FlushClaim]: ...

    def stranded(self, waiting_since: datetime, days: int) -> list[str]:
        """The conversations whose oldest unflushed message arrived before ``waiting_since``
        (and within ``days`` days of it): a flush that should have come did not."""

    def messages_for(self, claim: FlushClaim) -> list[Message]: ...

    def claim_probe(self, message_id: str) -> bool:
        """Claim the one severity probe a message gets; False when it was claimed already."""

    def store_probe(self, message: Message, result: PreCheckResult) -> None:
        """Keep the probe's answer with the message (and its buffered copy)."""

    def recent_messages(self, conversation_id: str, limit: int) -> list[Message]:
        """The conversation's newest ``limit`` messages, oldest first: one bounded read
        (Query, newest first, ``Limit``), whatever the conversation's length."""

    def mark_started(self, claim: FlushClaim) -> None: ...

    def acquire_lease(
        self,
        conversation_id: str,
        package_id: str,
        flush_number: int,
        at: AwareDatetime,
        ttl_seconds: int,
    ) -> bool:
        """Take the conversation's lease for one package, only in flush order.

        The holder taking it again renews it. A holder whose lease expired is overtaken: its
        turn counts as over and the next flush in order may take the lease.
        """

    def renew_lease(
        self, conversation_id: str, package_id: str, at: AwareDatetime, ttl_seconds: int
    ) -> bool:
        """Extend the holder's lease to ``at + ttl``; False when it no longer holds it."""

    def release_lease(self, conversation_id: str, package_id: str, flush_number: int) -> bool: ...

    def forfeit_turn(self, conversation_id: str, flush_number: int) -> None:
        """A package that never held the lease gives up its turn (it failed open waiting)."""


DeliveryStatus = str
"""A message status as Twilio reports it: one of the SDK's own ``MessageInstance.Status`` values
(``maestro.adapters.twilio_status.message_statuses()``), never a hand-kept list."""


StatusRecorded = Literal["applied", "stale", "unknown"]
"""What a status callback did: changed an outbound message's status; changed nothing (the
stored status is as new or newer); or named no message maestro sent (nothing stored)."""


class OutboundStatusStore(Protocol):
    def record_status(
        self, message_sid: str, status: DeliveryStatus, at: AwareDatetime, error_code: str | None
    ) -> StatusRecorded:
        """Store a delivery status on a message maestro sent, unless it would regress (delivered
        never goes back to sent). A SID of no outbound message is ``unknown``: nothing is
        written (a callback is never the first record of a message)."""


# ---------------------------------------------------------------------------------------------
# Memory: decisions, state, work orders, pending items, the party directory.
# ---------------------------------------------------------------------------------------------


class DecisionLog(Protocol):
    """Append-only: there is deliberately no update or delete."""

    def append(self, decision: MaestroDecision) -> None:
        """Raises AlreadyExistsError when the decision id is already recorded."""

    def get(self, package_id: str, decision_id: str) -> MaestroDecision | None: ...

    def for_package(self, package_id: str) -> list[MaestroDecision]: ...

    def recent(self, conversation_id: str, limit: int) -> list[MaestroDecision]: ...

    def record_outcome(self, outcome: ActionOutcomeRecord) -> bool:
        """Append what became of a queued action; False when it is already recorded."""

    def outcomes_for(
        self, package_id: str, *, consistent: bool = True
    ) -> list[ActionOutcomeRecord]:
        """The package's recorded outcomes, by action index. ``consistent=False`` (half the
        read units) only for a package completed long enough ago that every write is visible."""

    def complete(self, completion: PackageCompletion) -> bool:
        """Append the package's completion line; False when it is already recorded."""

    def completion_for(self, package_id: str) -> PackageCompletion | None: ...

    def completed_between(
        self,
        start: AwareDatetime,
        end: AwareDatetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,
    ) -> list[PackageCompletion]:
        """Packages whose completion line was recorded in [start, end), oldest first (by time,
        then package id); with ``after``, only those past that mark; at most ``limit``;
        ``unsharded=False`` skips the lines written before the index was sharded."""


class StateStore(Protocol):
    def get(self, wo_id: str) -> MaestroState | None: ...

    def put(self, state: MaestroState, expected_version: int | None) -> None:
        """Write ``state`` if the stored version is ``expected_version`` (None: no item yet).

        ``state.version`` must be ``expected_version + 1`` (1 for a new item). Raises
        StaleVersionError otherwise.
        """


class WorkOrderStore(Protocol):
    def get(self, wo_id: str) -> WorkOrder | None: ...

    def create(self, wo: WorkOrder) -> None:
        """Raises AlreadyExistsError if the id exists."""

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        """Raises StaleVersionError unless the stored version is ``expected_version``."""

    def open_for_party(self, party_id: str) -> list[WorkOrder]:
        """The party's WOs still in conversation: open, or completed awaiting a rating."""

    def open_for_property(self, property_id: str, limit: int) -> tuple[list[WorkOrder], int]:
        """Up to ``limit`` of the property's open WOs (by id), and how many it has open in all."""


class Timeline(Protocol):
    """Each WO's timeline: typed entries, create-once, read back by WO or by entry id."""

    def append(self, entry: TimelineEntry) -> bool:
        """Add ``entry`` unless its id is there already (a re-run): False then, nothing changed."""

    def get(self, wo_id: str, entry_id: str) -> TimelineEntry | None: ...

    def for_wo(self, wo_id: str) -> list[TimelineEntry]:
        """The WO's entries, oldest first."""


PendingKind = Literal["clarification", "confirmation"]


class PendingStore(Protocol):
    def put_clarification(self, item: PendingClarification) -> None: ...

    def put_confirmation(self, item: PendingConfirmation) -> None:
        """Create once; raises AlreadyExistsError if the id exists."""

    def clarifications_for(self, party_id: str, now: AwareDatetime) -> list[PendingClarification]:
        """Open, unexpired clarifications for the party, oldest first."""

    def confirmations_for(self, party_id: str, now: AwareDatetime) -> list[PendingConfirmation]:
        """Unexpired confirmations still held for the party, oldest first."""

    def open_items(
        self, party_id: str
    ) -> tuple[list[PendingClarification], list[PendingConfirmation]]:
        """Every clarification still open and confirmation still held, expired or not (so the
        expiry can be recorded), oldest first."""

    def set_status(
        self,
        kind: PendingKind,
        pending_id: str,
        expected: str,
        status: str,
        closed_by: str | None = None,
    ) -> None:
        """Move an item on from ``expected``; raises StaleVersionError if it is not there."""

    def set_confirmation_status(self, confirmation_id: str, expected: str, status: str) -> None:
        """Move a held confirmation on; raises StaleVersionError if it is not ``expected``."""

    def get(
        self, kind: PendingKind, pending_id: str
    ) -> PendingClarification | PendingConfirmation | None:
        """Any stored item, whatever its status or expiry."""


class PartyDirectory(Protocol):
    def by_phone(self, phone: str) -> Party | None: ...

    def by_party_id(self, party_id: str) -> Party | None: ...

    def put(self, party: Party) -> None: ...


class DirectoryReader(Protocol):
    """What the pipeline reads of the directory (docs/directory.md)."""

    def person(self, person_id: str) -> Person | None: ...

    def vendor(self, vendor_id: str) -> Vendor | None: ...

    def property(self, property_id: str) -> Property | None: ...

    def unit(self, unit_id: str) -> Unit | None: ...

    def on_call_at(self, property_id: str | None, at: datetime) -> OnCall | None: ...

    def managers_of(self, property_id: str | None) -> list[Person]:
        """The PMs managing ``property_id`` or every property (``*``); None: only the latter."""
        ...

    def vendors_for(
        self, property_id: str | None, trade: Trade, *, after_hours: bool = False
    ) -> list[Vendor]: ...


# ---------------------------------------------------------------------------------------------
# Queues and workflows.
# ---------------------------------------------------------------------------------------------


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


class Clock(Protocol):
    def now(self) -> AwareDatetime: ...


class Secrets(Protocol):
    def get(self, name_or_arn: str) -> str:
        """The secret's value; settings hold names or ARNs, never values."""


class PageWindow(Frozen):
    """A page-throttle window as stored: who holds it, and what the holder did (the page it
    sent, or the digest hour it went to instead), once it has said so."""

    claimant: str
    until: AwareDatetime
    page_sid: str | None = None
    paged_at: AwareDatetime | None = None
    digest_hour: AwareDatetime | None = Field(
        default=None, description="Set instead of a page: the holder became a digest line"
    )


class PageThrottle(Protocol):
    """At most one page per key per window (e.g. one emergency page per unknown number per 30
    minutes); later packages fold into the page that went out."""

    def claim(self, key: str, claimant: str, at: AwareDatetime, window_seconds: int) -> str | None:
        """Claim the window for ``key``: None when ``claimant`` holds it (page now; a re-run of
        the same claimant holds it too), else the claimant that does (attach to its page)."""

    def window(self, key: str) -> PageWindow | None:
        """The window for ``key`` as stored (None when there is none), expired or not."""

    def record(
        self,
        key: str,
        claimant: str,
        *,
        page_sid: str | None = None,
        paged_at: AwareDatetime | None = None,
        digest_hour: AwareDatetime | None = None,
    ) -> None:
        """Note on ``claimant``'s window what it did; nothing when another holds it now."""


CapName = Literal["pages", "texts", "model_calls"]
"""The account-wide daily caps (per UTC day)."""


class DailyCaps(Protocol):
    """Account-wide counters per UTC day of pages and texts sent (model calls are counted by
    the model budget, on the same counters)."""

    def charge(self, cap: CapName, key: str, at: AwareDatetime, *, force: bool = False) -> bool:
        """Count one send against today's ``cap``, once per ``key`` (a re-run of the same send
        counts nothing more and gets the first answer). False when the cap is reached: nothing
        is counted and the send must not go. ``force`` counts it even past the cap (what a cap
        never drops: an emergency page, safety advice) and answers True."""


class Digest(Protocol):
    """The hourly digest of what is told to the PM in one page instead of many: lines by UTC
    hour; an hour's page goes once the hour is over (:mod:`maestro.pipeline.digest`)."""

    def add(self, entry: DigestEntry) -> AwareDatetime:
        """Add ``entry`` to its hour's line for its subject (a re-run adds nothing more); when
        that hour's digest has already closed, to the next open hour. Returns the hour."""

    def due(self, now: AwareDatetime, lookback_hours: int) -> list[AwareDatetime]:
        """Hours over before ``now`` (within the lookback) with lines and no page sent yet."""

    def close(self, hour: AwareDatetime, at: AwareDatetime) -> list[DigestLine]:
        """Close ``hour`` (a later entry goes to the next hour) and read all its lines."""

    def record_sent(self, hour: AwareDatetime, sid: str, at: AwareDatetime) -> None:
        """The hour's page went: it is no longer due."""


# ---------------------------------------------------------------------------------------------
# Effects: messages out, domain events.
# ---------------------------------------------------------------------------------------------


class EventBus(Protocol):
    def publish(self, events: Sequence[DomainEvent]) -> None: ...


class SentMessage(Frozen):
    sid: str
    to: E164
    body: str
    status: str = "queued"
    via: Literal["twilio", "recording"] = Field(
        default="recording",
        description="Which messenger: Twilio sent it; the recording messenger only recorded it",
    )


RECORDED_SID_PREFIX = "SMrec"
"""Every SID a recording messenger hands out starts with this, so nobody mistakes a recorded
message for one Twilio accepted."""


def recorded_sid(idempotency_key: str) -> str:
    """The deterministic SID a recording messenger gives a key (34 characters, like Twilio's)."""
    return RECORDED_SID_PREFIX + hashlib.sha256(idempotency_key.encode()).hexdigest()[:29]


class Messenger(Protocol):
    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        """Send one SMS. The same idempotency key never sends twice; it returns the first.

        Raises SendFailedError when the message could not be sent (after retries, or refused).
        """


class SendFailedError(Exception):
    """A message could not be sent: the provider refused it (``transient=False``) or kept
    failing through every retry. The failure is recorded (the send record) before this is
    raised; the step fails, the package fails open and the PM is told: never a silent drop."""

    def __init__(
        self,
        idempotency_key: str,
        reason: str,
        *,
        transient: bool,
        attempts: int,
        code: str | None = None,
    ):
        super().__init__(f"{idempotency_key}: {reason} (after {attempts} attempt(s))")
        self.idempotency_key = idempotency_key
        self.reason = reason
        self.transient = transient
        self.attempts = attempts
        self.code = code
        """The provider's error code when it refused the message (Twilio's, e.g. "21610")."""


class NotTextableError(SendFailedError):
    """The recipient may not be texted (they opted out, Twilio says they did, or the directory
    records no SMS consent): nothing was sent and nothing was tried. A lane records the text as
    not sent and goes on; a page that cannot reach its PM fails the step like any failed send."""

    def __init__(self, idempotency_key: str, to: str, reason: str) -> None:
        super().__init__(idempotency_key, reason, transient=False, attempts=0)
        self.to = to


class ConsentStore(Protocol):
    """Each phone's SMS consent, as its own texts (STOP, START) and Twilio (error 21610) set it.
    Written by the inbound webhook at once; read before every text (the messenger's guard)."""

    def record(self, phone: str, change: ConsentChange, at: AwareDatetime) -> bool:
        """Apply ``change`` as of ``at`` unless a later change is stored (a late redelivery of
        an old STOP does not undo a START), or it applies only while opted out and the phone is
        not: False then, nothing written. A re-run of the same change writes the same state."""

    def state(self, phone: str) -> ConsentState | None:
        """The phone's consent as stored; None when nothing was ever recorded (it may be
        texted, unless the directory says otherwise)."""


class MessageRead(Frozen):
    """A message as its surface reports it, read by SID: what the watcher compares a
    ``message.sent`` claim with."""

    sid: str
    to: str
    from_number: str | None = None
    body: str
    status: str
    error_code: str | None = None
    created_at: AwareDatetime | None = None
    provenance: Literal["twilio-read", "ddb-read"]
    surface: str = Field(description="What was read, e.g. 'Twilio Messages API: GET …'")


class MessageReader(Protocol):
    """Reads sent messages back from the messenger's own surface (Twilio's API; the messages
    table for the recording messenger, which sends nothing)."""

    provenance: Literal["twilio-read", "ddb-read"]
    surface: str

    def read(self, sid: str) -> MessageRead | None:
        """None when the surface has no such message; raises when it cannot be read now."""


class Ledger(Protocol):
    """Evidence and Shame rows: append-only, one per claim (create-once by row id), read back
    by package and by WO."""

    def record(self, row: LedgerRow) -> bool:
        """Append ``row`` unless its id is there already (a redelivery): False then."""

    def resolve(self, row: LedgerRow, resolution: Resolution) -> bool:
        """Mark the missing_event ``row`` resolved (it stays): False when it is not there or was
        resolved already."""

    def get(self, package_id: str, row_id: str) -> LedgerRow | None: ...

    def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
        """The package's rows; ``consistent=False`` (half the read units) may miss a row
        written in the last second."""

    def for_wo(self, wo_id: str) -> list[LedgerRow]: ...


class SweepWatermark(Protocol):
    """The sweeper's persisted progress (:class:`maestro.domain.records.SweepMark`)."""

    def read(self) -> SweepMark | None:
        """None before the first sweep."""

    def advance(self, mark: SweepMark) -> bool:
        """Store ``mark`` unless the stored one is at or past it already (a sweep that ran
        meanwhile): the mark never moves back. False then."""


# ---------------------------------------------------------------------------------------------
# The brain and the step gates.
# ---------------------------------------------------------------------------------------------


class Brain(Protocol):
    """The reasoning brain: samples of an ordered action plan for a package, drawn one at a
    time (``maestro.brain.sampling.draw`` decides how many)."""

    def describe(self) -> str:
        """What answered, named in every output (e.g. "offline brain (…no model)")."""

    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...


class BudgetScope(Frozen):
    """Whom a model call is charged to: the conversation always, the package when there is one
    (the probe runs before any package exists)."""

    conversation_id: str
    package_id: str | None = None


class ModelBudget(Protocol):
    """Caps on model calls and tokens, per package and per conversation (per day), and the
    judgments' own per conversation per day."""

    def reserve(self, scope: BudgetScope, at: AwareDatetime) -> bool:
        """Take one call from every cap of ``scope``; False (nothing taken) when one is spent."""

    def record_tokens(self, scope: BudgetScope, at: AwareDatetime, tokens: int) -> None:
        """Count what a call used (a cap reached by tokens refuses the next reserve)."""

    def reserve_judgments(self, scope: BudgetScope, at: AwareDatetime, calls: int) -> bool:
        """Take ``calls`` at once (one judgment's samples) from the conversation's allowance for
        bounded judgments on ``at``'s UTC day; False, nothing taken, when they do not fit. Each
        call is then charged by ``reserve`` too, like any other."""


class Gate(Frozen):
    """A paused step gate: its task token waits for SendTaskSuccess."""

    execution_id: str
    gate: str
    token: str
    package_id: str
    index: int | None = None
    paused_at: AwareDatetime


class DispatchStore(Protocol):
    """Each work order's dispatch run (maestro.domain.dispatch): one record per WO, versioned."""

    def get(self, wo_id: str) -> DispatchRun | None: ...

    def put(self, run: DispatchRun, expected_version: int | None) -> None:
        """Create (``expected_version`` None: raises AlreadyExistsError if there) or replace the
        stored ``expected_version`` (raises StaleVersionError otherwise)."""

    def waiting_for(self, party_id: str) -> list[DispatchRun]:
        """The runs whose open wait is for ``party_id``'s answer (the sparse index), by WO id."""


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
