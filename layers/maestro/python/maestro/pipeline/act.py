"""One queued action's lane run, its outcome recorded and its events published.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from datetime import datetime

from maestro.domain.actions import Lane
from maestro.domain.common import truncate
from maestro.domain.dispose import QueuedAction
from maestro.domain.models import Package
from maestro.domain.records import ActionOutcomeRecord, OutcomeStatus, outcome_record_id
from maestro.lanes import execute
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.dispatch_waits import settle
from maestro.observability import count
from maestro.pipeline.contract import ActItem, dump
from maestro.pipeline.shared import JSON, Pipeline, Step
from maestro.ports.messaging import SendFailedError


def act(pipeline: Pipeline, it: ActItem) -> JSON:
    """Run one queued action's lane and record its outcome. The act handler wraps this in
    Powertools idempotency (key: package id + action index)."""
    if it.lease is not None and it.lease.holder == it.package_id:
        pipeline.renew(it.conversation_id, it.package_id, pipeline.deps.lease_ttl_seconds)
    queued = it.queued
    package = pipeline.load_package(it)
    now = pipeline.deps.clock.now()
    ctx = LaneContext(
        package=package,
        sender=it.lease.sender if it.lease else None,
        open_contexts=it.lease.contexts if it.lease else (),
        action_index=queued.index,
        idempotency_key=queued.idempotency_key,
        work_orders=pipeline.deps.work_orders,
        pending=pipeline.deps.pending,
        parties=pipeline.deps.parties,
        messenger=pipeline.deps.messenger,
        on_call_pm_phone=pipeline.deps.on_call_pm_phone,
        now=now,
        timeline=pipeline.deps.timeline,
        throttle=pipeline.deps.throttle,
        queued=queued,
        agent=pipeline.deps.models.agent,
        caps=pipeline.deps.caps,
        digest=pipeline.deps.digest,
        fold_seconds=pipeline.deps.unknown_emergency_fold_seconds,
        directory=pipeline.deps.directory,
        dispatch=pipeline.deps.dispatch,
        tokens=pipeline.deps.tokens,
        composer=pipeline.deps.models.composer,
        decisions=pipeline.deps.decisions,
    )
    try:
        outcome = execute(queued.action, ctx)
        # A WO the lane closed stops its execution's wait; a tenant's words on a WO answer
        # its gather wait (one place for every lane: maestro.lanes.dispatch_waits).
        outcome = settle(ctx, outcome)
    except SendFailedError as failed:
        # A text could not be sent (refused, or failing through every retry). What the lane
        # did before that is real: record the action as failed with the reason and what it
        # wrote (the decision log says it), claim it, and fail the step: the package fails
        # open and the PM is paged. Never a silent drop.
        count("SendFailures")
        partial = LaneOutcome(
            idempotency_key=queued.idempotency_key,
            lane=queued.lane.value,
            target_wo_id=ctx.target_wo_id,
            message_sids=tuple(dict.fromkeys(m.sid for m in ctx.sent)),
            events=tuple({e.event_id: e for e in ctx.events}.values()),
            effects=tuple(ctx.effects),
            note=truncate(f"a text could not be sent: {failed.reason}", 500),
            unsent=tuple(ctx.unsent),
        )
        # A WO it closed before the text failed still stops its execution's wait.
        partial = settle(ctx, partial)
        pipeline.deps.decisions.record_outcome(
            _outcome_record(package, queued, partial, now, status="failed")
        )
        pipeline.deps.bus.publish(tuple({e.event_id: e for e in ctx.events}.values()))
        raise
    # What the action wrote is on the record before its events go: if they never reach the
    # bus (a retry republishes them, same ids), the sweeper finds the effects without their
    # events (missing_event). Always emit, in every environment: the watcher reads back what
    # each event claims.
    pipeline.deps.decisions.record_outcome(_outcome_record(package, queued, outcome, now))
    pipeline.deps.bus.publish(outcome.events)
    count("ActionsByLane", lane=queued.lane.value)
    if queued.action.lane == Lane.ESCALATE:
        count("Escalations")
    return dump(outcome)


def _outcome_record(
    package: Package,
    queued: QueuedAction,
    outcome: LaneOutcome,
    now: datetime,
    status: OutcomeStatus | None = None,
) -> ActionOutcomeRecord:
    return ActionOutcomeRecord(
        record_id=outcome_record_id(package.package_id, queued.index),
        package_id=package.package_id,
        conversation_id=package.conversation_id,
        index=queued.index,
        decision_id=queued.decision_id,
        lane=queued.lane,
        status=status or outcome.status,
        target_wo_id=outcome.target_wo_id,
        created_wo_id=outcome.created_wo_id,
        message_sids=outcome.message_sids,
        effects=outcome.effects,
        note=outcome.note,
        unsent=outcome.unsent,
        folded_into=outcome.folded_into,
        folded_at=outcome.folded_at,
        recorded_at=now,
    )


STEP = Step(act, ActItem)
"""The act step; its input validated as :class:`ActItem` by the handler factory."""
