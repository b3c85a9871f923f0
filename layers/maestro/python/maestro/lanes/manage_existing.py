"""manage_existing: list the sender's open WOs; hold a cancel or reschedule until YES; release a
hold exactly as held.

Confirm-before-mutate (seed ADR-0016): a cancel or reschedule is never executed when proposed.
The exact call, with the resolved WO ids pinned now and each WO as it is now, is held as a
PendingConfirmation and the party is asked to reply YES (numbered, so "1" or "the kitchen one"
narrows it). A new hold supersedes whatever else the party had open.

A release comes only from dispose, for a YES that re-validated the hold (``QueuedAction.release``):
the lane re-checks once more against the WOs as stored now, moves the hold from held to released
(conditionally: it is released once), and runs exactly the held call, never one re-derived from
the "yes".
"""

from __future__ import annotations

import contextlib

from maestro.domain.actions import Lane, ManageExisting, ManageExistingParams
from maestro.domain.common import truncate
from maestro.domain.models import InvalidTransitionError, WorkOrder, WorkOrderStatus, WoSnapshot
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingConfirmation
from maestro.domain.revalidate import Target, revalidate
from maestro.domain.roles import allowed, part_in
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import (
    Change,
    finish,
    phone_of,
    short,
    supersede_open,
    touch,
    update_work_order,
    who_said,
)
from maestro.ports import AlreadyExistsError, StaleVersionError

__all__ = ["run"]

_MAX_PROPOSAL = 500


def _line(wo: WorkOrder, width: int = 60) -> str:
    unit = f", unit {short(wo.unit, 12)}" if wo.unit else ""
    return f"{wo.wo_id} ({short(wo.summary, width)}{unit})"


def _listing(wos: list[WorkOrder]) -> str:
    if not wos:
        return "You have no open requests."
    return (
        "Your open requests: " + "; ".join(f"{_line(wo)} [{wo.status.value}]" for wo in wos) + "."
    )


