"""record_rating: store a rating, only while the WO has a rating request outstanding (I7).

Dispose already refuses a rating without a request; this is the check at the effect, against
the WO as stored now. A re-run finds the request consumed and the same stars stored, and reports
the rating as recorded without writing again.
"""

from __future__ import annotations

from maestro.domain.actions import Lane, RecordRating
from maestro.domain.models import InvalidTransitionError, WorkOrder
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish, may_act_on, phone_of, short, update_work_order

__all__ = ["run"]


def run(action: RecordRating, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.RECORD_RATING
    stars = action.params.stars
    wo_id = ctx.resolve_target(action.target_wo_id)
    wo = ctx.work_orders.get(wo_id) if wo_id else None
    if wo is None or wo_id is None:
        return finish(ctx, lane, status="skipped", target=wo_id, note=f"no work order {wo_id}")
    if not may_act_on(ctx, wo):
        return finish(ctx, lane, status="skipped", target=wo_id, note="sender is not on this WO")

    def change(current: WorkOrder) -> WorkOrder | None:
        if not current.rating_requested and current.rating == stars:
            return None  # recorded by an earlier run of this action
        return current.record_rating(stars, ctx.now)  # raises unless a request is outstanding

    try:
        rated = update_work_order(ctx.work_orders, wo_id, change) or wo
    except InvalidTransitionError:
        return finish(
            ctx,
            lane,
            status="skipped",
            target=wo_id,
            note=f"{wo_id} has no rating request outstanding: nothing recorded (I7)",
        )

    ctx.event("rating.recorded", wo_id, stars=stars)
    tenant_phone = phone_of(ctx, rated.tenant_id)
    if tenant_phone is not None:
        ctx.send(
            tenant_phone,
            f"Thank you! Your {stars}/5 rating for {wo_id} ({short(rated.summary)}) is recorded.",
            suffix="tenant",
        )
    return finish(ctx, lane, target=wo_id, note=f"rated {wo_id} {stars}/5")
