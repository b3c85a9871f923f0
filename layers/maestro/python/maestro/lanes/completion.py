"""Completion from the field: the effects of manage_existing's ``complete`` (docs/completion.md).

- The WO's vendor reports it done → ``completion_reported``; the tenant is asked to confirm
  ("Vic says … is finished. All good? Reply YES, or tell us what's still wrong"), the vendor
  hears that the tenant was asked.
- The tenant's YES on a reported job → ``completed`` with the rating request out (one write);
  the tenant is asked for stars, the vendor hears it is closed.
- A PM's close is held until the PM's YES like a cancel (manage_existing holds it); released,
  it completes the WO here (:func:`complete_change`, :func:`tell_closed`).
- The tenant's complaint on a reported job reopens it to its vendor: relay_to_open_wo.

Each status change appends a status entry to the WO's timeline and claims it with
``wo.updated`` (status and operation), which the watcher reads back from the WO store.
"""

from __future__ import annotations

from maestro.domain.actions import DeferredCall, Lane, ManageExistingParams
from maestro.domain.common import truncate
from maestro.domain.fixed_texts import (
    CLOSED_BY_PM_NO_VENDOR,
    CLOSED_BY_PM_RATING_REQUEST,
    CLOSED_BY_PM_TO_VENDOR,
    CLOSED_DONE,
    COMPLETION_CHECK,
    COMPLETION_CONFIRMED_TO_VENDOR,
    COMPLETION_NO_JOB,
    COMPLETION_NOT_REPORTABLE,
    COMPLETION_NOTED,
    COMPLETION_NOTED_SEVERAL,
    NO_OPEN_JOBS,
    NOT_REPORTED_YET,
    RATING_REQUEST,
    YOUR_VENDOR,
)
from maestro.domain.language import in_language
from maestro.domain.models import (
    REPORTABLE,
    InvalidTransitionError,
    PartyRole,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.roles import part_of
from maestro.lanes.clarify import ask_about_call
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import Change, finish, phone_of, short, update_work_order, who_said

__all__ = [
    "complete_change",
    "job_label",
    "reopen",
    "reopened_entry",
    "report_or_confirm",
    "tell_closed",
    "vendor_name",
]


def job_label(wo: WorkOrder) -> str:
    """How a text names the job: its id and a short summary ("WO-12 (leak under the sink)")."""
    return f"{wo.wo_id} ({short(wo.summary, 60)})"


def vendor_name(ctx: LaneContext, wo: WorkOrder, language: str) -> str:
    party = ctx.parties.by_party_id(wo.vendor_id) if wo.vendor_id else None
    if party is not None and party.name:
        return short(party.name, 40)
    return in_language(YOUR_VENDOR, language)


def report_or_confirm(params: ManageExistingParams, ctx: LaneContext) -> LaneOutcome:
    """A vendor's or a tenant's ``complete``: on the one work order of theirs it names."""
    lane = Lane.MANAGE_EXISTING
    sender = ctx.sender
    assert sender is not None  # manage_existing.run checked it
    mine = {wo.wo_id: wo for wo in ctx.work_orders.open_for_party(sender.party_id) if wo.is_open}
    named = list(
        dict.fromkeys(wo_id for i in params.wo_ids if (wo_id := ctx.resolve_target(i) or i) in mine)
    )
    if len(named) > 1 and all(part_of(sender, mine[i]) == "vendor" for i in named):
        # "both are done" to the question below, or "WO-12 and WO-14 are done": each is reported.
        return _report_several(ctx, [mine[i] for i in named])
    if len(named) != 1:
        return _which(ctx, list(mine.values()), params)
    wo = mine[named[0]]
    part = part_of(sender, wo)
    if part == "vendor":
        return _report(ctx, wo)
    if part == "tenant":
        return _confirm(ctx, wo)
    return finish(ctx, lane, status="skipped", note=f"complete: a {part} of {wo.wo_id} may not")


def _which(ctx: LaneContext, mine: list[WorkOrder], params: ManageExistingParams) -> LaneOutcome:
    """Not one job named: a vendor with several jobs in hand is asked which are finished, the
    jobs numbered, and the question is stored with a deferred ``complete`` (the answer "2",
    "the kitchen one", "both" reports exactly those, the way a named report does). Anyone else
    hears what they have open. Nothing changes yet."""
    sender = ctx.sender
    assert sender is not None
    language = ctx.sender_language
    jobs = [wo for wo in mine if part_of(sender, wo) == "vendor" and wo.status in REPORTABLE]
    if len(jobs) > 1:
        call = DeferredCall(operation="complete", request=truncate(params.request, 300))
        ids = [wo.wo_id for wo in jobs][:_MAX_ASKED]
        lines = [f"{wo.wo_id}: {short(wo.summary, 60)}" for wo in jobs][:_MAX_ASKED]
        return ask_about_call(ctx, Lane.MANAGE_EXISTING, call, ids, lines, "multi_context")
    listed = "; ".join(job_label(wo) for wo in mine) or in_language(NO_OPEN_JOBS, language)
    text = in_language(COMPLETION_NO_JOB, language).format(jobs=listed)
    ctx.send(sender.phone, truncate(text, 1500), suffix="which")
    return finish(
        ctx, Lane.MANAGE_EXISTING, status="skipped", note="complete: no open job of theirs named"
    )


_MAX_ASKED = 10
"""A question lists at most this many candidates (ClarifyParams.candidate_ids)."""


def _report_several(ctx: LaneContext, wos: list[WorkOrder]) -> LaneOutcome:
    """Each named job reported finished, as :func:`_report` does one; the vendor hears which
    were marked in one text."""
    sender = ctx.sender
    assert sender is not None
    outcomes = [_report(ctx, wo, ack=False) for wo in wos]
    reported = [wo for wo, done in zip(wos, outcomes, strict=True) if done.status == "done"]
    if reported:
        text = in_language(COMPLETION_NOTED_SEVERAL, ctx.sender_language).format(
            jobs="; ".join(job_label(wo) for wo in reported)
        )
        ctx.send(sender.phone, truncate(text, 1000), suffix="noted")
    return finish(
        ctx,
        Lane.MANAGE_EXISTING,
        status="done" if reported else "skipped",
        note=truncate("; ".join(o.note for o in outcomes), 500),
    )


def _report(ctx: LaneContext, wo: WorkOrder, *, ack: bool = True) -> LaneOutcome:
    """The vendor's report of ``wo``: reported, the tenant asked; the vendor hears it
    (``ack``: one text for several jobs is sent by :func:`_report_several`)."""
    lane = Lane.MANAGE_EXISTING
    sender = ctx.sender
    assert sender is not None
    language = ctx.sender_language

    def change(current: WorkOrder) -> WorkOrder | None:
        if current.status is WorkOrderStatus.COMPLETION_REPORTED:
            return None  # reported already (a re-run, or a second report): ask again
        return current.report_completion(ctx.now)

    try:
        updated = update_work_order(ctx.work_orders, wo.wo_id, change) or wo
    except InvalidTransitionError:
        status = wo.status.value.replace("_", " ")
        text = in_language(COMPLETION_NOT_REPORTABLE, language).format(
            job=job_label(wo), status=status
        )
        ctx.send(sender.phone, text, suffix=f"not-reportable#{wo.wo_id}")
        return finish(
            ctx, lane, status="skipped", target=wo.wo_id, note=f"{wo.wo_id} is {wo.status}"
        )
    # Their words go on the record with it (what they did, a note for the tenant).
    said = f': "{short(ctx.package.text, 300)}"' if ctx.package.text else ""
    _status_entry(ctx, wo, updated, "report_completion", f"reported the job finished{said}")
    tenant = phone_of(ctx, updated.tenant_id)
    asked = ""
    if tenant is not None:
        tenant_language = ctx.language_of(tenant, updated)
        check = in_language(COMPLETION_CHECK, tenant_language).format(
            vendor=vendor_name(ctx, updated, tenant_language), job=job_label(updated)
        )
        if ctx.send(tenant, truncate(check, 500), suffix=f"check#{wo.wo_id}") is not None:
            asked = "; the tenant is asked to confirm"
    if ack:
        ctx.send(
            sender.phone,
            truncate(in_language(COMPLETION_NOTED, language).format(job=job_label(updated)), 500),
            suffix="noted",
        )
    return finish(
        ctx, lane, target=wo.wo_id, note=f"{wo.wo_id} reported finished by its vendor{asked}"
    )


def _confirm(ctx: LaneContext, wo: WorkOrder) -> LaneOutcome:
    lane = Lane.MANAGE_EXISTING
    sender = ctx.sender
    assert sender is not None
    language = ctx.sender_language
    if wo.status is not WorkOrderStatus.COMPLETION_REPORTED:
        # Only the vendor's report opens the tenant's confirmation: nothing changes before it.
        text = in_language(NOT_REPORTED_YET, language).format(job=job_label(wo))
        ctx.send(sender.phone, text, suffix="not-reported")
        return finish(
            ctx, lane, status="skipped", target=wo.wo_id, note=f"{wo.wo_id} is {wo.status}"
        )
    try:
        updated = update_work_order(ctx.work_orders, wo.wo_id, complete_change(ctx)) or wo
    except InvalidTransitionError:
        return finish(ctx, lane, status="skipped", target=wo.wo_id, note="moved on meanwhile")
    said = f': "{short(ctx.package.text, 300)}"' if ctx.package.text else ""
    _status_entry(ctx, wo, updated, "confirm_completion", f"confirmed the job is finished{said}")
    request = in_language(RATING_REQUEST, language).format(
        job=job_label(updated), vendor=vendor_name(ctx, updated, language)
    )
    ctx.send(sender.phone, truncate(request, 500), suffix="rating-request")
    vendor = phone_of(ctx, updated.vendor_id)
    if vendor is not None:
        told = in_language(COMPLETION_CONFIRMED_TO_VENDOR, ctx.language_of(vendor))
        ctx.send(vendor, told.format(job=job_label(updated)), suffix=f"vendor#{wo.wo_id}")
    return finish(
        ctx,
        lane,
        target=wo.wo_id,
        note=f"{wo.wo_id} completed on the tenant's confirmation; rating requested",
    )


def complete_change(ctx: LaneContext) -> Change:
    """Complete the WO with its rating request out; completed already → nothing (a re-run). An
    open one no vendor took is closed unworked, with no rating request, by a PM only."""
    by_pm = ctx.sender is not None and ctx.sender.role is PartyRole.PM

    def change(current: WorkOrder) -> WorkOrder | None:
        if current.status is WorkOrderStatus.COMPLETED:
            return None
        if current.status is WorkOrderStatus.OPEN and by_pm:
            return current.close_unworked(ctx.now)
        return current.complete(ctx.now)

    return change


def reopen(ctx: LaneContext) -> Change:
    """Back to its vendor (assigned); reopened already → nothing (a re-run)."""

    def change(current: WorkOrder) -> WorkOrder | None:
        if current.status is not WorkOrderStatus.COMPLETION_REPORTED:
            return None
        return current.reopen(ctx.now)

    return change


def reopened_entry(ctx: LaneContext, before: WorkOrder, after: WorkOrder) -> None:
    """The reopening on the timeline, claimed (the relay's note has an entry of its own)."""
    if after.status is not WorkOrderStatus.COMPLETION_REPORTED:
        _status_entry(ctx, before, after, "reopen", "said the job is not finished: reopened")


def _status_entry(
    ctx: LaneContext, before: WorkOrder, after: WorkOrder, operation: str, did: str
) -> None:
    """The status change on the WO's timeline, claimed by ``wo.updated``."""
    entry = ctx.append_entry(
        "status",
        after.wo_id,
        f"{who_said(ctx)} {did}",
        after.wo_id,
        from_status=before.status,
        to_status=after.status,
        operation=operation,
    )
    ctx.event(
        "wo.updated",
        after.wo_id,
        after.wo_id,
        wo_id=after.wo_id,
        entry_id=entry.entry_id,
        entry=entry.kind,
        version=after.version,
        status=after.status.value,
        operation=operation,
    )


def tell_closed(ctx: LaneContext, done: list[WorkOrder]) -> None:
    """After a PM's released close: the PM hears it is done, each tenant is asked for stars,
    each vendor hears it is closed (fixed words: nothing the PM wrote)."""
    sender = ctx.sender
    assert sender is not None
    if not done:
        return
    jobs = ", ".join(job_label(wo) for wo in done)
    said = in_language(CLOSED_DONE, ctx.sender_language).format(jobs=jobs)
    ctx.send(sender.phone, truncate(said, 500), suffix="done")
    for wo in done:
        tenant = phone_of(ctx, wo.tenant_id)
        if tenant is not None:
            # No vendor did the work (closed unworked): the tenant is told, and asked nothing.
            closed = CLOSED_BY_PM_RATING_REQUEST if wo.rating_requested else CLOSED_BY_PM_NO_VENDOR
            text = in_language(closed, ctx.language_of(tenant, wo)).format(job=job_label(wo))
            ctx.send(tenant, truncate(text, 500), suffix=f"tenant#{wo.wo_id}")
        vendor = phone_of(ctx, wo.vendor_id)
        if vendor is not None and wo.vendor_id != sender.party_id:
            told = in_language(CLOSED_BY_PM_TO_VENDOR, ctx.language_of(vendor))
            ctx.send(vendor, told.format(job=job_label(wo)), suffix=f"vendor#{wo.wo_id}")
