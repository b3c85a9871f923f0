"""schedule_visit: propose or confirm a visit window; tell the tenant and the vendor (a PM's
proposal: the vendor only, and the PM what was done).

``propose`` passes the availability on and leaves the WO's status and window as they are (the
activity is recorded as a touch, which keeps the context fresh); ``confirm`` with a window sets
it and moves an open WO to scheduled. Only an open or scheduled WO is ever scheduled.
"""

from __future__ import annotations

from datetime import datetime

from maestro.domain.actions import Lane, ScheduleVisit
from maestro.domain.language import in_language
from maestro.domain.models import (
    SCHEDULABLE,
    InvalidTransitionError,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import (
    Change,
    finish,
    phone_of,
    short,
    target_work_order,
    touch,
    update_work_order,
    who_said,
)
from maestro.lanes.dispatch_waits import active_run

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
    # What the tenant reads, by language (the vendor's "confirmed" too: the same fixed text).
    to_tenant: dict[str, str] | None
    to_vendor: dict[str, str]
    if window:
        to_tenant = to_vendor = {
            "en": f"Visit confirmed for {label}: {when(window)}.",
            "es": f"Visita confirmada para {label}: {when(window, 'es')}.",
        }
    elif from_pm:
        to_tenant = None
        to_vendor = {
            "en": f"The property manager suggests a visit for {label}: {params.availability}. "
            "Please confirm a time with the tenant."
        }
    elif from_vendor:
        to_tenant = {
            "en": f"The technician proposes a visit for {label}: {params.availability}. OK?",
            "es": f"El técnico propone una visita para {label}: {params.availability}. "
            "¿Le parece bien?",
        }
        to_vendor = {"en": f"Thanks, I've asked the tenant about {label}: {params.availability}."}
    else:
        to_tenant = {
            "en": f"Thanks, noted your availability for {label}: {params.availability}.",
            "es": f"Gracias, anoté su disponibilidad para {label}: {params.availability}.",
        }
        if updated.vendor_id is None and active_run(ctx, wo_id) is not None:
            # No vendor yet, but the WO's execution is finding one: say so (the act step
            # completes a gather wait with these words).
            to_tenant = {
                "en": to_tenant["en"] + " I'm finding a vendor for it now and will text you "
                "when one accepts.",
                "es": to_tenant["es"] + " Estoy buscando un técnico y le escribiré cuando uno "
                "acepte.",
            }
        to_vendor = {
            "en": f"Tenant availability for {label}: {params.availability}. Please confirm a time."
        }

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
        ctx.send(phone, in_language(body, ctx.language_of(phone)), suffix=who)
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
        whom = f"told the {' and the '.join(told)}" if told else "nobody could be told"
        return f"Visit confirmed for {label}: {when(window)}; {whom}."
    if "vendor" in told:
        return (
            f"Passed to the vendor for {label}: {availability}. The tenant hears once a time "
            "is confirmed."
        )
    return f"Noted on {label}: no vendor could be told, so nobody was sent it yet."
