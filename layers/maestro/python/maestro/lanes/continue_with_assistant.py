"""continue_with_assistant: the assistant replies to the sender; nothing else changes.

A reply the brain wrote is sent as written. A question about one of the sender's work orders
with no reply written ("any news on the heater?") is answered from the stored WO itself: its
status and visit as the store has them, never a promise the store does not back. A PM asking
about a work order of a property they manage always gets it from the store (with its vendor and
unit), whatever reply was written: what a PM is told about a job is the record.
"""

from __future__ import annotations

from maestro.domain.actions import ContinueWithAssistant, Lane
from maestro.domain.consent import only_consent_keywords
from maestro.domain.language import in_language
from maestro.domain.models import PartyRole, WorkOrder, WorkOrderStatus
from maestro.domain.roles import part_of
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish, short
from maestro.lanes.schedule_visit import when

__all__ = ["NEUTRAL_REPLIES", "NEUTRAL_REPLY", "pm_status_reply", "run", "status_reply"]

NEUTRAL_REPLIES = {
    "en": "Thanks for your message. I'm on it and will get back to you shortly.",
    "es": "Gracias por su mensaje. Me ocupo de ello y le respondo en breve.",
}
NEUTRAL_REPLY = NEUTRAL_REPLIES["en"]

_STATUS = {
    WorkOrderStatus.OPEN: "is open; no visit is booked yet. We'll text you when one is",
    WorkOrderStatus.ASSIGNED: "has a vendor assigned; no visit is booked yet",
    WorkOrderStatus.IN_PROGRESS: "is in progress",
    WorkOrderStatus.COMPLETION_REPORTED: "was reported finished by its vendor; the tenant is "
    "asked to confirm",
    WorkOrderStatus.COMPLETED: "is completed",
    WorkOrderStatus.CANCELLED: "was cancelled",
}


_STATUS_ES = {
    WorkOrderStatus.OPEN: "está abierta; aún no hay visita programada. Le avisaremos por mensaje "
    "cuando la haya",
    WorkOrderStatus.ASSIGNED: "tiene un técnico asignado; aún no hay visita programada",
    WorkOrderStatus.SCHEDULED: "está programada",
    WorkOrderStatus.IN_PROGRESS: "está en curso",
    WorkOrderStatus.COMPLETION_REPORTED: "el técnico la reportó terminada; se le pidió al "
    "inquilino que lo confirme",
    WorkOrderStatus.COMPLETED: "está completada",
    WorkOrderStatus.CANCELLED: "fue cancelada",
}


def status_reply(wo: WorkOrder, language: str = "en") -> str:
    """Where a work order stands, from the stored record, in English or Spanish."""
    visit = wo.visit if wo.status is WorkOrderStatus.SCHEDULED else None
    if language == "es":
        if visit is not None:
            where = f"está programada: la visita es {when(visit, 'es')}"
        else:
            where = _STATUS_ES.get(wo.status, f"está en estado {wo.status.value}")
    elif visit is not None:
        where = f"is scheduled: the visit is {when(visit)}"
    else:
        where = _STATUS.get(wo.status, f"is {wo.status.value}")
    return f"{wo.wo_id} ({short(wo.summary, 60)}) {where}."


def pm_status_reply(wo: WorkOrder, vendor: str | None) -> str:
    """Where a work order stands, for its PM: status and visit, vendor, unit, from the store."""
    if wo.status is WorkOrderStatus.SCHEDULED and wo.visit is not None:
        where = f"is scheduled: the visit is {when(wo.visit)}"
    elif wo.status is WorkOrderStatus.OPEN:
        where = "is open; no visit is booked yet"
    else:
        where = _STATUS.get(wo.status, f"is {wo.status.value}")
    who = f"vendor {short(vendor, 40)}" if vendor else "no vendor assigned yet"
    unit = f"unit {short(wo.unit, 12)}, " if wo.unit else ""
    return f"{wo.wo_id} ({short(wo.summary, 60)}) {where}. {unit}{who}, {wo.urgency.value}."


def _vendor_name(ctx: LaneContext, wo: WorkOrder) -> str | None:
    if wo.vendor_id is None:
        return None
    vendor = ctx.parties.by_party_id(wo.vendor_id)
    return (vendor.name or wo.vendor_id) if vendor is not None else wo.vendor_id


def run(action: ContinueWithAssistant, ctx: LaneContext) -> LaneOutcome:
    # An unknown sender still gets a reply, on the number the package came from; nothing binds
    # that number to a person.
    to = ctx.sender.phone if ctx.sender is not None else ctx.package.sender_phone
    target = ctx.resolve_target(action.target_wo_id)
    if only_consent_keywords(ctx.package):
        # Twilio answered the STOP or START itself, at the carrier: a second text would be noise
        # (and after STOP, one maestro may not send).
        return finish(
            ctx,
            Lane.CONTINUE_WITH_ASSISTANT,
            status="skipped",
            target=target,
            note="a consent keyword (Twilio answers it): no reply",
        )
    reply = action.params.reply_hint
    sender = ctx.sender
    if target is not None and sender is not None and (reply is None or sender.role is PartyRole.PM):
        wo = ctx.work_orders.get(target)
        # Only the sender's own work order (or their property's, for a PM) is described to them.
        if wo is not None and part_of(sender, wo) is not None:
            if sender.role is PartyRole.PM:
                reply = pm_status_reply(wo, _vendor_name(ctx, wo))
            else:
                reply = status_reply(wo, ctx.sender_language)
    ctx.send(to, reply or in_language(NEUTRAL_REPLIES, ctx.sender_language), suffix="reply")
    return finish(ctx, Lane.CONTINUE_WITH_ASSISTANT, target=target, note="assistant replied")
