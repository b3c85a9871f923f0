"""manage_existing: list the sender's open WOs; hold a cancel or reschedule until YES.

Confirm-before-mutate (seed ADR-0016): a cancel or reschedule is never executed here. The exact
call, with the resolved WO ids pinned now, is held as a PendingConfirmation and the party is
asked to reply YES; releasing it (re-validated, exactly as held) is the manage agent's job (#5).
Until that agent lands, ``list`` is a read-only listing.
"""

from __future__ import annotations

import contextlib

from maestro.domain.actions import Lane, ManageExisting, ManageExistingParams
from maestro.domain.models import WorkOrder
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingConfirmation
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish, short
from maestro.ports import AlreadyExistsError

__all__ = ["run"]


def _line(wo: WorkOrder) -> str:
    unit = f", unit {wo.unit}" if wo.unit else ""
    return f"{wo.wo_id} ({short(wo.summary, 60)}{unit}) [{wo.status.value}]"


def _listing(wos: list[WorkOrder]) -> str:
    if not wos:
        return "You have no open requests."
    return "Your open requests: " + "; ".join(_line(wo) for wo in wos) + "."


def run(action: ManageExisting, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.MANAGE_EXISTING
    params = action.params
    sender = ctx.sender
    if sender is None:
        # Never guess a person: an unknown number has no requests to list or change.
        return finish(ctx, lane, status="skipped", note="unknown sender: nothing to manage")

    # Read fresh from the store (not from the brain's context lines): the listing and the
    # held ids must be real, open and the sender's own.
    wos = ctx.work_orders.open_for_party(sender.party_id)
    if params.operation == "list":
        ctx.send(sender.phone, _listing(wos), suffix="list")
        return finish(
            ctx,
            lane,
            note=f"listed {len(wos)} open WO(s); read-only listing until the manage agent (#5)",
        )

    # Only open WOs can be cancelled or moved (a finished one awaiting its rating cannot).
    by_id = {wo.wo_id: wo for wo in wos if wo.is_open}
    named = tuple(dict.fromkeys(ctx.resolve_target(i) or i for i in params.wo_ids))
    chosen = tuple(i for i in named if i in by_id)
    refused = [i for i in named if i not in by_id]
    if not chosen:
        ctx.send(
            sender.phone,
            f"I couldn't match that to one of your open requests. {_listing(wos)} "
            "Which one do you mean?",
            suffix="which",
        )
        return finish(
            ctx,
            lane,
            status="skipped",
            note=f"nothing held: no open WO of the sender named ({', '.join(named) or 'none'})",
        )

    verb = "cancel" if params.operation == "cancel" else "reschedule"
    when = f" to {params.request}" if params.operation == "reschedule" and params.request else ""
    proposal = short(
        f"Reply YES to {verb} " + ", ".join(_line(by_id[i]) for i in chosen) + f"{when}. "
        "Anything else keeps it as it is.",
        500,
    )
    confirmation_id = ctx.idempotency_key
    # Keyed by the idempotency key and created once: a re-run finds the hold already there
    # (perhaps already released by a YES) and leaves it as it is.
    with contextlib.suppress(AlreadyExistsError):
        ctx.pending.put_confirmation(
            PendingConfirmation(
                confirmation_id=confirmation_id,
                package_id=ctx.package.package_id,
                party_id=sender.party_id,
                call=ManageExistingParams(
                    operation=params.operation, wo_ids=chosen, request=params.request
                ),
                proposal=proposal,
                held_at=ctx.now,
                expires_at=ctx.now + DEFAULT_PENDING_TTL,
            )
        )
    ctx.event(
        "confirm.held",
        confirmation_id,
        operation=params.operation,
        wo_ids=",".join(chosen),
        status="held",
    )
    ctx.send(sender.phone, proposal, suffix="confirm")
    skipped = f"; not the sender's open WOs: {', '.join(refused)}" if refused else ""
    return finish(ctx, lane, note=f"held {verb} of {', '.join(chosen)} until YES{skipped}")
