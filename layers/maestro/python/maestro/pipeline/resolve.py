"""An answer to what the party has open (a wait, a hold, a question), handled before any brain.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.domain.models import WorkOrderStatus
from maestro.domain.pending import resolve_pending
from maestro.domain.records import Route
from maestro.domain.wait_answers import resolve_waits
from maestro.observability import count
from maestro.pipeline.contract import ExecutionState, dump
from maestro.pipeline.shared import JSON, Pipeline, Step, lease_of


def resolve(pipeline: Pipeline, s: ExecutionState) -> JSON:
    """Match the package against what the party has open (a WO execution's offer or
    approval, a held confirmation, a question) before any brain reads it: an answer is
    handled here, deterministically. An open offer or approval comes first: a vendor's
    "yes" to their offer is that, whatever else of theirs is open."""
    pipeline.hold(s)
    package = pipeline.load_package(s)
    lease = lease_of(s)
    now = pipeline.deps.clock.now()
    live_holds = [h.held_at for h in lease.pending.confirmations if h.expires_at > now]
    waited = resolve_waits(package, lease.sender, lease.waits, live_holds)
    if waited is not None:
        count("PendingAnswers", outcome="wait")
        return dump(waited)
    named = {
        *(i for q in lease.pending.clarifications for i in q.candidate_ids),
        *(i for h in lease.pending.confirmations for i in h.wo_ids),
    }
    work_orders = {i: wo for i in sorted(named) if (wo := pipeline.deps.work_orders.get(i))}
    interrupted = {
        i: at
        for i in work_orders
        if (snapshot := pipeline.deps.state.get(i)) and (at := snapshot.interrupted_at)
    }
    resolution = resolve_pending(
        package,
        lease.sender,
        lease.pending,
        work_orders,
        interrupted,
        pipeline.deps.clock.now(),
        handback=s.precheck is not None and s.precheck.route is Route.HANDBACK,
        judge=pipeline.judge,
        answers_question=pipeline.deps.models.judgments.answers_the_question,
        completion_asked=any(
            c.wo_status is WorkOrderStatus.COMPLETION_REPORTED and c.relation == "tenant"
            for c in lease.contexts
        ),
    )
    count("PendingAnswers", outcome=resolution.route)
    return dump(resolution)


STEP = Step(resolve, ExecutionState)
"""The resolve step; its input validated as :class:`ExecutionState` by the handler factory."""
