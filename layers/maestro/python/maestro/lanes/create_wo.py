"""create_wo: open a new work order; the tenant gets its reference.

The id is ``wo_id_for(package id, ref)``, so a re-run finds the WO the first run made instead of
opening a second one, and later actions in the package can target it as ``new:<ref>``.
"""

from __future__ import annotations

from maestro.domain.actions import CreateWo, Lane
from maestro.domain.events import body_digest
from maestro.domain.fixed_texts import OPENED, say
from maestro.domain.models import PartyRole, Urgency, WorkOrder
from maestro.domain.roles import allowed
from maestro.lanes.context import LaneContext, LaneOutcome, wo_id_for
from maestro.lanes.helpers import attached, finish, short, who_said
from maestro.ports.stores import AlreadyExistsError

__all__ = ["run"]


def _summary(action: CreateWo) -> str:
    # The location goes into the summary: it is what "the kitchen one" is later resolved against.
    summary, location = action.params.summary, action.params.location
    if location and location.lower() not in summary.lower():
        return f"{summary} ({location})"
    return summary


def run(action: CreateWo, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.CREATE_WO
    sender = ctx.sender
    if sender is None:
        # Never guess a person: dispose hands unknown numbers to the PM; this is the backstop.
        return finish(ctx, lane, status="skipped", note="unknown sender: no work order opened")
    if not allowed(lane, "tenant" if sender.role is PartyRole.TENANT else None):
        # Roles: a WO opens in the tenant's name; a vendor or PM cannot open one as themselves.
        return finish(
            ctx, lane, status="skipped", note=f"a {sender.role.value} cannot open a work order"
        )

    wo_id = wo_id_for(ctx.package.package_id, action.params.ref)
    wo = WorkOrder(
        wo_id=wo_id,
        tenant_id=sender.party_id,
        unit=sender.unit,
        # The property its PMs manage it by: the tenant's, when the directory names exactly one
        # (never guessed among several).
        property_id=sender.property_ids[0] if len(sender.property_ids) == 1 else None,
        summary=_summary(action),
        category=action.params.category,
        urgency=Urgency(action.params.urgency),
        language=ctx.sender_language,
        created_at=ctx.now,
        updated_at=ctx.now,
    )
    note = f"opened {wo_id}"
    try:
        ctx.work_orders.create(wo)
    except AlreadyExistsError:
        # A re-run: the first run created it. Report what is stored, not what we built now.
        existing = ctx.work_orders.get(wo_id)
        if existing is None:  # pragma: no cover - a create-once store never loses an item
            raise
        wo, note = existing, f"{wo_id} already opened by an earlier run"

    ctx.effect("wo.created", wo_id)
    ctx.event(
        "wo.created",
        wo_id,
        wo_id=wo_id,
        summary_sha256=body_digest(wo.summary),
        status=wo.status.value,
        tenant_id=wo.tenant_id,
        version=wo.version,
    )
    if media := ctx.package.media:
        # The files they sent with the report (an MMS photo) stay with the WO, as references on
        # its first entry: what dispatch's gather counts before asking for a photo.
        entry = ctx.append_entry(
            "note",
            wo_id,
            f"{who_said(ctx)} reported it{attached(media)}: {short(wo.summary, 300)}",
            note=wo.summary,
            media=media,
        )
        ctx.event(
            "wo.updated",
            wo_id,
            wo_id=wo_id,
            entry_id=entry.entry_id,
            entry="note",
            version=wo.version,
            status=wo.status.value,
            note_sha256=body_digest(wo.summary),
        )
    opened = say(OPENED, ctx.sender_language, wo_id=wo_id, summary=short(wo.summary, 120))
    ctx.send(sender.phone, opened, suffix="tenant", wo_id=wo_id)
    return finish(ctx, lane, target=wo_id, created=wo_id, note=note)
