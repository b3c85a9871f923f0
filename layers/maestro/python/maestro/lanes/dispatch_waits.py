"""What a lane's effect means for a WO execution that waits on people (docs/dispatch.md).

Two rules, applied in one place, the act step, right after the lane ran (``settle``):

- a work order a lane closed (its ``wo.updated`` claims a ``cancelled`` or ``completed``
  status) while its run waits: the wait is completed with ``withdrawn`` and the reason, so the
  execution stops ("Stopped: the work order closed") and the vendor whose offer was open is told
  by the run's own step, not here;
- the tenant's words added to a work order (``relay_to_open_wo``, ``schedule_visit``) whose run
  waits on gather for them: that wait is completed with ``details`` and the items the words
  give. A schedule keeps only the times it read ("2 onward"), so the whole answer ("fine to come
  in, 2 onward") goes on the timeline as a note first: what the vendor is told once they accept
  is the tenant's own words on access, pets and times.

Why the act step and not each lane or persist: every lane that closes a WO or adds a tenant's
words to it already claims it in its events, so reading the claims once covers every lane,
today's and tomorrow's (a cancel released from a hold, a PM's cancel, …) without a copy per lane;
and it runs with the effect, in the same retried, idempotent step, so a package that fails open
after the cancel still stops the run (persist would never run then).
"""

from __future__ import annotations

from maestro.domain.actions import Lane
from maestro.domain.common import truncate
from maestro.domain.dispatch import GATHER_ITEMS, DispatchRun, GatherItem, WaitAnswer
from maestro.domain.events import body_digest
from maestro.domain.gather import items_in
from maestro.domain.models import Package, WorkOrderStatus
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import attached, short, touch, update_work_order, who_said
from maestro.ports.workflows import TaskTokenGoneError

__all__ = ["GATHER_LANES", "active_run", "gather_items", "settle"]

GATHER_LANES = frozenset({Lane.RELAY_TO_OPEN_WO.value, Lane.SCHEDULE_VISIT.value})
"""The lanes that put the tenant's words on the WO's timeline: what answers a gather wait."""
_CLOSED = {
    WorkOrderStatus.CANCELLED.value: "cancelled",
    WorkOrderStatus.COMPLETED.value: "completed",
}


def gather_items(package: Package) -> tuple[GatherItem, ...]:
    """What a tenant's package gives towards what gather asked: what its words tell
    (``maestro.domain.gather.items_in``), and a photo when a message came with an image."""
    given = set(items_in(package.text))
    if any(ref.is_photo for ref in package.media):  # a video is no photo (gather counts images)
        given.add("photo")
    return tuple(item for item in GATHER_ITEMS if item in given)


def active_run(ctx: LaneContext, wo_id: str) -> DispatchRun | None:
    """The WO's dispatch run while it is still going (not final); None without one."""
    if ctx.dispatch is None:
        return None
    run = ctx.dispatch.get(wo_id)
    return run if run is not None and not run.final else None


def settle(ctx: LaneContext, outcome: LaneOutcome) -> LaneOutcome:
    """Apply both rules to ``outcome`` (see the module docstring); what was done goes on the
    outcome's note. A token that waits no more is no failure: the run moved on already."""
    if ctx.dispatch is None or ctx.tokens is None or outcome.status != "done":
        return outcome
    notes: list[str] = []
    closed: dict[str, str] = {}
    for event in outcome.events:
        status = event.claim.get("status") if event.type == "wo.updated" else None
        if isinstance(status, str) and status in _CLOSED and event.wo_id:
            closed.setdefault(event.wo_id, _CLOSED[status])
    for wo_id, how in closed.items():
        notes.append(_withdraw(ctx, wo_id, how))
    target = outcome.target_wo_id
    if outcome.lane in GATHER_LANES and target is not None and target not in closed:
        note = _gathered(ctx, target, keep_words=outcome.lane == Lane.SCHEDULE_VISIT.value)
        if note:
            notes.append(note)
    notes = [n for n in notes if n]
    if not notes:
        return outcome
    joined = "; ".join([outcome.note, *notes]) if outcome.note else "; ".join(notes)
    # What this wrote (a note and its event) joins what the lane wrote: the act step records
    # and publishes the outcome's effects and events.
    return outcome.model_copy(
        update={
            "note": truncate(joined, 500),
            "events": tuple({e.event_id: e for e in ctx.events}.values()),
            "effects": tuple(ctx.effects),
        }
    )


def _withdraw(ctx: LaneContext, wo_id: str, how: str) -> str:
    run = ctx.dispatch.get(wo_id) if ctx.dispatch is not None else None
    wait = run.waiting if run is not None else None
    if wait is None:
        return ""
    by = ctx.sender.role.value if ctx.sender is not None else "maestro"
    answer = WaitAnswer(
        kind=wait.kind,
        answer="withdrawn",
        party_id=None,
        package_id=ctx.package.package_id,
        reason=f"the work order was {how} (by the {by})",
    )
    label = f"{wo_id}'s {wait.kind} wait"
    return _succeed(ctx, wait.token, answer, label, f"withdrawn ({how})")


def _gathered(ctx: LaneContext, wo_id: str, *, keep_words: bool) -> str:
    sender = ctx.sender
    run = ctx.dispatch.get(wo_id) if ctx.dispatch is not None else None
    wait = run.waiting if run is not None else None
    if sender is None or wait is None or wait.kind != "gather" or wait.party_id != sender.party_id:
        return ""
    if keep_words:
        _keep_the_answer(ctx, wo_id)
    items = gather_items(ctx.package)
    answer = WaitAnswer(
        kind="gather",
        answer="details",
        party_id=sender.party_id,
        package_id=ctx.package.package_id,
        items=items,
    )
    gave = ", ".join(items) or "no item it could name"
    return _succeed(ctx, wait.token, answer, f"{wo_id}'s gather wait", f"answered ({gave})")


def _keep_the_answer(ctx: LaneContext, wo_id: str) -> None:
    """The tenant's whole answer to the gather question as a note on the WO's timeline, claimed
    by its ``wo.updated`` like a relayed note."""
    words = " ".join(ctx.package.text.split())[:1000]
    if not words:
        return
    current = ctx.work_orders.get(wo_id)
    if current is None:
        return
    updated = update_work_order(ctx.work_orders, wo_id, touch(ctx)) or current
    media = ctx.package.media
    entry = ctx.append_entry(
        "note",
        wo_id,
        f"{who_said(ctx)} answered what the vendor needs{attached(media)}: {short(words, 300)}",
        suffix="gather",
        note=words,
        media=media,
    )
    ctx.event(
        "wo.updated",
        wo_id,
        "gather",
        wo_id=wo_id,
        entry_id=entry.entry_id,
        entry="note",
        version=updated.version,
        status=updated.status.value,
        note_sha256=body_digest(words),
    )


def _succeed(ctx: LaneContext, token: str, answer: WaitAnswer, label: str, done: str) -> str:
    assert ctx.tokens is not None
    try:
        ctx.tokens.succeed(token, answer.model_dump(mode="json"))
    except TaskTokenGoneError:
        return f"{label} had ended already"
    return f"{label} {done}"
