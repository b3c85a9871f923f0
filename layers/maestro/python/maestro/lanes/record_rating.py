"""record_rating: store a rating, only while the WO has a rating request outstanding (I7).

Dispose already refuses a rating without a request; this is the check at the effect, against
the WO as stored now. A re-run finds the request consumed and the same stars stored, and reports
the rating as recorded without writing again.
"""

from __future__ import annotations

from maestro.domain.actions import Lane, RecordRating
from maestro.domain.fixed_texts import RATED, say
from maestro.domain.models import InvalidTransitionError, WorkOrder
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import (
    finish,
    phone_of,
    short,
    target_work_order,
    update_work_order,
    who_said,
)

__all__ = ["run"]


def run(action: RecordRating, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.RECORD_RATING
    stars = action.params.stars
    found = target_work_order(ctx, lane, action.target_wo_id)
    if isinstance(found, LaneOutcome):
        return found
    wo_id, wo = found

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

    entry = ctx.append_entry(
        "rating", wo_id, f"{who_said(ctx)} rated the work {stars}/5", stars=stars
    )
    ctx.event(
        "rating.recorded",
        wo_id,
        wo_id=wo_id,
        entry_id=entry.entry_id,
        stars=stars,
        version=rated.version,
    )
    tenant_phone = phone_of(ctx, rated.tenant_id)
    if tenant_phone is not None:
        label = f"{wo_id} ({short(rated.summary)})"
        thanks = say(RATED, ctx.language_of(tenant_phone, rated), stars=stars, label=label)
        ctx.send(tenant_phone, thanks, suffix="tenant")
    return finish(ctx, lane, target=wo_id, note=f"rated {wo_id} {stars}/5")
