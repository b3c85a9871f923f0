"""schedule_visit: propose or confirm a visit window; tell the tenant and the vendor (a PM's
proposal: the vendor only, and the PM what was done).

``propose`` passes the availability on and leaves the WO's status and window as they are (the
activity is recorded as a touch, which keeps the context fresh); ``confirm`` with a window sets
it and moves an open WO to scheduled. Only an open or scheduled WO is ever scheduled.
"""

from __future__ import annotations

from datetime import datetime

from maestro.domain.actions import Lane, ScheduleVisit
from maestro.domain.fixed_texts import (
    ASKED_THE_TENANT,
    AVAILABILITY_NOTED,
    AVAILABILITY_NOTED_FINDING,
    PM_NO_VENDOR_TOLD,
    PM_NOBODY_TOLD,
    PM_PASSED_TO_VENDOR,
    PM_SUGGESTS_VISIT,
    PM_TOLD,
    PM_VISIT_CONFIRMED,
    TENANT_AVAILABILITY,
    VENDOR_PROPOSES_VISIT,
    VISIT_CONFIRMED,
    Texts,
    say,
)
from maestro.domain.models import (
    SCHEDULABLE,
    InvalidTransitionError,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.dispatch_waits import active_run
from maestro.lanes.helpers import (
    Change,
    finish,
    phone_of,
    short,
    target_work_order,
    touch,
    update_work_order,
    who_said,
)

__all__ = ["run", "when"]

_SCHEDULABLE = SCHEDULABLE


# Day and month names by hand: strftime's follow the process locale, not the reader's.
_DAYS_ES = ("lun", "mar", "mié", "jue", "vie", "sáb", "dom")
_MONTHS_ES = ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic")


def when(window: VisitWindow, language: str = "en") -> str:
    if language == "es":
        return f"del {_stamp_es(window.start)} al {_stamp_es(window.end)}"
    return f"{_stamp(window.start)} to {_stamp(window.end)}"


def _stamp(at: datetime) -> str:
    return at.strftime("%a %d %b %H:%M UTC")


def _stamp_es(at: datetime) -> str:
    day, month = _DAYS_ES[at.weekday()], _MONTHS_ES[at.month - 1]
    return f"{day} {at.day:02d} {month} {at:%H:%M} UTC"


def _confirm(window: VisitWindow, now: datetime) -> Change:
    def change(wo: WorkOrder) -> WorkOrder | None:
        if wo.status is WorkOrderStatus.SCHEDULED and wo.visit == window:
            return None  # already scheduled for exactly this window: a re-run writes nothing
        return wo.schedule(window, now)

    return change


def run(action: ScheduleVisit, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.SCHEDULE_VISIT
    params = action.params
    found = target_work_order(ctx, lane, action.target_wo_id)
    if isinstance(found, LaneOutcome):
        return found
    wo_id, wo = found
    if wo.status not in _SCHEDULABLE:
        return finish(
            ctx, lane, status="skipped", target=wo_id, note=f"{wo_id} is {wo.status}: not scheduled"
        )

    window: VisitWindow | None = None
    if params.mode == "confirm" and params.window_start and params.window_end:
        window = VisitWindow(start=params.window_start, end=params.window_end)
    try:
        change = _confirm(window, ctx.now) if window else touch(ctx)
        updated = update_work_order(ctx.work_orders, wo_id, change) or wo
    except InvalidTransitionError as exc:
        # The re-read WO moved on (completed, cancelled) between the check and the write.
        return finish(ctx, lane, status="skipped", target=wo_id, note=str(exc))

    mode = "confirm" if window else "propose"
    what = (
        f"visit confirmed {when(window)} by {who_said(ctx)}"
        if window
        else f"{who_said(ctx)} proposed a visit: {short(params.availability, 300)}"
    )
    entry = ctx.append_entry(
        "visit",
        wo_id,
        what,
        mode=mode,
        availability=params.availability,
        window_start=window.start if window else None,
        window_end=window.end if window else None,
        status=updated.status,
    )
    ctx.event(
        "wo.updated",
        wo_id,
        wo_id=wo_id,
        entry_id=entry.entry_id,
        entry="visit",
        version=updated.version,
        status=updated.status.value,
        window=when(window) if window else None,
        mode=mode,
    )

    label = f"{wo_id} ({short(updated.summary)})"
    sender = ctx.sender
    from_vendor = sender is not None and sender.role is PartyRole.VENDOR
    # A PM who is not a party to the WO: their words go to the vendor only; the tenant hears
    # of a visit once it is confirmed, in maestro's words.
    from_pm = (
        sender is not None
        and sender.role is PartyRole.PM
        and sender.party_id not in (updated.tenant_id, updated.vendor_id)
    )
    # What each reads, by language (the vendor's "confirmed" too: the same fixed text); a
    # template's fields are filled per reader below.
    to_tenant: Texts | None
    to_vendor: Texts
    if window:
        to_tenant = to_vendor = VISIT_CONFIRMED
    elif from_pm:
        to_tenant = None
        to_vendor = PM_SUGGESTS_VISIT
    elif from_vendor:
        to_tenant = VENDOR_PROPOSES_VISIT
        to_vendor = ASKED_THE_TENANT
    else:
        to_tenant = AVAILABILITY_NOTED
        if updated.vendor_id is None and active_run(ctx, wo_id) is not None:
            # No vendor yet, but the WO's execution is finding one: say so (the act step
            # completes a gather wait with these words).
            to_tenant = AVAILABILITY_NOTED_FINDING
        to_vendor = TENANT_AVAILABILITY

    told: list[str] = []
    missing: list[str] = []
    for who, party_id, body in (
        ("tenant", updated.tenant_id, to_tenant),
        ("vendor", updated.vendor_id, to_vendor),
    ):
        if party_id is None or body is None:
            continue  # no vendor assigned yet, or not theirs to hear (a PM's proposal)
        phone = phone_of(ctx, party_id)
        if phone is None:
            missing.append(who)
            continue
        language = ctx.language_of(phone, updated)
        filled = say(
            body,
            language,
            label=label,
            when=when(window, language) if window else "",
            availability=params.availability,
        )
        ctx.send(phone, filled, suffix=who)
        told.append(who)

    if from_pm and sender is not None:
        ctx.send(sender.phone, _pm_ack(label, window, params.availability, told), suffix="ack")
    what = f"visit confirmed {when(window)}" if window else "availability proposed"
    if params.mode == "confirm" and window is None:
        what += " (confirm without a window: treated as a proposal)"
    note = f"{what}; told {', '.join(told) or 'nobody'}"
    if missing:
        note += f"; no phone found for {', '.join(missing)}"
    return finish(ctx, lane, target=wo_id, note=note)


def _pm_ack(label: str, window: VisitWindow | None, availability: str, told: list[str]) -> str:
    """What a PM who set or proposed a visit is told: who heard of it, truly."""
    if window is not None:
        whom = (
            say(PM_TOLD, "en", whom=" and the ".join(told)) if told else say(PM_NOBODY_TOLD, "en")
        )
        return say(PM_VISIT_CONFIRMED, "en", label=label, when=when(window), whom=whom)
    if "vendor" in told:
        return say(PM_PASSED_TO_VENDOR, "en", label=label, availability=availability)
    return say(PM_NO_VENDOR_TOLD, "en", label=label)
