"""continue_with_assistant: the assistant replies to the sender; nothing else changes.

A reply the brain wrote is sent as written. A question about one of the sender's work orders
with no reply written ("any news on the heater?") is answered from the stored WO itself: its
status and visit as the store has them, never a promise the store does not back. A PM asking
about a work order of a property they manage always gets it from the store (with its vendor and
unit), whatever reply was written: what a PM is told about a job is the record.

With nothing written and no WO to describe, :func:`fixed_reply` picks the fixed text, and only
one that is true: a thanks gets "You're welcome!"; an acknowledgement or goodbye ("ok cool",
"👍", "have a good one") gets nothing (a reply to an ack invites another ack, costs a text and
tells them nothing new); "I'm on it" only when another action of the same package acts on the
message; otherwise that the message is saved and nothing was done with it.
"""

from __future__ import annotations

import re

from maestro.brain.precheck import is_soft_handback
from maestro.domain.actions import ContinueWithAssistant, Lane
from maestro.domain.consent import only_consent_keywords
from maestro.domain.fixed_texts import (
    ON_IT,
    PM_NO_VENDOR,
    PM_STATUS_LINE,
    PM_STATUS_OPEN,
    PM_UNIT,
    PM_VENDOR,
    RECORDED,
    STATUS,
    STATUS_LINE,
    WELCOME,
    say,
)
from maestro.domain.models import Package, PartyRole, WorkOrder, WorkOrderStatus
from maestro.domain.roles import part_of
from maestro.domain.sign_off import is_sign_off
from maestro.lanes.composed_reply import composed_or_fixed
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import finish, short
from maestro.lanes.schedule_visit import when

__all__ = [
    "NEUTRAL_REPLIES",
    "NEUTRAL_REPLY",
    "fixed_reply",
    "pm_status_reply",
    "run",
    "status_reply",
]

NEUTRAL_REPLIES = ON_IT
NEUTRAL_REPLY = ON_IT["en"]

_ACTING_LANES = frozenset(
    {
        Lane.CREATE_WO.value,
        Lane.RELAY_TO_OPEN_WO.value,
        Lane.SCHEDULE_VISIT.value,
        Lane.RECORD_RATING.value,
        Lane.RELAY_TO_VENDOR.value,
        Lane.MANAGE_EXISTING.value,
        Lane.ESCALATE.value,
        Lane.ANSWER_WAIT.value,
    }
)
"""Lanes whose effect backs "I'm on it": each does something with the message."""

_THANKS = re.compile(
    r"\b(?:thank|thanks|thankyou|thx|thnx|thanx|ty|tysm|tyvm|cheers|appreciated?|"
    r"gracias|agradezco|agradecid[oa])\b|🙏",
    re.IGNORECASE,
)


def is_chit_chat(package: Package) -> bool:
    """Nothing to act on: a pleasantry, an acknowledgement or a goodbye, and nothing else."""
    return is_soft_handback(package) or is_sign_off(package.text)


def fixed_reply(package: Package, language: str, package_lanes: tuple[str, ...] = ()) -> str | None:
    """The fixed text for a reply nobody wrote, in ``language``; None: say nothing.

    ``package_lanes``: the lanes of every action the package queued (an action's own
    ``package_lanes``). Chit-chat is answered in kind (a thanks) or not at all (an ack, a
    goodbye); "I'm on it" only when one of those lanes acts on the message; else the truth:
    the message is saved and nothing was done with it.
    """
    if is_chit_chat(package):
        return say(WELCOME, language) if _THANKS.search(package.text) else None
    if _ACTING_LANES.intersection(package_lanes):
        return say(ON_IT, language)
    return say(RECORDED, language)


def status_reply(wo: WorkOrder, language: str = "en") -> str:
    """Where a work order stands, from the stored record, in English or Spanish."""
    return say(
        STATUS_LINE,
        language,
        wo_id=wo.wo_id,
        summary=short(wo.summary, 60),
        where=_where(wo, language),
    )


def _where(wo: WorkOrder, language: str) -> str:
    if wo.status is WorkOrderStatus.SCHEDULED and wo.visit is not None:
        return say(STATUS["scheduled_at"], language, visit=when(wo.visit, language))
    texts = STATUS.get(wo.status.value)
    if texts is None:
        return say(STATUS["other"], language, status=wo.status.value)
    return say(texts, language)


def pm_status_reply(wo: WorkOrder, vendor: str | None) -> str:
    """Where a work order stands, for its PM: status and visit, vendor, unit, from the store."""
    open_ = wo.status is WorkOrderStatus.OPEN
    where = say(PM_STATUS_OPEN, "en") if open_ else _where(wo, "en")
    who = say(PM_VENDOR, "en", name=short(vendor, 40)) if vendor else say(PM_NO_VENDOR, "en")
    unit = say(PM_UNIT, "en", unit=short(wo.unit, 12)) if wo.unit else ""
    return say(
        PM_STATUS_LINE,
        "en",
        wo_id=wo.wo_id,
        summary=short(wo.summary, 60),
        where=where,
        unit=unit,
        who=who,
        urgency=wo.urgency.value,
    )


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
    note = "assistant replied"
    if not reply:
        # With a model, the cheap model writes it and the check lets it go, or the fixed text
        # (None: chit-chat that needs no answer, and nothing is composed either).
        lanes = ctx.queued.package_lanes if ctx.queued is not None else ()
        choice = composed_or_fixed(ctx, fixed_reply(ctx.package, ctx.sender_language, lanes))
        note = f"{note}: {choice.note}" if choice.note else note
        if choice.text is None:
            return finish(
                ctx,
                Lane.CONTINUE_WITH_ASSISTANT,
                target=target,
                note="no reply: chit-chat with nothing to act on (an ack needs none)",
            )
        reply = choice.text
    ctx.send(to, reply, suffix="reply")
    return finish(ctx, Lane.CONTINUE_WITH_ASSISTANT, target=target, note=note)
