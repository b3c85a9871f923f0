"""The watcher: every domain event is a claim; read the surface it names and say what is real.

For each event the watcher reads the claimed surface *itself* (the message by SID from the
messenger's surface, the WO and its timeline entry by id, the pending item or the decision log
by key) and compares the fields it read with the claim. It never takes the claim as the value:
a field counts as confirmed only when the read returned it. One row per event:

- Evidence, with its provenance and what was read;
- Shame: ``unverified_claim`` when the surface has nothing the claim names, ``mismatch`` when
  it has it with other values.

Claims and reads are digests of what someone wrote or was sent to (a phone number, a body, a
note, a summary), never the text: the ledger row that keeps them quotes nobody.

A redelivered event finds its row and writes nothing (rows are create-once by event id). An
event that comes after the sweeper gave it up (it waited in the DLQ) resolves the sweeper's
``missing_event`` row: the row stays, marked with what resolved it, and no longer stands. A read
that fails (Twilio down, a throttled table) raises: the SQS record is retried, then dead-lettered
(and alarmed); a surface that cannot be read now is never taken for a lie.

Values that may legitimately move on after the claim (a WO's status when a later package changed
it) are compared only while the WO is still at the version the claim wrote; the immutable
timeline entry the claim names is always compared.

A work order's dispatch run (docs/dispatch.md) is read the same way: its texts (the offer, the
PM's approval request, the PM's page) by SID through the messenger's surface, and what the run
record says was done (the offer to that vendor with that SID, the approval asked, what was
gathered, how it ended) from the dispatch store; the assignment from the WO itself. A run
that has not reached the version a claim says it left is a mismatch; a run that has moved on
since (the next offer, an answer) is not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from maestro.domain.dispatch import DispatchRun, Gathered
from maestro.domain.events import (
    ClaimValue,
    ClarificationAsked,
    ConfirmHeld,
    ConfirmReleased,
    DecisionRecorded,
    DomainEvent,
    EscalationPaged,
    MessageSent,
    RatingRecorded,
    WoApprovalRequested,
    WoCreated,
    WoDispatched,
    WoDispatchFailed,
    WoGathered,
    WoOffered,
    WoUpdated,
    body_digest,
)
from maestro.domain.ledger import LedgerRow, Provenance, ShameKind, missing_row_id_of
from maestro.domain.models import WorkOrder
from maestro.domain.privacy import mask_phone_numbers
from maestro.domain.records import PendingClarification, PendingConfirmation
from maestro.domain.timeline import NoteEntry, RatingEntry, StatusEntry, TimelineEntry, VisitEntry
from maestro.observability import count
from maestro.ports.evidence import Ledger, MessageRead, MessageReader
from maestro.ports.platform import Clock
from maestro.ports.stores import DecisionLog, DispatchStore, PendingStore, Timeline, WorkOrderStore

__all__ = ["Watcher", "WatcherDeps"]

FAILED_STATUSES = frozenset({"failed", "undelivered", "canceled"})

Diff = tuple[str, ClaimValue, ClaimValue]
"""(field, claimed, read)"""


@dataclass
class WatcherDeps:
    messages: MessageReader
    work_orders: WorkOrderStore
    timeline: Timeline
    pending: PendingStore
    decisions: DecisionLog
    dispatch: DispatchStore
    ledger: Ledger
    clock: Clock


@dataclass
class _Read:
    provenance: Provenance
    surface: str
    values: dict[str, ClaimValue]
    diffs: list[Diff]
    missing: str | None = None  # the surface has nothing the claim names: why, in words
    note: str = ""


def _differs(diffs: list[Diff], name: str, claimed: ClaimValue, read: ClaimValue) -> None:
    if claimed != read:
        diffs.append((name, claimed, read))


class Watcher:
    def __init__(self, deps: WatcherDeps) -> None:
        self.deps = deps
        self._checks: dict[str, Callable[[DomainEvent], _Read]] = {
            "message.sent": self._message_sent,
            "escalation.paged": self._paged,
            "wo.created": self._wo_created,
            "wo.updated": self._wo_updated,
            "rating.recorded": self._rating,
            "confirm.held": self._held,
            "confirm.released": self._released,
            "clarification.asked": self._asked,
            "decision.recorded": self._decision,
            "wo.gathered": self._gathered,
            "wo.approval_requested": self._approval_requested,
            "wo.offered": self._offered,
            "wo.dispatched": self._dispatched,
            "wo.dispatch_failed": self._dispatch_failed,
        }

    def watch(self, event: DomainEvent) -> LedgerRow:
        """The event's row: a fresh read's, written once; a redelivery's read is discarded and
        the row already written stands (the put is conditional on the event id). An event that
        comes late (after the sweeper wrote its missing_event row) resolves that row."""
        row = self.check(event)
        if self.deps.ledger.record(row):
            count("ShameRows" if row.verdict == "shame" else "EvidenceRows")
        else:
            row = self.deps.ledger.get(event.package_id, event.event_id) or row
        # Written first, then looked for (the sweeper writes, then looks): whichever of the two
        # comes second sees the other's row, so no missing_event stands beside its event's row.
        missing = self.deps.ledger.get(row.package_id, missing_row_id_of(row))
        resolution = missing.resolved_by(row) if missing is not None else None
        if missing and resolution and self.deps.ledger.resolve(missing, resolution):
            count("ShameResolved")
        return row

    def check(self, event: DomainEvent) -> LedgerRow:
        """Read the claimed surface and compare; writes nothing."""
        read = self._checks[event.type](event)
        kind: ShameKind | None = None
        if read.missing is not None:
            kind, detail = "unverified_claim", read.missing
        elif read.diffs:
            kind = "mismatch"
            detail = "; ".join(
                f"{name}: claimed {claimed!r}, read {got!r}" for name, claimed, got in read.diffs
            )
        else:
            detail = "read back and matched: " + (read.note or ", ".join(sorted(read.values)))
        return LedgerRow(
            row_id=event.event_id,
            verdict="shame" if kind else "evidence",
            kind=kind,
            package_id=event.package_id,
            decision_id=event.decision_id,
            wo_id=event.wo_id,
            event_type=event.type,
            event_id=event.event_id,
            subject_id=event.subject_id,
            provenance=read.provenance,
            surface=read.surface[:300],
            claimed=dict(event.claim),
            read=read.values,
            detail=detail[:500],
            occurred_at=event.occurred_at,
            checked_at=self.deps.clock.now(),
        )

    # -- messages --------------------------------------------------------------------------------

    def _read_message(self, sid: str) -> tuple[MessageRead | None, _Read]:
        reader = self.deps.messages
        message = reader.read(sid)
        if message is None:
            return None, _Read(
                reader.provenance,
                f"{reader.surface}: {sid}",
                {},
                [],
                missing=f"{reader.surface} has no message {sid}",
            )
        values: dict[str, ClaimValue] = {
            "sid": message.sid,
            "to_sha256": body_digest(message.to),
            "status": message.status,
            "body_sha256": body_digest(message.body),
        }
        if message.error_code:
            values["error_code"] = message.error_code
        return message, _Read(message.provenance, message.surface, values, [])

    def _message_sent(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, MessageSent)
        message, read = self._read_message(event.subject_id)
        if message is None:
            return read
        _differs(read.diffs, "to_sha256", claim.to_sha256, body_digest(message.to))
        _differs(read.diffs, "body_sha256", claim.body_sha256, body_digest(message.body))
        via = "twilio" if message.provenance == "twilio-read" else "recording"
        _differs(read.diffs, "via", claim.via, via)
        if message.status in FAILED_STATUSES:
            code = f" (error {message.error_code})" if message.error_code else ""
            read.diffs.append(("status", "sent", f"{message.status}{code}"))
        read.note = f"{message.sid} to {mask_phone_numbers(message.to)}, {message.status} when read"
        if via == "recording":
            read.note += " (recorded by the recording messenger: not sent)"
        return read

    def _paged(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, EscalationPaged)
        message, read = self._read_message(event.subject_id)
        if message is None:
            return read
        _differs(read.diffs, "to_sha256", claim.to_sha256, body_digest(message.to))
        if message.status in FAILED_STATUSES:
            read.diffs.append(("status", "sent", message.status))
        read.note = (
            f"page {message.sid} to {mask_phone_numbers(message.to)}, {message.status} when read"
        )
        return read

    # -- work orders -----------------------------------------------------------------------------

    def _read_wo(self, wo_id: str) -> tuple[WorkOrder | None, _Read]:
        wo = self.deps.work_orders.get(wo_id)
        surface = f"the WO store: {wo_id}"
        if wo is None:
            return None, _Read("wo-read", surface, {}, [], missing=f"no work order {wo_id}")
        values: dict[str, ClaimValue] = {
            "version": wo.version,
            "status": wo.status.value,
            "tenant_id": wo.tenant_id,
        }
        return wo, _Read("wo-read", surface, values, [])

    def _version_and_status(
        self, read: _Read, wo: WorkOrder, version: int, status: str | None
    ) -> None:
        if wo.version < version:
            read.diffs.append(("version", version, wo.version))
        elif wo.version == version and status is not None:
            # Still as the claim left it: its status must be the one claimed. (A later write
            # may have moved it on; the timeline entry below is what this claim wrote.)
            _differs(read.diffs, "status", status, wo.status.value)

    def _wo_created(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoCreated)
        wo, read = self._read_wo(event.subject_id)
        if wo is None:
            return read
        read.values["summary_sha256"] = body_digest(wo.summary)
        _differs(read.diffs, "tenant_id", claim.tenant_id, wo.tenant_id)
        _differs(read.diffs, "summary_sha256", claim.summary_sha256, body_digest(wo.summary))
        self._version_and_status(read, wo, claim.version, claim.status)
        read.note = f"{wo.wo_id} (v{wo.version}, {wo.status.value}) for {wo.tenant_id}"
        return read

    def _read_entry(
        self, read: _Read, wo: WorkOrder, entry_id: str, event: DomainEvent
    ) -> TimelineEntry | None:
        entry = self.deps.timeline.get(wo.wo_id, entry_id)
        read.surface = f"the WO store and {wo.wo_id}'s timeline: {entry_id}"
        if entry is None:
            read.missing = f"{wo.wo_id}'s timeline has no entry {entry_id}"
            return None
        read.values["entry_id"] = entry.entry_id
        read.values["entry"] = entry.kind
        read.values["entry_package_id"] = entry.package_id
        _differs(read.diffs, "package_id", event.package_id, entry.package_id)
        if event.decision_id is not None:
            _differs(read.diffs, "decision_id", event.decision_id, entry.decision_id)
        return entry

    def _wo_updated(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoUpdated)
        wo, read = self._read_wo(event.subject_id)
        if wo is None:
            return read
        entry = self._read_entry(read, wo, claim.entry_id, event)
        if entry is None:
            return read
        _differs(read.diffs, "entry", claim.entry, entry.kind)
        if isinstance(entry, NoteEntry):
            read.values["note_sha256"] = body_digest(entry.note)
            if claim.note_sha256 is not None:
                _differs(read.diffs, "note_sha256", claim.note_sha256, body_digest(entry.note))
        elif isinstance(entry, VisitEntry):
            read.values["mode"] = entry.mode
            read.values["entry_status"] = entry.status.value
            if claim.mode is not None:
                _differs(read.diffs, "mode", claim.mode, entry.mode)
            _differs(read.diffs, "entry_status", claim.status, entry.status.value)
        elif isinstance(entry, StatusEntry):
            read.values["to_status"] = entry.to_status.value
            _differs(read.diffs, "to_status", claim.status, entry.to_status.value)
        self._version_and_status(read, wo, claim.version, claim.status)
        read.note = f"{wo.wo_id} v{wo.version} {wo.status.value}; entry {entry.entry_id}"
        return read

    def _rating(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, RatingRecorded)
        wo, read = self._read_wo(event.subject_id)
        if wo is None:
            return read
        read.values["rating"] = wo.rating
        _differs(read.diffs, "stars", claim.stars, wo.rating)  # a rating is never changed
        entry = self._read_entry(read, wo, claim.entry_id, event)
        if entry is None:
            return read
        if isinstance(entry, RatingEntry):
            read.values["entry_stars"] = entry.stars
            _differs(read.diffs, "entry_stars", claim.stars, entry.stars)
        else:
            read.diffs.append(("entry", "rating", entry.kind))
        if wo.version < claim.version:
            read.diffs.append(("version", claim.version, wo.version))
        read.note = f"{wo.wo_id} rated {wo.rating}/5; entry {entry.entry_id}"
        return read

    # -- the pending store and the decision log --------------------------------------------------

    def _confirmation(self, event: DomainEvent) -> tuple[PendingConfirmation | None, _Read]:
        item = self.deps.pending.get("confirmation", event.subject_id)
        surface = f"the pending store: confirmation {event.subject_id}"
        if not isinstance(item, PendingConfirmation):
            missing = f"no held confirmation {event.subject_id}"
            return None, _Read("ddb-read", surface, {}, [], missing=missing)
        values: dict[str, ClaimValue] = {
            "operation": item.operation,
            "wo_ids": ",".join(item.wo_ids),
            "status": item.status,
        }
        return item, _Read("ddb-read", surface, values, [])

    def _held(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, ConfirmHeld)
        item, read = self._confirmation(event)
        if item is None:
            return read
        _differs(read.diffs, "operation", claim.operation, item.operation)
        _differs(read.diffs, "wo_ids", claim.wo_ids, ",".join(item.wo_ids))
        # Held, or moved on since (released, discarded, expired, superseded): it was held.
        read.note = f"{item.confirmation_id}: {item.operation}, now {item.status}"
        return read

    def _released(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, ConfirmReleased)
        item, read = self._confirmation(event)
        if item is None:
            return read
        _differs(read.diffs, "operation", claim.operation, item.operation)
        _differs(read.diffs, "wo_ids", claim.wo_ids, ",".join(item.wo_ids))
        _differs(read.diffs, "status", claim.status, item.status)
        read.note = f"{item.confirmation_id}: released"
        return read

    def _asked(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, ClarificationAsked)
        item = self.deps.pending.get("clarification", event.subject_id)
        surface = f"the pending store: clarification {event.subject_id}"
        if not isinstance(item, PendingClarification):
            missing = f"no clarification {event.subject_id}"
            return _Read("ddb-read", surface, {}, [], missing=missing)
        read = _Read(
            "ddb-read",
            surface,
            {
                "question_sha256": body_digest(item.question),
                "candidates": ",".join(item.candidate_ids),
                "status": item.status,
            },
            [],
        )
        _differs(read.diffs, "question_sha256", claim.question_sha256, body_digest(item.question))
        _differs(read.diffs, "candidates", claim.candidates, ",".join(item.candidate_ids))
        read.note = f"{item.clarification_id}: asked, now {item.status}"
        return read

    def _decision(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, DecisionRecorded)
        package_id = event.subject_id
        decisions = self.deps.decisions.for_package(package_id)
        completion = self.deps.decisions.completion_for(package_id)
        surface = f"the decision log: package {package_id}"
        if not decisions or completion is None:
            missing = f"the decision log has no completed record of {package_id}"
            values: dict[str, ClaimValue] = {"decisions": len(decisions)}
            return _Read("ddb-read", surface, values, [], missing=missing)
        read = _Read(
            "ddb-read",
            surface,
            {
                "decisions": len(decisions),
                "route": completion.route,
                "completed_by": completion.completed_by,
            },
            [],
        )
        _differs(read.diffs, "decisions", claim.decisions, len(decisions))
        _differs(read.diffs, "route", claim.route, completion.route)
        read.note = f"{len(decisions)} decision(s), route {completion.route}"
        return read

    # -- a work order's dispatch run -----------------------------------------------------------

    def _read_run(self, wo_id: str, run_version: int) -> tuple[DispatchRun | None, _Read]:
        run = self.deps.dispatch.get(wo_id)
        surface = f"the dispatch store: {wo_id}'s run"
        if run is None:
            return None, _Read("ddb-read", surface, {}, [], missing=f"no dispatch run for {wo_id}")
        values: dict[str, ClaimValue] = {"run_version": run.version, "step": run.step}
        read = _Read("ddb-read", surface, values, [])
        if run.version < run_version:
            read.diffs.append(("run_version", run_version, run.version))
        return run, read

    def _text_and_run(
        self, event: DomainEvent, sid: str, to_sha256: str, body_sha256: str, run_version: int
    ) -> tuple[MessageRead | None, DispatchRun | None, _Read]:
        """A text the run claims it sent (by SID, on the messenger's surface), then the run.
        The row's provenance is the text's surface; the run's values are read beside it."""
        message, read = self._read_message(sid)
        if message is None:
            return None, None, read
        _differs(read.diffs, "to_sha256", to_sha256, body_digest(message.to))
        _differs(read.diffs, "body_sha256", body_sha256, body_digest(message.body))
        if message.status in FAILED_STATUSES:
            code = f" (error {message.error_code})" if message.error_code else ""
            read.diffs.append(("status", "sent", f"{message.status}{code}"))
        run, run_read = self._read_run(event.subject_id, run_version)
        read.surface = f"{message.surface}; {run_read.surface}"
        if run is None:
            read.missing = run_read.missing
            return message, None, read
        read.values |= run_read.values
        read.diffs += run_read.diffs
        return message, run, read

    def _offered(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoOffered)
        message, run, read = self._text_and_run(
            event, claim.sid, claim.to_sha256, claim.body_sha256, claim.run_version
        )
        if message is None or run is None:
            return read
        offer = next((o for o in run.offers if o.index == claim.offer_index), None)
        if offer is None:
            read.missing = f"{run.wo_id}'s run has no offer {claim.offer_index}"
            return read
        read.values |= {
            "vendor_id": offer.vendor_id,
            "offer_sid": offer.sid,
            "outcome": offer.outcome,
        }
        _differs(read.diffs, "vendor_id", claim.vendor_id, offer.vendor_id)
        # The offer on the run names the text that made it (so a retried step finds it).
        _differs(read.diffs, "offer_sid", claim.sid, offer.sid)
        read.note = (
            f"offer {offer.index} of {run.wo_id} to {offer.vendor_id}: {message.sid} to "
            f"{mask_phone_numbers(message.to)}, {message.status} when read; now {offer.outcome}"
        )
        return read

    def _approval_requested(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoApprovalRequested)
        message, run, read = self._text_and_run(
            event, claim.sid, claim.to_sha256, claim.body_sha256, claim.run_version
        )
        if message is None or run is None:
            return read
        if run.approval is None or run.judgment is None:
            read.missing = f"{run.wo_id}'s run asked no approval"
            return read
        read.values |= {
            "approval": run.approval,
            "nte_usd": run.judgment.nte_usd,
            "approval_needed": run.judgment.approval_needed,
        }
        if run.approver_id is not None:  # the fallback number when no PM is on call: masked
            read.values["approver_id"] = mask_phone_numbers(run.approver_id)
        _differs(read.diffs, "nte_usd", claim.nte_usd, run.judgment.nte_usd)
        _differs(read.diffs, "approval_needed", True, run.judgment.approval_needed)
        if claim.person_id is not None:
            _differs(read.diffs, "person_id", claim.person_id, run.approver_id)
        if run.version == claim.run_version:
            # Still as the request left it: waiting on the PM's answer to this very text.
            _differs(read.diffs, "approval", "pending", run.approval)
            waiting = run.waiting
            _differs(read.diffs, "waiting", "approval", waiting.kind if waiting else None)
            if waiting is not None and waiting.question_sid is not None:
                _differs(read.diffs, "question_sid", claim.sid, waiting.question_sid)
        read.note = (
            f"approval of {run.wo_id} up to ${run.judgment.nte_usd} asked by {message.sid} to "
            f"{mask_phone_numbers(message.to)}, {message.status} when read; now {run.approval}"
        )
        return read

    def _dispatched(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoDispatched)
        wo, read = self._read_wo(event.subject_id)
        if wo is None:
            return read
        read.values["vendor_id"] = wo.vendor_id
        # An assigned vendor stays the WO's vendor (a later cancel or completion keeps it).
        _differs(read.diffs, "vendor_id", claim.vendor_id, wo.vendor_id)
        self._version_and_status(read, wo, claim.version, claim.status)
        read.note = f"{wo.wo_id} (v{wo.version}, {wo.status.value}) with vendor {wo.vendor_id}"
        return read

    def _gathered(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoGathered)
        run, read = self._read_run(event.subject_id, claim.run_version)
        if run is None:
            return read
        gathered = run.gathered
        if gathered is None:
            read.missing = f"{run.wo_id}'s run has gathered nothing"
            return read
        asked, have, by = ",".join(gathered.asked), ",".join(gathered.have), gathered_by(gathered)
        read.values |= {"asked": asked, "have": have, "by": by}
        _differs(read.diffs, "asked", claim.asked, asked)
        _differs(read.diffs, "have", claim.have, have)
        _differs(read.diffs, "by", claim.by, by)
        read.note = f"{run.wo_id}: asked [{asked}], has [{have}] ({by})"
        return read

    def _dispatch_failed(self, event: DomainEvent) -> _Read:
        claim = event.typed_claim()
        assert isinstance(claim, WoDispatchFailed)
        run, read = self._read_run(event.subject_id, claim.run_version)
        if run is None:
            return read
        reason = failure_reason(run)
        read.values |= {"reason": reason, "offers": len(run.offers)}
        _differs(read.diffs, "reason", claim.reason, reason)
        _differs(read.diffs, "offers", claim.offers, len(run.offers))
        read.note = f"{run.wo_id}: {run.step} after {len(run.offers)} offer(s)"
        if claim.paged_sid is not None:
            message, page = self._read_message(claim.paged_sid)
            read.surface = f"{read.surface}; {page.surface}"
            if message is None:
                read.missing = page.missing
                return read
            read.values["paged_sid"] = message.sid
            read.values["paged_status"] = message.status
            if message.status in FAILED_STATUSES:
                read.diffs.append(("paged_status", "sent", message.status))
            read.note += f"; page {message.sid} to {mask_phone_numbers(message.to)}"
        return read


def gathered_by(gathered: Gathered) -> str:
    """How a run's gather ended, as ``wo.gathered`` claims it (``WoGathered.by``)."""
    if gathered.skipped is not None:
        return "skipped"
    if gathered.by_deadline:
        return "deadline"
    if not gathered.asked:
        return "nothing_missing"
    return "tenant"


def failure_reason(run: DispatchRun) -> str | None:
    """Why a run ended without a vendor, as ``wo.dispatch_failed`` claims it
    (``WoDispatchFailed.reason``); None while it has not (or ended assigned)."""
    if run.step == "closed":
        return "closed"
    if run.step not in ("no_vendor", "refused_by_pm"):
        return None
    if run.approval == "timed_out":  # the PM never answered: paged, no vendor was offered it
        return "approval_timed_out"
    return run.step
