"""Lanes: the effect of each disposed action, one module per lane.

``execute`` dispatches an action to its lane. ``LANES`` covers the whole closed vocabulary: a
lane without an effect is refused at import, so it can never be disposed and then dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from maestro.domain.actions import Action, Lane
from maestro.lanes import (
    answer_wait,
    clarify,
    continue_with_assistant,
    create_wo,
    escalate,
    manage_existing,
    record_rating,
    relay_to_open_wo,
    relay_to_vendor,
    schedule_visit,
)
from maestro.lanes.context import LaneContext, LaneOutcome, wo_id_for

__all__ = ["LANES", "LaneContext", "LaneOutcome", "LaneRunner", "execute", "wo_id_for"]

LaneRunner = Callable[[Any, LaneContext], LaneOutcome]
"""A lane: (its action, the context) → what it did. Each module's ``run`` takes its own action
type; ``execute`` guarantees the pairing by dispatching on the action's own lane."""

LANES: dict[Lane, LaneRunner] = {
    Lane.CREATE_WO: create_wo.run,
    Lane.RELAY_TO_OPEN_WO: relay_to_open_wo.run,
    Lane.SCHEDULE_VISIT: schedule_visit.run,
    Lane.RECORD_RATING: record_rating.run,
    Lane.RELAY_TO_VENDOR: relay_to_vendor.run,
    Lane.MANAGE_EXISTING: manage_existing.run,
    Lane.CONTINUE_WITH_ASSISTANT: continue_with_assistant.run,
    Lane.CLARIFY: clarify.run,
    Lane.ESCALATE: escalate.run,
    Lane.ANSWER_WAIT: answer_wait.run,
}

# Not a bare ``assert`` (stripped under -O): a vocabulary lane without an effect must fail loudly.
if set(LANES) != set(Lane):  # pragma: no cover - holds by construction
    raise AssertionError(f"lanes without an effect: {sorted(set(Lane) - set(LANES))}")


def execute(action: Action, ctx: LaneContext) -> LaneOutcome:
    """Run ``action``'s lane. Safe to repeat with the same ``ctx.idempotency_key``.

    Two items dispose makes run elsewhere first: a hold of actions (``QueuedAction.held``) runs
    on the manage lane, which holds them and runs none; an action released from such a hold runs
    on its own lane only once the hold says it was released, exactly as held."""
    queued = ctx.queued
    if queued is not None and queued.held:
        return manage_existing.hold_actions(ctx)
    lane = Lane(action.lane)
    if queued is not None and queued.release and lane is not Lane.MANAGE_EXISTING:
        refused = manage_existing.released_as_held(action, ctx)
        if refused is not None:
            return refused
    return LANES[lane](action, ctx)
