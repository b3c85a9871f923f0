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

from maestro.domain.actions import Lane, ManageExistingParams
from maestro.domain.common import truncate
from maestro.domain.fixed_texts import (
    CLOSED_BY_PM_RATING_REQUEST,
    CLOSED_BY_PM_TO_VENDOR,
    CLOSED_DONE,
    COMPLETION_CHECK,
    COMPLETION_CONFIRMED_TO_VENDOR,
    COMPLETION_NO_JOB,
    COMPLETION_NOT_REPORTABLE,
    COMPLETION_NOTED,
    COMPLETION_WHICH,
    NO_OPEN_JOBS,
    NOT_REPORTED_YET,
    RATING_REQUEST,
    YOUR_VENDOR,
)
from maestro.domain.language import in_language
from maestro.domain.models import (
    REPORTABLE,
    InvalidTransitionError,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.roles import part_of
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import Change, finish, phone_of, short, update_work_order, who_said

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
    named = [wo_id for i in params.wo_ids if (wo_id := ctx.resolve_target(i) or i) in mine]
    if len(named) != 1:
        return _which(ctx, list(mine.values()))
    wo = mine[named[0]]
    part = part_of(sender, wo)
    if part == "vendor":
        return _report(ctx, wo)
    if part == "tenant":
        return _confirm(ctx, wo)
    return finish(ctx, lane, status="skipped", note=f"complete: a {part} of {wo.wo_id} may not")


def _which(ctx: LaneContext, mine: list[WorkOrder]) -> LaneOutcome:
    """Not one job named: a vendor is asked which of their jobs is finished, by id (no question
    is stored: the answer naming one is a report of its own); anyone else hears what they have
    open. Nothing changes."""
    sender = ctx.sender
    assert sender is not None
    language = ctx.sender_language
    jobs = [wo for wo in mine if part_of(sender, wo) == "vendor" and wo.status in REPORTABLE]
    if len(jobs) > 1:
        lead = in_language(COMPLETION_WHICH, language).format(example=jobs[0].wo_id)
        listed = "; ".join(job_label(wo) for wo in jobs)
        text = f"{lead} {listed}"
    else:
        listed = "; ".join(job_label(wo) for wo in mine) or in_language(NO_OPEN_JOBS, language)
        text = in_language(COMPLETION_NO_JOB, language).format(jobs=listed)
    ctx.send(sender.phone, truncate(text, 1500), suffix="which")
    return finish(
        ctx,
        Lane.MANAGE_EXISTING,
        status="skipped",
        note=f"complete: not one job named; asked which of {len(jobs)}"
        if len(jobs) > 1
        else "complete: no open job of theirs named",
    )


def _report(ctx: LaneContext, wo: WorkOrder) -> LaneOutcome:
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
        ctx.send(sender.phone, text, suffix="not-reportable")
        return finish(
            ctx, lane, status="skipped", target=wo.wo_id, note=f"{wo.wo_id} is {wo.status}"
        )
    # Their words go on the record with it (what they did, a note for the tenant).
    said = f': "{short(ctx.package.text, 300)}"' if ctx.package.text else ""
    _status_entry(ctx, wo, updated, "report_completion", f"reported the job finished{said}")
    tenant = phone_of(ctx, updated.tenant_id)
    asked = ""
    if tenant is not None:
        tenant_language = ctx.language_of(tenant)
        check = in_language(COMPLETION_CHECK, tenant_language).format(
            vendor=vendor_name(ctx, updated, tenant_language), job=job_label(updated)
        )
        if ctx.send(tenant, truncate(check, 500), suffix=f"check#{wo.wo_id}") is not None:
            asked = "; the tenant is asked to confirm"
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
    """Complete the WO with its rating request out; completed already → nothing (a re-run)."""

    def change(current: WorkOrder) -> WorkOrder | None:
        if current.status is WorkOrderStatus.COMPLETED:
            return None
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
        if tenant is not None and wo.rating_requested:
            request = in_language(CLOSED_BY_PM_RATING_REQUEST, ctx.language_of(tenant))
            ctx.send(tenant, request.format(job=job_label(wo)), suffix=f"tenant#{wo.wo_id}")
        vendor = phone_of(ctx, wo.vendor_id)
        if vendor is not None and wo.vendor_id != sender.party_id:
            told = in_language(CLOSED_BY_PM_TO_VENDOR, ctx.language_of(vendor))
            ctx.send(vendor, told.format(job=job_label(wo)), suffix=f"vendor#{wo.wo_id}")
