"""Helpers every lane shares: the outcome, phone look-up by party id, ownership at the effect,
the versioned WO update with one retry."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Literal

from maestro.domain.actions import Lane
from maestro.domain.models import MediaRef, WorkOrder
from maestro.domain.roles import allowed, part_of
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.ports.stores import StaleVersionError, WorkOrderStore

__all__ = [
    "Change",
    "finish",
    "may_act_on",
    "phone_of",
    "short",
    "supersede_open",
    "target_work_order",
    "touch",
    "update_work_order",
    "who_said",
]


# ---------------------------------------------------------------------------------------------


def finish(
    ctx: LaneContext,
    lane: Lane,
    *,
    status: Literal["done", "skipped"] = "done",
    target: str | None = None,
    created: str | None = None,
    note: str = "",
) -> LaneOutcome:
    """The outcome of a lane: the events it recorded (once each, even if the same context ran
    twice: event ids are deterministic), what it wrote, and the SIDs of the messages it sent
    (from the messenger's answers, not from the events that claim them)."""
    events = tuple({e.event_id: e for e in ctx.events}.values())
    sids = tuple(dict.fromkeys(m.sid for m in ctx.sent))
    unsent = tuple(dict.fromkeys(ctx.unsent))
    if unsent:
        # Never silently: what a cap or consent kept from going is said where the outcome is read.
        note = f"{note}; {'; '.join(unsent)}" if note else "; ".join(unsent)
    folded = ctx.folded_into
    return LaneOutcome(
        idempotency_key=ctx.idempotency_key,
        lane=lane.value,
        status=status,
        target_wo_id=target,
        created_wo_id=created,
        message_sids=sids,
        events=events,
        effects=tuple(ctx.effects),
        note=short(note, 500),
        unsent=unsent,
        folded_into=folded[0] if folded else None,
        folded_at=folded[1] if folded else None,
    )


def phone_of(ctx: LaneContext, party_id: str | None) -> str | None:
    """A party's phone by party id from the directory, or None: never guessed."""
    if party_id is None:
        return None
    if ctx.sender is not None and ctx.sender.party_id == party_id:
        return ctx.sender.phone
    party = ctx.parties.by_party_id(party_id)
    return party.phone if party is not None else None


def target_work_order(
    ctx: LaneContext, lane: Lane, target: str | None
) -> tuple[str, WorkOrder] | LaneOutcome:
    """The WO an action targets, if it exists and the sender may act on it; else the skip."""
    wo_id = ctx.resolve_target(target)
    wo = ctx.work_orders.get(wo_id) if wo_id else None
    if wo is None or wo_id is None:
        return finish(ctx, lane, status="skipped", target=wo_id, note=f"no work order {wo_id}")
    if not may_act_on(ctx, wo, lane):
        return finish(
            ctx,
            lane,
            status="skipped",
            target=wo_id,
            note="the sender's part in this WO does not allow it",
        )
    return wo_id, wo


def may_act_on(ctx: LaneContext, wo: WorkOrder, lane: Lane | None = None) -> bool:
    """Ownership and role, re-checked at the effect against the WO as stored (dispose checked
    first): a party affects only WOs it is on, a PM any; and only as its part allows (a vendor
    never rates, cancels or relays for the tenant)."""
    part = part_of(ctx.sender, wo)
    if part is None:
        return False
    return lane is None or allowed(lane, part)


def supersede_open(ctx: LaneContext, keep: str) -> list[str]:
    """A new question or hold supersedes every other item the party has open: one at a time,
    so an answer is never read against a question the party no longer sees."""
    sender = ctx.sender
    if sender is None:
        return []
    questions, holds = ctx.pending.open_items(sender.party_id)
    closed: list[str] = []
    for kind, pending_id, expected in [
        *(("clarification", q.clarification_id, "open") for q in questions),
        *(("confirmation", h.confirmation_id, "held") for h in holds),
    ]:
        if pending_id == keep:
            continue
        with contextlib.suppress(StaleVersionError):  # closed meanwhile: nothing to do
            ctx.pending.set_status(
                kind,  # type: ignore[arg-type]
                pending_id,
                expected,
                "superseded",
                closed_by=ctx.package.package_id,
            )
            closed.append(pending_id)
    return closed


Change = Callable[[WorkOrder], WorkOrder | None]
"""Given the current WO, the WO to write (version + 1), or None when there is nothing to write
because the change is already there (what makes a re-run harmless)."""


def update_work_order(store: WorkOrderStore, wo_id: str, change: Change) -> WorkOrder | None:
    """Read, change, write conditionally on the version read; on a lost race, re-read and try
    once more (a second loss propagates: the caller's retry policy decides).

    Returns the WO as stored afterwards, or None if there is no such WO. ``change`` may raise
    InvalidTransitionError when the re-read WO no longer allows it.
    """
    try:
        return _read_change_write(store, wo_id, change)
    except StaleVersionError:
        return _read_change_write(store, wo_id, change)


def _read_change_write(store: WorkOrderStore, wo_id: str, change: Change) -> WorkOrder | None:
    current = store.get(wo_id)
    if current is None:
        return None
    changed = change(current)
    if changed is None:
        return current
    store.update(changed, current.version)
    return changed


def touch(ctx: LaneContext) -> Change:
    """Record activity on a WO that has no field for it (no notes yet): bump the version with
    ``updated_at = now``. Already touched at or after ``now`` → nothing to write, so a re-run
    with the same context does not bump it twice."""

    def change(wo: WorkOrder) -> WorkOrder | None:
        if wo.updated_at >= ctx.now:
            return None
        return wo.model_copy(update={"version": wo.version + 1, "updated_at": ctx.now})

    return change


def who_said(ctx: LaneContext) -> str:
    """Who the words came from, for a timeline line: "the tenant (Maria)"."""
    sender = ctx.sender
    if sender is None:
        return "an unknown number"
    name = f" ({short(sender.name, 40)})" if sender.name else ""
    return f"the {sender.role.value}{name}"


def attached(media: Sequence[MediaRef]) -> str:
    """What a timeline line says of the files it holds: " (2 photos)", " (1 photo, 1 file)"."""
    photos = sum(ref.is_photo for ref in media)
    counts = ((photos, "photo"), (len(media) - photos, "file"))
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in counts if n]
    return f" ({', '.join(parts)})" if parts else ""


def short(text: str, limit: int = 80) -> str:
    """Text cut to ``limit`` characters for an SMS line."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
