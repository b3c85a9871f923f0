"""The work order machine's steps: gather → judge → dispatch → persist (docs/dispatch.md).

Each takes its Task's payload (typed by :mod:`maestro.dispatch.contract`) and returns its piece
of the execution's state. They are thin: what the job lacks, the judgment and every text are
the pure domain's (:mod:`maestro.domain.gather`, :mod:`maestro.domain.judge`,
:mod:`maestro.domain.dispatch_texts`); a step reads what they need, writes the WO's dispatch
run (a versioned put), texts through the messenger with a key per text (``<WO id>#<kind>#<n>``,
so a retried step never texts twice) and publishes its events, with ids that are the same on a
re-run. The execution carries ids and item names only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from maestro.dispatch.contract import (
    AskPayload,
    AssignPayload,
    AssignResult,
    GatherPayload,
    GatherResult,
    JudgeResult,
    PagePayload,
    PageResult,
    RecordOutcome,
    RecordPayload,
    RecordResult,
    WoPayload,
)
from maestro.dispatch.errors import WorkOrderClosed
from maestro.domain import dispatch_texts, gather, judge
from maestro.domain.directory import Property, Trade, Vendor
from maestro.domain.dispatch import (
    GATHER_ITEMS,
    DispatchRun,
    Gathered,
    GatherItem,
    Offer,
    OfferOutcome,
    Wait,
    WaitAnswer,
    run_package_id,
)
from maestro.domain.events import DomainEvent, EventType, body_digest, claim_dict
from maestro.domain.judge import DispatchPolicy
from maestro.domain.language import language_for
from maestro.domain.models import Party, Urgency, WorkOrder, WorkOrderStatus
from maestro.domain.records import MaestroState, OutstandingItem
from maestro.domain.timeline import NoteEntry, StatusEntry, entry_id_for, photos_on
from maestro.lanes.on_call import page_recipient, undeliverable
from maestro.observability import logger
from maestro.pipeline.contract import StepError, dump
from maestro.ports.events import EventBus
from maestro.ports.limits import CapName, DailyCaps
from maestro.ports.messaging import Messenger, NotTextableError, SendFailedError, SentMessage
from maestro.ports.platform import Clock
from maestro.ports.stores import (
    AlreadyExistsError,
    DirectoryReader,
    DispatchStore,
    PartyDirectory,
    StaleVersionError,
    StateStore,
    Timeline,
    WorkOrderStore,
)

__all__ = ["Dispatch", "DispatchDeps"]

JSON = dict[str, Any]
WRITE_ATTEMPTS = 5
"""Versioned writes of the run (and the WO's state) re-read and retry on a conflict this often:
the package pipeline may complete or withdraw a wait between a step's read and its write."""
TRAIL_LINES = 8


@dataclass
class DispatchDeps:
    runs: DispatchStore
    work_orders: WorkOrderStore
    timeline: Timeline
    directory: DirectoryReader
    parties: PartyDirectory
    state: StateStore
    messenger: Messenger
    bus: EventBus
    clock: Clock
    policy: DispatchPolicy
    gather_deadline_seconds: int
    approval_timeout_seconds: int
    on_call_pm_phone: str = ""
    """The account's fallback number for pages ("" when none: docs/on-call.md)."""
    caps: DailyCaps | None = None


@dataclass
class _Step:
    """What one invocation publishes: its events, in order, put on the bus at its end."""

    wo_id: str
    now: datetime
    events: list[DomainEvent] = field(default_factory=list)

    def event(self, type_: EventType, subject_id: str, suffix: str, **claim: Any) -> None:
        package_id = run_package_id(self.wo_id)
        made = DomainEvent(
            event_id=f"{package_id}#{type_}#{suffix}",
            type=type_,
            package_id=package_id,
            subject_id=subject_id,
            wo_id=self.wo_id,
            claim=claim_dict(type_, claim),
            occurred_at=self.now,
        )
        if made.event_id not in {e.event_id for e in self.events}:
            self.events.append(made)


class Dispatch:
    def __init__(self, deps: DispatchDeps) -> None:
        self.deps = deps

    # -- gather --------------------------------------------------------------------------------

    def gather(self, event: JSON) -> JSON:
        """What the job lacks before a vendor can go (nothing, for an emergency or urgent WO).
        Creates the run; when nothing will be asked, ``wo.gathered`` says why."""
        payload = GatherPayload.model_validate(event)
        step = self._step(payload.wo_id)
        wo = self._open_wo(payload.wo_id)
        run = self._run_or_new(wo, payload.execution, step.now)
        notes, photos = self._notes_and_photos(wo.wo_id)
        needed = tuple(gather.needs(wo, notes, photos))
        skip = gather.skip_reason(wo)
        missing: tuple[GatherItem, ...] = () if skip is not None else needed
        have = tuple(item for item in GATHER_ITEMS if item not in needed)
        gathered = Gathered(asked=missing, have=have, skipped=skip)
        run = self._update(run, lambda r: r.changed(step.now, step="gathering", gathered=gathered))
        if not missing:
            step.event(
                "wo.gathered",
                wo.wo_id,
                "gather",
                asked="",
                have=",".join(have),
                by="skipped" if skip is not None else "nothing_missing",
                run_version=run.version,
            )
        self._publish(step)
        return dump(
            GatherResult(
                missing=missing, skip=skip, deadline_seconds=self.deps.gather_deadline_seconds
            )
        )

    # -- the waits -----------------------------------------------------------------------------

    def ask(self, event: JSON) -> JSON:
        """Text the question, the approval or the offer, and store the wait with its token on
        the run (whose answer completes it, and by when). The WO is re-read first (I6)."""
        payload = AskPayload.model_validate(event)
        step = self._step(payload.wo_id)
        wo = self.deps.work_orders.get(payload.wo_id)
        run = self._existing_run(payload.wo_id)
        if wo is None or not wo.is_open:
            self._close(run, wo, step, "the work order closed before it was asked")
            raise WorkOrderClosed(f"{payload.wo_id} is {wo.status.value if wo else 'gone'}")
        deadline = step.now + timedelta(seconds=payload.timeout_seconds)
        if payload.kind == "gather":
            run = self._ask_tenant(wo, run, payload, step, deadline)
        elif payload.kind == "approval":
            run = self._ask_approval(wo, run, payload, step, deadline)
        else:
            run = self._offer(wo, run, payload, step, deadline)
        self._publish(step)
        return {"waiting": payload.kind, "run_version": run.version}

    def _ask_tenant(
        self, wo: WorkOrder, run: DispatchRun, payload: AskPayload, step: _Step, deadline: datetime
    ) -> DispatchRun:
        asked = run.gathered.asked if run.gathered is not None else ()
        tenant = self.deps.parties.by_party_id(wo.tenant_id)
        sent = None
        if tenant is not None:
            text = gather.question(wo, asked, self._tenant_language(tenant, wo))
            sent = self._send(step, tenant.phone, text, f"{wo.wo_id}#gather#1")
        self._await_answer(wo, step.now)
        wait = Wait(
            kind="gather",
            token=payload.token,
            party_id=wo.tenant_id,
            started_at=step.now,
            deadline=deadline,
            question_sid=sent.sid if sent else None,
        )
        return self._update(run, lambda r: r.changed(step.now, step="gathering", waiting=wait))

    def _ask_approval(
        self, wo: WorkOrder, run: DispatchRun, payload: AskPayload, step: _Step, deadline: datetime
    ) -> DispatchRun:
        judgment = run.judgment
        if judgment is None:
            raise ValueError(f"{wo.wo_id}: approval asked before any judgment")
        recipient = page_recipient(
            self.deps.directory, self.deps.on_call_pm_phone, wo.property_id, step.now
        )
        approver_id = recipient.person_id or recipient.phone or "nobody"
        sent = None
        if recipient.phone is not None:
            person = self.deps.directory.person(recipient.person_id or "")
            text = dispatch_texts.approval_text(
                wo, judgment, language_for(person.language if person else None)
            )
            sent = self._send(step, recipient.phone, text, f"{wo.wo_id}#approval#1")
        else:
            undeliverable(recipient, "dispatch approval", wo_id=wo.wo_id)
        wait = Wait(
            kind="approval",
            token=payload.token,
            party_id=approver_id,
            started_at=step.now,
            deadline=deadline,
            question_sid=sent.sid if sent else None,
        )
        run = self._update(
            run,
            lambda r: r.changed(
                step.now,
                step="awaiting_approval",
                approval="pending",
                approver_id=approver_id,
                waiting=wait,
            ),
        )
        if sent is not None:
            step.event(
                "wo.approval_requested",
                wo.wo_id,
                "approval",
                sid=sent.sid,
                to_sha256=body_digest(sent.to),
                body_sha256=body_digest(sent.body),
                nte_usd=judgment.nte_usd,
                person_id=recipient.person_id,
                run_version=run.version,
            )
        return run

    def _offer(
        self, wo: WorkOrder, run: DispatchRun, payload: AskPayload, step: _Step, deadline: datetime
    ) -> DispatchRun:
        index = payload.offer_index
        judgment = run.judgment
        if index is None or judgment is None or index > len(judgment.vendors):
            raise ValueError(f"{wo.wo_id}: no vendor {index} to offer the job to")
        vendor = self._vendor(judgment.vendors[index - 1].vendor_id)
        text = dispatch_texts.offer_text(
            wo,
            vendor,
            self._property(wo),
            self._unit_label(wo),
            judgment,
            index,
            self._language_of(vendor.vendor_id),
        )
        sent = self._send(step, vendor.phone, text, f"{wo.wo_id}#offer#{index}")
        offer = Offer(
            index=index,
            vendor_id=vendor.vendor_id,
            sent_at=step.now,
            sid=sent.sid if sent else None,
        )
        wait = Wait(
            kind="offer",
            token=payload.token,
            party_id=vendor.vendor_id,
            started_at=step.now,
            deadline=deadline,
            offer_index=index,
            vendor_id=vendor.vendor_id,
            question_sid=offer.sid,
        )

        def offered(r: DispatchRun) -> DispatchRun:
            offers = (*(o for o in r.offers if o.index != index), offer)
            return r.changed(step.now, step="offering", offers=offers, waiting=wait)

        run = self._update(run, offered)
        if sent is not None:
            step.event(
                "wo.offered",
                wo.wo_id,
                f"offer#{index}",
                offer_index=index,
                vendor_id=vendor.vendor_id,
                sid=sent.sid,
                to_sha256=body_digest(sent.to),
                body_sha256=body_digest(sent.body),
                run_version=run.version,
            )
        return run

    def record(self, event: JSON) -> JSON:
        """A wait's outcome on the run: the answer, the timeout, or the withdrawal (the WO
        closed: the open offer's vendor is told, and the run ends)."""
        payload = RecordPayload.model_validate(event)
        step = self._step(payload.wo_id)
        run = self._existing_run(payload.wo_id)
        answer = payload.answer
        timed_out = isinstance(answer, StepError)
        said = None if isinstance(answer, StepError) else answer
        if payload.kind == "gather":
            outcome = self._record_gather(run, said, step)
        elif payload.kind == "approval":
            outcome = self._record_approval(run, said, step)
        else:
            outcome = self._record_offer(run, payload.offer_index or 1, said, step)
        if timed_out and outcome not in ("timed_out",):  # pragma: no cover - by construction
            raise AssertionError(f"{payload.wo_id}: a timeout recorded as {outcome}")
        self._publish(step)
        return dump(RecordResult(outcome=outcome))

    def _record_gather(
        self, run: DispatchRun, answer: WaitAnswer | None, step: _Step
    ) -> RecordOutcome:
        self._answered(run.wo_id, step.now)
        if answer is not None and answer.answer == "withdrawn":
            self._close(run, None, step, answer.reason or "the work order closed during gather")
            return "withdrawn"
        before = run.gathered or Gathered()
        gathered = Gathered(
            asked=before.asked,
            have=tuple(
                i for i in GATHER_ITEMS if i in before.have or (answer and i in answer.items)
            ),
            answered_by=before.answered_by
            + ((answer.package_id,) if answer and answer.package_id else ()),
            photos=before.photos,
            by_deadline=answer is None,
            skipped=before.skipped,
        )
        run = self._update(run, lambda r: r.changed(step.now, gathered=gathered, waiting=None))
        step.event(
            "wo.gathered",
            run.wo_id,
            "gather",
            asked=",".join(gathered.asked),
            have=",".join(gathered.have),
            by="deadline" if answer is None else "tenant",
            run_version=run.version,
        )
        return "timed_out" if answer is None else "answered"

    def _record_approval(
        self, run: DispatchRun, answer: WaitAnswer | None, step: _Step
    ) -> RecordOutcome:
        if answer is not None and answer.answer == "withdrawn":
            self._close(run, None, step, answer.reason or "the work order closed")
            return "withdrawn"
        outcome: RecordOutcome
        if answer is None:
            outcome, approval = "timed_out", "timed_out"
        elif answer.answer == "approve":
            outcome, approval = "approved", "approved"
        else:
            outcome, approval = "refused", "refused"
        self._update(run, lambda r: r.changed(step.now, approval=approval, waiting=None))
        return outcome

    def _record_offer(
        self, run: DispatchRun, index: int, answer: WaitAnswer | None, step: _Step
    ) -> RecordOutcome:
        offer = next((o for o in run.offers if o.index == index), None)
        if offer is None:
            raise ValueError(f"{run.wo_id}: no offer {index} to record")
        outcome: RecordOutcome
        state: OfferOutcome
        if answer is None:
            outcome, state = "timed_out", "timed_out"
        elif answer.answer == "accept":
            outcome, state = "accepted", "accepted"
        elif answer.answer == "withdrawn":
            outcome, state = "withdrawn", "withdrawn"
        else:
            outcome, state = "declined", "declined"
        if offer.outcome == "open":
            answered = offer.model_copy(
                update={
                    "outcome": state,
                    "answered_at": step.now,
                    "by_package": answer.package_id if answer else None,
                }
            )
        else:  # a re-run: the first run's record stands
            answered = offer

        def recorded(r: DispatchRun) -> DispatchRun:
            offers = tuple(answered if o.index == index else o for o in r.offers)
            return r.changed(step.now, offers=offers, waiting=None)

        run = self._update(run, recorded)
        wo = self.deps.work_orders.get(run.wo_id)
        vendor = self._vendor(offer.vendor_id)
        language = self._language_of(vendor.vendor_id)
        if outcome == "timed_out" and wo is not None:
            text = dispatch_texts.lapsed_text(wo, language)
            self._send(step, vendor.phone, text, f"{run.wo_id}#lapsed#{index}")
        elif outcome == "withdrawn" and wo is not None:
            reason = answer.reason if answer is not None else ""
            text = dispatch_texts.withdrawn_text(wo, reason, language)
            self._send(step, vendor.phone, text, f"{run.wo_id}#withdrawn#{index}")
            self._close(run, wo, step, reason or "the work order closed during an offer")
        return outcome

    # -- judge ---------------------------------------------------------------------------------

    def judge(self, event: JSON) -> JSON:
        """Priority, trade, budget, approval and the ranked vendors, with the reasons, on the
        run (the execution gets the vendors' ids)."""
        payload = WoPayload.model_validate(event)
        step = self._step(payload.wo_id)
        wo = self.deps.work_orders.get(payload.wo_id)
        run = self._existing_run(payload.wo_id)
        if wo is None or not wo.is_open or run.step == "closed":
            # Re-read first (I6): a WO closed during gather (its wait withdrawn, the run closed)
            # stops here, so no Choice after gather is needed.
            self._close(run, wo, step, "the work order closed before it was judged")
            raise WorkOrderClosed(f"{payload.wo_id} is {wo.status.value if wo else 'gone'}")
        notes, _ = self._notes_and_photos(wo.wo_id)
        # The vendors of the category's trade; when it names none, the judge reads the trade in
        # the notes, so every trade's vendors serving the property are its to choose from.
        trade = gather.trade_for(wo.category)
        trades = [trade] if trade is not None else list(Trade)
        candidates = list(
            {
                v.vendor_id: v
                for t in trades
                for v in self.deps.directory.vendors_for(wo.property_id, t)
            }.values()
        )
        open_jobs = self._open_jobs(wo, candidates)
        snapshot = self.deps.state.get(wo.wo_id)
        judgment = judge.judge(
            wo,
            trail_emergency=snapshot is not None and snapshot.urgency is Urgency.EMERGENCY,
            vendors=candidates,
            open_jobs=open_jobs,
            ratings={},
            property=self._property(wo),
            policy=self.deps.policy,
            now=step.now,
            notes=notes,
        )
        self._update(run, lambda r: r.changed(step.now, step="judging", judgment=judgment))
        return dump(
            JudgeResult(
                priority=judgment.priority,
                trade=judgment.trade,
                nte_usd=judgment.nte_usd,
                approval_needed=judgment.approval_needed,
                after_hours=judgment.after_hours,
                vendors=tuple(v.vendor_id for v in judgment.vendors),
                offer_timeout_seconds=judgment.offer_timeout_seconds,
                approval_timeout_seconds=self.deps.approval_timeout_seconds,
            )
        )

    def _open_jobs(self, wo: WorkOrder, vendors: Sequence[Vendor]) -> dict[str, int]:
        """Each candidate's open WOs at this property (the store reads open WOs by property)."""
        jobs = dict.fromkeys((v.vendor_id for v in vendors), 0)
        if wo.property_id is None:
            return jobs
        open_wos, _ = self.deps.work_orders.open_for_property(wo.property_id, 200)
        for other in open_wos:
            if other.vendor_id in jobs and other.wo_id != wo.wo_id:
                jobs[other.vendor_id] += 1
        return jobs

    # -- assign and page -----------------------------------------------------------------------

    def assign(self, event: JSON) -> JSON:
        """The vendor who accepted gets the WO (assigned) and the access details; the tenant is
        told who is coming. A WO closed since the acceptance is not assigned (the vendor is
        told the offer is withdrawn)."""
        payload = AssignPayload.model_validate(event)
        step = self._step(payload.wo_id)
        run = self._existing_run(payload.wo_id)
        offer = next((o for o in run.offers if o.index == payload.offer_index), None)
        if offer is None:
            raise ValueError(f"{payload.wo_id}: no offer {payload.offer_index} to assign")
        vendor = self._vendor(offer.vendor_id)
        wo = self.deps.work_orders.get(payload.wo_id)
        assigned_already = (
            wo is not None
            and wo.status is WorkOrderStatus.ASSIGNED
            and wo.vendor_id == vendor.vendor_id
        )
        if wo is None or (not wo.is_open and not assigned_already):
            if wo is not None:
                text = dispatch_texts.withdrawn_text(
                    wo, "the work order closed", self._language_of(vendor.vendor_id)
                )
                self._send(step, vendor.phone, text, f"{wo.wo_id}#withdrawn#{offer.index}")
            self._close(run, wo, step, "the work order closed before the vendor was assigned")
            raise WorkOrderClosed(f"{payload.wo_id} is {wo.status.value if wo else 'gone'}")
        if not assigned_already:
            before = wo.status
            wo_after = wo.assign(vendor.vendor_id, step.now)
            self.deps.work_orders.update(wo_after, expected_version=wo.version)
            wo, from_status = wo_after, before
        else:
            from_status = WorkOrderStatus.OPEN
        key = f"{run_package_id(wo.wo_id)}#assign#{offer.index}"
        entry = StatusEntry(
            wo_id=wo.wo_id,
            entry_id=entry_id_for(key, "status"),
            at=step.now,
            package_id=run_package_id(wo.wo_id),
            what=f"assigned to {vendor.name} (accepted offer {offer.index})",
            from_status=from_status,
            to_status=WorkOrderStatus.ASSIGNED,
            operation="dispatch",
        )
        self.deps.timeline.append(entry)  # create-once: a re-run appends nothing
        step.event(
            "wo.updated",
            wo.wo_id,
            f"assign#{offer.index}",
            entry_id=entry.entry_id,
            entry="status",
            version=wo.version,
            status=wo.status.value,
            operation="dispatch",
        )
        notes, _ = self._notes_and_photos(wo.wo_id)
        vendor_text = dispatch_texts.assigned_vendor_text(
            wo,
            self._property(wo),
            self._unit_label(wo),
            notes,
            self._language_of(vendor.vendor_id),
        )
        self._send(step, vendor.phone, vendor_text, f"{wo.wo_id}#assigned#vendor")
        tenant = self.deps.parties.by_party_id(wo.tenant_id)
        if tenant is not None:
            text = dispatch_texts.tenant_coming_text(wo, vendor, self._tenant_language(tenant, wo))
            self._send(step, tenant.phone, text, f"{wo.wo_id}#assigned#tenant")
        self._update(
            run,
            lambda r: r.changed(
                step.now,
                step="assigned",
                waiting=None,
                outcome=f"assigned to {vendor.vendor_id} at offer {offer.index}",
            ),
        )
        step.event(
            "wo.dispatched", wo.wo_id, "dispatched", vendor_id=vendor.vendor_id, version=wo.version
        )
        self._publish(step)
        return dump(AssignResult(vendor_id=vendor.vendor_id, version=wo.version))

    def page(self, event: JSON) -> JSON:
        """No vendor took it (or the approval was not given in time): the on-call PM is paged
        with the trail. A PM's refusal ends the run without a page (the PM decided)."""
        payload = PagePayload.model_validate(event)
        step = self._step(payload.wo_id)
        run = self._existing_run(payload.wo_id)
        wo = self.deps.work_orders.get(payload.wo_id)
        sent: SentMessage | None = None
        outcome = {
            "no_vendor": f"no vendor accepted ({len(run.offers)} offered): on-call PM paged",
            "approval_timed_out": "the PM did not answer the approval: on-call PM paged",
            "refused_by_pm": "the PM refused the approval",
        }[payload.reason]
        if payload.reason != "refused_by_pm" and wo is not None:
            recipient = page_recipient(
                self.deps.directory, self.deps.on_call_pm_phone, wo.property_id, step.now
            )
            if recipient.phone is None:
                outcome += "; " + undeliverable(recipient, "dispatch page", wo_id=wo.wo_id)
            else:
                text = dispatch_texts.no_vendor_page(wo, run, self._trail(wo.wo_id))
                sent = self._send(
                    step, recipient.phone, text, f"{wo.wo_id}#page#{payload.reason}", cap="pages"
                )
        final = "refused_by_pm" if payload.reason == "refused_by_pm" else "no_vendor"
        run = self._update(
            run, lambda r: r.changed(step.now, step=final, waiting=None, outcome=outcome[:300])
        )
        step.event(
            "wo.dispatch_failed",
            payload.wo_id,
            "failed",
            reason=payload.reason,
            offers=len(run.offers),
            paged_sid=sent.sid if sent else None,
            run_version=run.version,
        )
        self._publish(step)
        return dump(PageResult(paged_sid=sent.sid if sent else None))

    # -- reading -------------------------------------------------------------------------------

    def _step(self, wo_id: str) -> _Step:
        return _Step(wo_id=wo_id, now=self.deps.clock.now())

    def _open_wo(self, wo_id: str) -> WorkOrder:
        wo = self.deps.work_orders.get(wo_id)
        if wo is None:
            raise ValueError(f"{wo_id}: no such work order")
        if not wo.is_open:
            raise WorkOrderClosed(f"{wo_id} is {wo.status.value}")
        return wo

    def _run_or_new(self, wo: WorkOrder, execution: str, now: datetime) -> DispatchRun:
        existing = self.deps.runs.get(wo.wo_id)
        if existing is not None:
            return existing
        run = DispatchRun(wo_id=wo.wo_id, execution_arn=execution, started_at=now, updated_at=now)
        try:
            self.deps.runs.put(run, expected_version=None)
        except AlreadyExistsError:  # a retried gather: the first one's run
            return self._existing_run(wo.wo_id)
        return run

    def _existing_run(self, wo_id: str) -> DispatchRun:
        run = self.deps.runs.get(wo_id)
        if run is None:
            raise ValueError(f"{wo_id}: no dispatch run (gather makes it)")
        return run

    def _notes_and_photos(self, wo_id: str) -> tuple[list[str], int]:
        """The notes on the WO's timeline (the tenant's words, read here, never carried) and how
        many photos its entries keep (``image/*`` media, each URL once: a video is no photo)."""
        entries = self.deps.timeline.for_wo(wo_id)
        notes = [entry.note for entry in entries if isinstance(entry, NoteEntry)]
        return notes, photos_on(entries)

    def _trail(self, wo_id: str) -> list[str]:
        lines = [entry.what for entry in self.deps.timeline.for_wo(wo_id)]
        return lines[-TRAIL_LINES:]

    def _vendor(self, vendor_id: str) -> Vendor:
        vendor = self.deps.directory.vendor(vendor_id)
        if vendor is None:
            raise ValueError(f"vendor {vendor_id} is not in the directory")
        return vendor

    def _property(self, wo: WorkOrder) -> Property | None:
        return self.deps.directory.property(wo.property_id) if wo.property_id else None

    def _unit_label(self, wo: WorkOrder) -> str | None:
        if wo.unit is None:
            return None
        unit = self.deps.directory.unit(wo.unit)
        return unit.label if unit is not None else wo.unit

    @staticmethod
    def _tenant_language(tenant: Party, wo: WorkOrder) -> str:
        """The directory's language for the tenant, else the one they wrote in when the WO was
        opened, else English."""
        return language_for(tenant.language or wo.language)

    def _language_of(self, party_id: str) -> str:
        party = self.deps.parties.by_party_id(party_id)
        return language_for(party.language if party is not None else None)

    # -- writing -------------------------------------------------------------------------------

    def _update(
        self, run: DispatchRun, change: Callable[[DispatchRun], DispatchRun]
    ) -> DispatchRun:
        """``change`` applied to the run and put over the version it was read at; on a
        conflict (the package pipeline wrote in between) re-read and apply again."""
        for _ in range(WRITE_ATTEMPTS):
            changed = change(run)
            try:
                self.deps.runs.put(changed, expected_version=run.version)
            except StaleVersionError:
                run = self._existing_run(run.wo_id)
                continue
            return changed
        raise StaleVersionError(f"{run.wo_id}: the dispatch run kept changing under the write")

    def _close(self, run: DispatchRun, wo: WorkOrder | None, step: _Step, why: str) -> None:
        """The run ends because the WO closed: recorded, and claimed by ``wo.dispatch_failed``."""
        if run.step == "closed":
            return
        status = wo.status.value if wo is not None else "gone"
        outcome = f"{why} ({status})"[:300]
        run = self._update(
            run, lambda r: r.changed(step.now, step="closed", waiting=None, outcome=outcome)
        )
        self._answered(run.wo_id, step.now)
        step.event(
            "wo.dispatch_failed",
            run.wo_id,
            "failed",
            reason="closed",
            offers=len(run.offers),
            run_version=run.version,
        )
        self._publish(step)

    def _await_answer(self, wo: WorkOrder, now: datetime) -> None:
        """The WO's state says it awaits the tenant's answer, so their next package binds to it.
        After what the state already asks (an availability question stays first: its answer is
        re-validated as before)."""

        def awaiting(state: MaestroState | None) -> MaestroState:
            kept = tuple(o for o in (state.outstanding if state else ()) if o.kind != "answer")
            item = OutstandingItem(kind="answer", since=now, note="dispatch gather")
            if state is None:
                return MaestroState(
                    wo_id=wo.wo_id, urgency=wo.urgency, outstanding=(item,), updated_at=now
                )
            return state.model_copy(
                update={
                    "outstanding": (*kept, item),
                    "version": state.version + 1,
                    "updated_at": now,
                }
            )

        self._update_state(wo.wo_id, awaiting)

    def _answered(self, wo_id: str, now: datetime) -> None:
        """The WO awaits the tenant's answer no more (answered, timed out or closed)."""

        def cleared(state: MaestroState | None) -> MaestroState | None:
            if state is None or not any(o.kind == "answer" for o in state.outstanding):
                return None
            return state.model_copy(
                update={
                    "outstanding": tuple(o for o in state.outstanding if o.kind != "answer"),
                    "version": state.version + 1,
                    "updated_at": now,
                }
            )

        self._update_state(wo_id, cleared)

    def _update_state(
        self, wo_id: str, change: Callable[[MaestroState | None], MaestroState | None]
    ) -> None:
        for _ in range(WRITE_ATTEMPTS):
            current = self.deps.state.get(wo_id)
            changed = change(current)
            if changed is None:
                return
            try:
                self.deps.state.put(
                    changed, expected_version=current.version if current is not None else None
                )
            except (StaleVersionError, AlreadyExistsError):
                continue
            return
        raise StaleVersionError(f"{wo_id}: the WO's state kept changing under the write")

    def _send(
        self, step: _Step, to: str, body: str, key: str, *, cap: CapName = "texts"
    ) -> SentMessage | None:
        """One text, keyed (a re-run sends nothing twice), charged to today's cap once, and its
        ``message.sent``. None when the cap or the recipient's consent refuses it, or (but for a
        page) Twilio failed it through every retry: the send record says so, and the run goes
        on (an unanswered question or offer times out). A page that cannot go fails the step,
        as a lane's does: the execution fails, and its alarm fires."""
        caps = self.deps.caps
        if caps is not None and not caps.charge(cap, key, step.now):
            return None
        try:
            sent = self.deps.messenger.send(to, body, idempotency_key=key)
        except NotTextableError:
            return None
        except SendFailedError:
            if cap == "pages":
                raise
            logger.warning("dispatch text not sent", extra={"key": key, "wo_id": step.wo_id})
            return None
        step.event(
            "message.sent",
            sent.sid,
            key.split("#", 1)[-1],
            to_sha256=body_digest(sent.to),
            body_sha256=body_digest(sent.body),
            via=sent.via,
        )
        return sent

    def _publish(self, step: _Step) -> None:
        if step.events:
            self.deps.bus.publish(list(step.events))
            step.events.clear()
