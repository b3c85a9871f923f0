"""relay_to_open_wo: add the sender's information to an open WO and relay it to the other side of
the WO: a tenant's words to its vendor, the vendor's to its tenant. A PM's note stays on the WO's
timeline: it reaches neither tenant nor vendor (a PM messages the vendor through relay_to_vendor).
"""

from __future__ import annotations

from maestro.domain.actions import Lane, RelayToOpenWo
from maestro.domain.events import body_digest
from maestro.domain.fixed_texts import (
    ADDED,
    ADDED_AND_PASSED,
    ADDED_FINDING,
    PM_NOTED,
    REOPENED_ACK,
    REOPENED_TO_VENDOR,
    UPDATE,
    UPDATE_FROM,
    say,
)
from maestro.domain.models import PartyRole, WorkOrder, WorkOrderStatus
from maestro.lanes.completion import job_label, reopen, reopened_entry
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.dispatch_waits import active_run
from maestro.lanes.helpers import (
    attached,
    finish,
    phone_of,
    short,
    target_work_order,
    touch,
    update_work_order,
    who_said,
)

__all__ = ["run"]


def run(action: RelayToOpenWo, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.RELAY_TO_OPEN_WO
    found = target_work_order(ctx, lane, action.target_wo_id)
    if isinstance(found, LaneOutcome):
        return found
    wo_id, wo = found
    if not wo.is_open:
        return finish(ctx, lane, status="skipped", target=wo_id, note=f"{wo_id} is {wo.status}")

    note = action.params.note
    media = ctx.package.media  # the files they sent with it: references on the note
    # The tenant's words on a job its vendor reported finished say it is not: it goes back to
    # the vendor (docs/completion.md).
    reopening = (
        wo.status is WorkOrderStatus.COMPLETION_REPORTED
        and ctx.sender is not None
        and ctx.sender.party_id == wo.tenant_id
    )
    updated = update_work_order(ctx.work_orders, wo_id, reopen(ctx) if reopening else touch(ctx))
    updated = updated or wo
    if reopening:
        reopened_entry(ctx, wo, updated)
    entry = ctx.append_entry(
        "note",
        wo_id,
        f"{who_said(ctx)} added a note{attached(media)}: {short(note, 300)}",
        note=note,
        media=media,
    )
    ctx.event(
        "wo.updated",
        wo_id,
        wo_id=wo_id,
        entry_id=entry.entry_id,
        entry="note",
        version=updated.version,
        status=updated.status.value,
        note_sha256=body_digest(note),
    )

    relayed, to_whom = _relay_onward(ctx, wo_id, updated, note, reopening)
    # No vendor yet, but the WO's execution is finding one (gathering, judging, offering): the
    # tenant hears that, not "no vendor" (the act step completes a gather wait with these words).
    tenants = ctx.sender is not None and ctx.sender.party_id == updated.tenant_id
    run = active_run(ctx, wo_id) if updated.vendor_id is None and tenants else None
    finding = run is not None
    if run is not None:
        relayed = f"no vendor yet: its dispatch run is {run.step}, the note is on the record"
    if ctx.sender is not None:
        # The sender hears where their words went: the note is on the record, and who has it.
        label = f"{wo_id} ({short(updated.summary, 60)})"
        whom = short(to_whom, 40)
        if finding:
            said = say(ADDED_FINDING, ctx.sender_language, label=label)
        elif to_whom:
            said = say(ADDED_AND_PASSED, ctx.sender_language, label=label, whom=whom)
        else:
            said = say(ADDED, ctx.sender_language, label=label)
        if reopening and to_whom:
            said = say(REOPENED_ACK, ctx.sender_language, job=job_label(updated), vendor=whom)
        if ctx.sender.role is PartyRole.PM and not to_whom:
            said = say(PM_NOTED, "en", label=label)
        ctx.send(ctx.sender.phone, said, suffix="ack")
    return finish(
        ctx, lane, target=wo_id, note=f"note added to {wo_id} ({entry.entry_id}); {relayed}"
    )


def _relay_onward(
    ctx: LaneContext, wo_id: str, wo: WorkOrder, note: str, reopened: bool = False
) -> tuple[str, str]:
    """Pass the note to the other side of the work order: the tenant's words to its vendor, the
    vendor's to its tenant. (What was done, in words; whom it reached, by name, or "".)"""
    sender_id = ctx.sender.party_id if ctx.sender else None
    if (
        ctx.sender is not None
        and ctx.sender.role is PartyRole.PM
        and sender_id
        not in (
            wo.tenant_id,
            wo.vendor_id,
        )
    ):
        return "a PM's note: kept on the record, relayed to nobody", ""
    label = f"{wo_id} ({short(wo.summary)}" + (f", unit {wo.unit}" if wo.unit else "") + ")"
    vendors = wo.vendor_id is not None and wo.vendor_id == sender_id
    if vendors:
        other_id, role = wo.tenant_id, "tenant"
    elif wo.vendor_id is None:
        return "no vendor assigned yet: nothing relayed", ""
    else:
        other_id, role = wo.vendor_id, "vendor"
    phone = phone_of(ctx, other_id)
    if phone is None:
        return f"{role} {other_id} has no phone the directory can find: not relayed", ""
    language = ctx.language_of(phone, wo)
    if reopened:
        words = say(REOPENED_TO_VENDOR, language, job=job_label(wo), said=short(note, 300))
    elif vendors and ctx.sender is not None:
        name = short(ctx.sender.name or "your vendor", 40)
        words = say(UPDATE_FROM, language, label=label, name=name, note=note)
    else:
        words = say(UPDATE, language, label=label, note=note)
    if ctx.send(phone, words, suffix=role) is None:
        # Opted out, no consent or a cap reached: the note is kept, and nobody is told it went.
        return f"{role} {other_id} could not be texted: kept on the record, not relayed", ""
    other = ctx.parties.by_party_id(other_id)
    return f"relayed to {role} {other_id}", (other.name if other and other.name else f"the {role}")
