"""relay_to_open_wo: add the sender's information to an open WO and relay it to the WO's vendor."""

from __future__ import annotations

from maestro.domain.actions import Lane, RelayToOpenWo
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import (
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
    updated = update_work_order(ctx.work_orders, wo_id, touch(ctx)) or wo
    entry = ctx.append_entry(
        "note", wo_id, f"{who_said(ctx)} added a note: {short(note, 300)}", note=note
    )
    ctx.event(
        "wo.updated",
        wo_id,
        wo_id=wo_id,
        entry_id=entry.entry_id,
        entry="note",
        version=updated.version,
        status=updated.status.value,
        note=note[:300],
    )

    sender_id = ctx.sender.party_id if ctx.sender else None
    vendor_phone = phone_of(ctx, updated.vendor_id)
    if updated.vendor_id is None:
        relayed = "no vendor assigned yet: nothing relayed"
    elif updated.vendor_id == sender_id:
        relayed = "the sender is the vendor: nothing relayed"
    elif vendor_phone is None:
        relayed = f"vendor {updated.vendor_id} has no phone the directory can find: not relayed"
    else:
        ctx.send(
            vendor_phone,
            f"Update on {wo_id} ({short(updated.summary)}"
            + (f", unit {updated.unit}" if updated.unit else "")
            + f"): {note}",
            suffix="vendor",
        )
        relayed = f"relayed to vendor {updated.vendor_id}"
    if ctx.sender is not None:
        # The sender hears where their words went: the note is on the record, and who has it.
        vendor = ctx.parties.by_party_id(updated.vendor_id) if updated.vendor_id else None
        passed = (
            f" and passed it on to {short(vendor.name or 'the vendor', 40)}"
            if relayed.startswith("relayed") and vendor is not None
            else ""
        )
        ctx.send(
            ctx.sender.phone,
            f"Thanks, I've added that to {wo_id} ({short(updated.summary, 60)}){passed}.",
            suffix="ack",
        )
    return finish(
        ctx, lane, target=wo_id, note=f"note added to {wo_id} ({entry.entry_id}); {relayed}"
    )
