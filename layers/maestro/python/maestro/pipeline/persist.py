"""The record completed, the WO-keyed state updated, the lease released.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from maestro.domain.actions import Lane
from maestro.domain.events import DomainEvent, claim_dict
from maestro.domain.models import ContextKind, Package, Urgency, WoSnapshot
from maestro.domain.records import (
    MaestroDecision,
    MaestroState,
    OutstandingItem,
    PackageCompletion,
    Route,
    completion_record_id,
)
from maestro.errors import TransientError
from maestro.lanes.context import LaneOutcome
from maestro.observability import logger
from maestro.pipeline.contract import ExecutionState, PersistResult, dump
from maestro.pipeline.shared import JSON, Pipeline, Step, tally
from maestro.ports.stores import StaleVersionError

STATE_UPDATE_ATTEMPTS = 3


def persist(pipeline: Pipeline, s: ExecutionState) -> JSON:
    """Complete the record, update the WO-keyed state, release the lease."""
    package = pipeline.load_package(s)
    disposal = s.final_disposal
    if disposal is None:
        raise ValueError(f"{s.package_id}: nothing was disposed")
    appended = pipeline.write_ahead(disposal)  # normally 0: dispose wrote them first
    now = pipeline.deps.clock.now()
    for outcome in s.final_effects:
        _update_state(pipeline, outcome, package, disposal.decisions, now)
    if disposal.route is Route.ESCALATE and s.lease is not None:
        # I1: the emergency keeps every open context, marked interrupted, so whatever
        # resumes one later is re-validated first (I6).
        for context in s.lease.contexts:
            # A PM's contexts are their properties' WOs, not ones they are a party to: their
            # emergency does not put every job at the property on hold.
            if context.kind is ContextKind.WORK_ORDER and context.relation != "pm":
                _interrupt(pipeline, context.context_id, package, now)
    outcomes = pipeline.deps.decisions.outcomes_for(s.package_id)
    pipeline.deps.decisions.complete(
        PackageCompletion(
            record_id=completion_record_id(s.package_id),
            package_id=s.package_id,
            conversation_id=s.conversation_id,
            route=disposal.route.value,
            completed_by="persist",
            decisions=len(disposal.decisions),
            outcomes=tally(outcomes),
            recorded_at=now,
        )
    )
    released = pipeline.deps.buffer.release_lease(s.conversation_id, s.package_id, s.flush_number)
    if not released:
        logger.warning("persist found the lease taken over", extra={"package_id": s.package_id})
    event = DomainEvent(
        event_id=f"{s.package_id}#decision.recorded",
        type="decision.recorded",
        package_id=s.package_id,
        subject_id=s.package_id,
        claim=claim_dict(
            "decision.recorded",
            {
                "decisions": len(disposal.decisions),
                "appended": appended,
                "route": disposal.route.value,
            },
        ),
        occurred_at=now,
    )
    return dump(
        PersistResult(
            decisions=len(disposal.decisions), appended=appended, released=released, event=event
        )
    )


def _update_state(
    pipeline: Pipeline,
    outcome: LaneOutcome,
    package: Package,
    decisions: tuple[MaestroDecision, ...],
    now: datetime,
) -> None:
    if outcome.status != "done":
        return
    if outcome.lane == Lane.MANAGE_EXISTING.value and outcome.target_wo_id is None:
        # A released hold changes each WO it held: their events name them.
        for held in dict.fromkeys(e.subject_id for e in outcome.events if e.type == "wo.updated"):
            _update_state(
                pipeline, outcome.model_copy(update={"target_wo_id": held}), package, decisions, now
            )
        return
    wo_id = outcome.created_wo_id or outcome.target_wo_id
    if wo_id is None:
        return
    decision_id = next(
        (d.decision_id for d in decisions if d.idempotency_key == outcome.idempotency_key),
        None,
    )
    created = pipeline.deps.work_orders.get(wo_id) if outcome.created_wo_id else None

    def change(current: MaestroState | None) -> dict[str, Any] | None:
        if (
            current is not None
            and current.last_package_id == package.package_id
            and current.last_decision_id == decision_id
        ):
            return None  # this outcome is already reflected: persist is re-running
        outstanding = list(current.outstanding) if current else []
        update: dict[str, Any] = {}
        if outcome.created_wo_id:
            about = WoSnapshot.of(created) if created is not None else None
            outstanding = [OutstandingItem(kind="availability", since=now, asked_about=about)]
        elif outcome.lane in (Lane.SCHEDULE_VISIT.value, Lane.MANAGE_EXISTING.value):
            # A visit booked (re-validated) or a held change released: the thread resumed.
            outstanding = [o for o in outstanding if o.kind != "availability"]
            update.update(interrupted_by=None, interrupted_at=None)
        elif outcome.lane == Lane.RECORD_RATING.value:
            outstanding = [o for o in outstanding if o.kind != "rating"]
        elif outcome.lane == Lane.ESCALATE.value:
            update["urgency"] = Urgency.EMERGENCY
        return {
            **update,
            "outstanding": tuple(outstanding),
            "last_package_id": package.package_id,
            "last_decision_id": decision_id,
        }

    _change_state(pipeline, wo_id, now, change)


def _interrupt(pipeline: Pipeline, wo_id: str, package: Package, now: datetime) -> None:
    def change(current: MaestroState | None) -> dict[str, Any] | None:
        if current is not None and current.interrupted_by == package.package_id:
            return None
        return {"interrupted_by": package.package_id, "interrupted_at": package.flushed_at}

    _change_state(pipeline, wo_id, now, change)


def _change_state(
    pipeline: Pipeline,
    wo_id: str,
    now: datetime,
    change: Callable[[MaestroState | None], dict[str, Any] | None],
) -> None:
    """Read, change, write with optimistic concurrency; a lost race re-reads. Never dropped
    silently: after every attempt is lost, persist fails and the state machine retries."""
    for _ in range(STATE_UPDATE_ATTEMPTS):
        current = pipeline.deps.state.get(wo_id)
        update = change(current)
        if update is None:
            return
        base = current.model_dump() if current else {"wo_id": wo_id}
        snapshot = MaestroState.model_validate(
            {
                **base,
                **update,
                "version": (current.version + 1) if current else 1,
                "updated_at": now,
            }
        )
        try:
            pipeline.deps.state.put(snapshot, current.version if current else None)
            return
        except StaleVersionError:
            continue
    raise TransientError(f"{wo_id}: the state update lost {STATE_UPDATE_ATTEMPTS} races in a row")


STEP = Step(persist, ExecutionState)
"""The persist step; its input validated as :class:`ExecutionState` by the handler factory."""
