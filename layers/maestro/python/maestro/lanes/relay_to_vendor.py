"""relay_to_vendor: pass the sender's message on to the WO's vendor."""

from __future__ import annotations

from maestro.domain.actions import Lane, RelayToVendor
from maestro.domain.fixed_texts import MESSAGE_FOR_VENDOR, UNIT_SUFFIX, say
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import finish, phone_of, short, target_work_order

__all__ = ["run"]


def run(action: RelayToVendor, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.RELAY_TO_VENDOR
    found = target_work_order(ctx, lane, action.target_wo_id)
    if isinstance(found, LaneOutcome):
        return found
    wo_id, wo = found
    if wo.vendor_id is None:
        return finish(ctx, lane, status="skipped", target=wo_id, note=f"{wo_id} has no vendor yet")
    if ctx.sender is not None and ctx.sender.party_id == wo.vendor_id:
        return finish(ctx, lane, status="skipped", target=wo_id, note="the sender is the vendor")
    vendor_phone = phone_of(ctx, wo.vendor_id)
    if vendor_phone is None:
        return finish(
            ctx,
            lane,
            status="skipped",
            target=wo_id,
            note=f"vendor {wo.vendor_id} has no phone the directory can find: not relayed",
        )

    # may_act_on passed: the sender is the tenant or a PM.
    who = "the tenant" if ctx.sender and ctx.sender.party_id == wo.tenant_id else "the PM"
    language = ctx.language_of(vendor_phone)
    unit = say(UNIT_SUFFIX, language, unit=wo.unit) if wo.unit else ""
    body = say(
        MESSAGE_FOR_VENDOR,
        language,
        who=who,
        wo_id=wo_id,
        summary=short(wo.summary),
        unit=unit,
        message=action.params.message,
    )
    ctx.send(vendor_phone, body, suffix="vendor")
    return finish(ctx, lane, target=wo_id, note=f"relayed to vendor {wo.vendor_id}")