def run(action: ManageExisting, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.MANAGE_EXISTING
    params = action.params
    sender = ctx.sender
    if sender is None:
        # Never guess a person: an unknown number has no requests to list or change.
        return finish(ctx, lane, status="skipped", note="unknown sender: nothing to manage")
    queued = ctx.queued
    if queued is not None and queued.release:
        return _release(action, ctx)

    # Read fresh from the store (not from the brain's context lines): the listing and the
    # held ids must be real, open and the sender's own.
    wos = ctx.work_orders.open_for_party(sender.party_id)
    fallback = ""
    if ctx.agent is not None and (queued is None or queued.pending_id is None):
        # The manage agent resolves the party's words against their real work orders; what it
        # decides is held exactly as any call (a gated tool never executes).
        mine = [wo for wo in wos if allowed(lane, part_in(sender, wo.tenant_id, wo.vendor_id))]
        decided = ctx.agent.run(ctx.package.text, mine, ctx.now)
        if decided is not None and decided.kind == "reply":
            ctx.send(sender.phone, decided.reply, suffix="agent")
            return finish(ctx, lane, note=f"manage agent answered ({decided.turns} turn(s))")
        if decided is not None and decided.operation is not None:
            params = ManageExistingParams(
                operation=decided.operation, wo_ids=decided.wo_ids, request=decided.request
            )
        else:
            fallback = "fallback: the manage agent reached no decision; "
    if params.operation == "list":
        ctx.send(sender.phone, truncate(_listing(wos), 1500), suffix="list")
        return finish(ctx, lane, note=f"{fallback}listed {len(wos)} open WO(s)")

    # Only open WOs the sender may change (tenant or PM) can be cancelled or moved.
    by_id = {
        wo.wo_id: wo
        for wo in wos
        if wo.is_open and allowed(lane, part_in(sender, wo.tenant_id, wo.vendor_id))
    }
    named = tuple(dict.fromkeys(ctx.resolve_target(i) or i for i in params.wo_ids))
    chosen = tuple(i for i in named if i in by_id)
    refused = [i for i in named if i not in by_id]
    if not chosen:
        ctx.send(
            sender.phone,
            truncate(
                f"I couldn't match that to one of your open requests. {_listing(wos)} "
                "Which one do you mean?",
                1500,
            ),
            suffix="which",
        )
        return finish(
            ctx,
            lane,
            status="skipped",
            note=f"nothing held: no open WO of the sender named ({', '.join(named) or 'none'})",
        )
    outcome = _hold(ctx, params, chosen, by_id, refused)
    return outcome.model_copy(update={"note": truncate(fallback + outcome.note, 500)})


def _hold(
    ctx: LaneContext,
    params: ManageExistingParams,
    chosen: tuple[str, ...],
    by_id: dict[str, WorkOrder],
    refused: list[str],
) -> LaneOutcome:
    sender = ctx.sender
    assert sender is not None  # checked by run()
    queued = ctx.queued
    options = tuple(i for i in (queued.options if queued else ()) if i in by_id) or chosen
    proposal = _proposal(params, chosen, options, by_id, queued.say if queued else "")
    confirmation_id = ctx.idempotency_key
    superseded = supersede_open(ctx, keep=confirmation_id)
    # Keyed by the idempotency key and created once: a re-run finds the hold already there
    # (perhaps already released by a YES) and leaves it as it is.
    with contextlib.suppress(AlreadyExistsError):
        ctx.pending.put_confirmation(
            PendingConfirmation(
                confirmation_id=confirmation_id,
                package_id=ctx.package.package_id,
                conversation_id=ctx.package.conversation_id,
                party_id=sender.party_id,
                call=ManageExistingParams(
                    operation=params.operation, wo_ids=chosen, request=params.request
                ),
                proposal=proposal,
                options=options,
                option_lines=tuple(_line(by_id[i], 40) for i in options),
                wo_snapshots=tuple(WoSnapshot.of(by_id[i]) for i in chosen),
                held_at=ctx.now,
                expires_at=ctx.now + DEFAULT_PENDING_TTL,
            )
        )
    ctx.effect("confirm.held", confirmation_id)
    ctx.event(
        "confirm.held",
        confirmation_id,
        operation=params.operation,
        wo_ids=",".join(chosen),
        status="held",
    )
    ctx.send(sender.phone, proposal, suffix="confirm")
    verb = "cancel" if params.operation == "cancel" else "reschedule"
    notes = [f"held {verb} of {', '.join(chosen)} until YES"]
    if refused:
        notes.append(f"not the sender's open WOs: {', '.join(refused)}")
    if superseded:
        notes.append(f"superseded {', '.join(superseded)}")
    return finish(ctx, Lane.MANAGE_EXISTING, note="; ".join(notes))


def _proposal(
    params: ManageExistingParams,
    chosen: tuple[str, ...],
    options: tuple[str, ...],
    by_id: dict[str, WorkOrder],
    say: str,
) -> str:
    """ "Reply YES to …", naming each WO; numbered when "1" could mean one of several."""
    verb = "cancel" if params.operation == "cancel" else "move the visit for"
    when = (
        f" to {short(params.request, 80)}"
        if params.operation == "reschedule" and params.request
        else ""
    )
    lead = f"{say} " if say else ""
    width = max(20, 300 // max(len(options), 1) - 20)
    if len(options) > 1:
        numbered = "; ".join(f"{n}) {_line(by_id[i], width)}" for n, i in enumerate(options, 1))
        which = (
            "all of them"
            if set(chosen) == set(options)
            else " and ".join(f"{options.index(i) + 1}" for i in chosen)
        )
        text = (
            f"{lead}Reply YES to {verb} {which}{when}: {numbered}. Or reply with a number for "
            "just that one. Anything else keeps them as they are."
        )
    else:
        text = (
            f"{lead}Reply YES to {verb} {_line(by_id[chosen[0]], 120)}{when}. Anything else "
            "keeps it as it is."
        )
    return truncate(text, _MAX_PROPOSAL)


def _release(action: ManageExisting, ctx: LaneContext) -> LaneOutcome:
    """Run exactly the held call, after one more re-validation at the effect."""
    lane = Lane.MANAGE_EXISTING
    sender = ctx.sender
    queued = ctx.queued
    pending_id = queued.pending_id if queued is not None else None
    if sender is None or pending_id is None:  # pragma: no cover - run() checked both
        return finish(ctx, lane, status="skipped", note="a release names its hold")
    hold = ctx.pending.get("confirmation", pending_id)
    if not isinstance(hold, PendingConfirmation):
        return finish(ctx, lane, status="skipped", note=f"no hold {pending_id}")
    call = hold.call
    if (action.params.operation, set(action.params.wo_ids)) != (call.operation, set(call.wo_ids)):
        return finish(
            ctx, lane, status="skipped", note="not released: the call differs from the hold"
        )
    rerun = hold.status == "released" and hold.closed_by == ctx.package.package_id
    if hold.status != "held" and not rerun:
        return finish(ctx, lane, status="skipped", note=f"{hold.confirmation_id} is {hold.status}")

    snapshots = {s.wo_id: s for s in hold.wo_snapshots}
    check = revalidate(
        [
            Target(
                wo_id=wo_id,
                operation=call.operation,  # type: ignore[arg-type]
                asked_at=hold.held_at,
                then=snapshots.get(wo_id),
                current=ctx.work_orders.get(wo_id),
            )
            for wo_id in call.wo_ids
        ],
        sender,
    )
    if check.outcome != "valid" and not rerun:
        with contextlib.suppress(StaleVersionError):
            ctx.pending.set_status(
                "confirmation", hold.confirmation_id, "held", "discarded", ctx.package.package_id
            )
        ctx.send(
            sender.phone,
            truncate(f"{check.summary()} just now, so I haven't changed anything.", 500),
            suffix="changed",
        )
        return finish(
            ctx, lane, status="skipped", note=f"not released: {check.outcome}: {check.summary()}"
        )
    if not rerun:
        try:
            ctx.pending.set_status(
                "confirmation", hold.confirmation_id, "held", "released", ctx.package.package_id
            )
        except StaleVersionError:
            return finish(ctx, lane, status="skipped", note=f"{hold.confirmation_id} moved on")

    done: list[WorkOrder] = []
    for wo_id in call.wo_ids:
        before = ctx.work_orders.get(wo_id)
        change = _cancel(ctx) if call.operation == "cancel" else touch(ctx)
        try:
            updated = update_work_order(ctx.work_orders, wo_id, change)
        except InvalidTransitionError:
            continue
        if updated is None:
            continue
        done.append(updated)
        if call.operation == "cancel":
            entry = ctx.append_entry(
                "status",
                wo_id,
                f"cancelled by {who_said(ctx)} (a held cancel, confirmed with YES)",
                wo_id,
                from_status=before.status if before is not None else None,
                to_status=updated.status,
                operation="cancel",
            )
        else:
            entry = ctx.append_entry(
                "visit",
                wo_id,
                f"{who_said(ctx)} asked to move the visit"
                + (f": {short(call.request, 300)}" if call.request else ""),
                wo_id,
                mode="request",
                availability=call.request or "",
                status=updated.status,
            )
        ctx.event(
            "wo.updated",
            wo_id,
            wo_id,
            wo_id=wo_id,
            entry_id=entry.entry_id,
            entry=entry.kind,
            version=updated.version,
            status=updated.status.value,
            operation=call.operation,
        )
    ctx.effect("confirm.released", hold.confirmation_id)
    ctx.event(
        "confirm.released",
        hold.confirmation_id,
        operation=call.operation,
        wo_ids=",".join(call.wo_ids),
        status="released",
    )
    _tell(ctx, call, done)
    return finish(
        ctx,
        lane,
        note=f"released {hold.confirmation_id}: {call.operation} of "
        f"{', '.join(wo.wo_id for wo in done) or 'nothing'} exactly as held",
    )


def _cancel(ctx: LaneContext) -> Change:
    def change(wo: WorkOrder) -> WorkOrder | None:
        if wo.status is WorkOrderStatus.CANCELLED:
            return None  # cancelled by an earlier run of this release
        return wo.transition(WorkOrderStatus.CANCELLED, ctx.now)

    return change


def _tell(ctx: LaneContext, call: ManageExistingParams, done: list[WorkOrder]) -> None:
    sender = ctx.sender
    assert sender is not None
    if not done:
        return
    names = ", ".join(_line(wo, 40) for wo in done)
    if call.operation == "cancel":
        ctx.send(sender.phone, truncate(f"Done: I've cancelled {names}.", 500), suffix="done")
    else:
        when = f": {short(call.request, 80)}" if call.request else ""
        ctx.send(
            sender.phone,
            truncate(f"Done: I've passed on when you'd like the visit for {names}{when}.", 500),
            suffix="done",
        )
    for wo in done:
        vendor = phone_of(ctx, wo.vendor_id)
        if vendor is None or wo.vendor_id == sender.party_id:
            continue
        body = (
            f"{_line(wo)} was cancelled by the tenant."
            if call.operation == "cancel"
            else f"The tenant asks for the visit for {_line(wo)}"
            + (f": {short(call.request, 80)}." if call.request else ".")
            + " Please confirm a time."
        )
        ctx.send(vendor, truncate(body, 500), suffix=f"vendor#{wo.wo_id}")
