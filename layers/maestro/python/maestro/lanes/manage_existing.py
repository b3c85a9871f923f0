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

It is also the lane that holds what a call asked for (``hold_actions``): when the words came by a
call whose caller ID nothing vouches for, dispose holds the actions they would take in the
party's name (a new request and its visit, a note for the vendor, a rating, a cancel) as one
PendingConfirmation of those exact actions, and this lane texts the number: "We got a call from
this number asking to … Reply YES to confirm; if it wasn't you, ignore this text." A YES by text
releases them in order, each through its own lane, once (``released_as_held``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from maestro.domain.actions import (
    Action,
    CreateWo,
    Lane,
    ManageExisting,
    ManageExistingParams,
    RecordRating,
    RelayToOpenWo,
    RelayToVendor,
    ScheduleVisit,
)
from maestro.domain.commands import new_time
from maestro.domain.common import truncate
from maestro.domain.fixed_texts import (
    CANCELLED_BY,
    CHANGED_NOTHING_CHANGED,
    CHANGED_NOTHING_DONE,
    CLOSE_NO_VENDOR,
    DONE_CANCELLED,
    HELD_JOIN,
    HELD_PROPOSAL,
    HELD_PROPOSAL_BY_CALL,
    HELD_WHAT,
    LISTED_WO,
    MOVE_ASKED,
    MOVE_ASKED_NEW_TIME,
    MOVE_NEW_TIME,
    MOVE_TO,
    NO_MATCH,
    NO_OPEN_REQUESTS,
    OPEN_REQUESTS,
    OPTION,
    PM_MORE,
    PM_NO_OPEN,
    PM_OPEN,
    PROPOSE_ALL,
    PROPOSE_BOTH,
    PROPOSE_MANY,
    PROPOSE_MANY_BY_CALL,
    PROPOSE_NUMBERS,
    PROPOSE_NUMBERS_JOIN,
    PROPOSE_ONE,
    PROPOSE_ONE_BY_CALL,
    PROPOSE_WHAT,
    STATUS_WORD,
    UNIT_SUFFIX,
    VISIT_ASKED_BY,
    WHEN_SAID,
    WO_LINE,
    say,
)
from maestro.domain.language import in_language
from maestro.domain.models import (
    Channel,
    InvalidTransitionError,
    Party,
    PartyRole,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
)
from maestro.domain.pending import action_targets, hold_targets
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingConfirmation
from maestro.domain.revalidate import Target, revalidate
from maestro.domain.roles import allowed, may_manage, part_of
from maestro.lanes.completion import complete_change, report_or_confirm, tell_closed
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import (
    Change,
    finish,
    may_act_on,
    phone_of,
    short,
    supersede_open,
    touch,
    update_work_order,
    who_said,
)
from maestro.ports.stores import AlreadyExistsError, StaleVersionError

__all__ = ["hold_actions", "released_as_held", "run"]

_MAX_PROPOSAL = 500
PM_LISTED = 5
"""A PM's "open": this many of their properties' open work orders per text, and how many more."""


def _line(wo: WorkOrder, width: int = 60, language: str = "en") -> str:
    unit = say(UNIT_SUFFIX, language, unit=short(wo.unit, 12)) if wo.unit else ""
    return say(WO_LINE, language, wo_id=wo.wo_id, summary=short(wo.summary, width), unit=unit)


def _status_word(wo: WorkOrder, language: str) -> str:
    texts = STATUS_WORD.get(wo.status.value)
    return say(texts, language) if texts is not None else wo.status.value


def _listing(wos: list[WorkOrder], language: str = "en") -> str:
    if not wos:
        return say(NO_OPEN_REQUESTS, language)
    items = "; ".join(
        say(
            LISTED_WO,
            language,
            line=_line(wo, language=language),
            status=_status_word(wo, language),
        )
        for wo in wos
    )
    return say(OPEN_REQUESTS, language, items=items)


def _managed(ctx: LaneContext, sender: Party, named: Sequence[str]) -> tuple[list[WorkOrder], int]:
    """A PM's work orders, read fresh from the store: the ones named (if of a property they
    manage), then a few of each of their properties' open ones; and how many are open in all."""
    found = {
        wo.wo_id: wo
        for wo_id in named
        if (wo := ctx.work_orders.get(wo_id)) is not None and part_of(sender, wo) == "pm"
    }
    total = 0
    for property_id in sender.property_ids:
        wos, open_count = ctx.work_orders.open_for_property(property_id, PM_LISTED)
        total += open_count
        for wo in wos:
            found.setdefault(wo.wo_id, wo)
    return list(found.values()), total


def _pm_listing(wos: list[WorkOrder], total: int) -> str:
    if total == 0:
        return say(PM_NO_OPEN, "en")
    shown = [wo for wo in sorted(wos, key=lambda w: w.wo_id) if wo.is_open][:PM_LISTED]
    more = total - len(shown)
    items = "; ".join(
        say(LISTED_WO, "en", line=_line(wo, 40), status=wo.status.value) for wo in shown
    )
    tail = say(PM_MORE, "en", more=more) if more > 0 else ""
    return say(PM_OPEN, "en", total=total, items=items, more=tail)


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
    manager = sender.role is PartyRole.PM
    total = 0
    if manager:
        wos, total = _managed(ctx, sender, [ctx.resolve_target(i) or i for i in params.wo_ids])
    else:
        wos = ctx.work_orders.open_for_party(sender.party_id)
    fallback = ""
    # A PM's "open" is the bounded listing with its count, never a model's summary of a page.
    pm_listing = manager and params.operation == "list"
    if (
        ctx.agent is not None
        and not pm_listing
        # The agent cancels and moves (a tenant's or PM's); it never closes, and a vendor's
        # list or report is read from the store as it is.
        and params.operation != "complete"
        and sender.role is not PartyRole.VENDOR
        and (queued is None or queued.pending_id is None)
    ):
        # The manage agent resolves the party's words against their real work orders; what it
        # decides is held exactly as any call (a gated tool never executes).
        mine = [wo for wo in wos if allowed(lane, part_of(sender, wo))]
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
    if params.operation == "list" and manager:
        ctx.send(sender.phone, truncate(_pm_listing(wos, total), 1500), suffix="list")
        return finish(ctx, lane, note=f"{fallback}listed {min(total, PM_LISTED)} of {total}")
    if params.operation == "list":
        listed = _listing(wos, ctx.sender_language)
        ctx.send(sender.phone, truncate(listed, 1500), suffix="list")
        return finish(ctx, lane, note=f"{fallback}listed {len(wos)} open WO(s)")
    if params.operation == "complete" and not manager:
        # A vendor's report or the tenant's confirmation: no hold (docs/completion.md).
        return report_or_confirm(params, ctx)

    # Only open WOs the sender may change (tenant or PM) can be cancelled or moved.
    by_id = {
        wo.wo_id: wo
        for wo in wos
        if wo.is_open and may_manage(params.operation, part_of(sender, wo))
    }
    named = tuple(dict.fromkeys(ctx.resolve_target(i) or i for i in params.wo_ids))
    chosen = tuple(i for i in named if i in by_id)
    refused = [i for i in named if i not in by_id]
    if not chosen:
        language = ctx.sender_language
        listing = _pm_listing(wos, total) if manager else _listing(wos, language)
        which = say(NO_MATCH, language, listing=listing)
        ctx.send(sender.phone, truncate(which, 1500), suffix="which")
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
    by_call = queued is not None and queued.by_unverified_call
    options = tuple(i for i in (queued.options if queued else ()) if i in by_id) or chosen
    said = [queued.say] if queued and queued.say else []
    unworked = [i for i in chosen if by_id[i].status is WorkOrderStatus.OPEN]
    if params.operation == "complete" and unworked:
        # Said before the YES, not after it: what closing a request no vendor took does.
        said.append(
            in_language(CLOSE_NO_VENDOR, ctx.sender_language).format(jobs=", ".join(unworked))
        )
    proposal = _proposal(
        params,
        chosen,
        options,
        by_id,
        " ".join(said),
        by_call,
        ctx.sender_language,
    )
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
                asked_on=Channel.SMS,  # ctx.send texts the party: only a text back releases it
                by_unverified_call=by_call,
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
    notes = [f"held {params.operation} of {', '.join(chosen)} until YES"]
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
    first: str,
    by_call: bool = False,
    language: str = "en",
) -> str:
    """ "Reply YES to …", naming each WO; numbered when "1" could mean one of several. Asked
    for by a call nothing vouches for, it says so, and that the owner may ignore it. In Spanish
    it asks for "SÍ o YES" (both read as a yes). ``first``: said before it (what changed)."""
    lead = f"{first} " if first else ""
    width = max(20, 300 // max(len(options), 1) - 20)
    if len(options) > 1:
        numbered = "; ".join(
            say(OPTION, language, number=n, line=_line(by_id[i], width, language))
            for n, i in enumerate(options, 1)
        )
        which = (
            say(PROPOSE_BOTH if len(chosen) == 2 else PROPOSE_ALL, language)
            if set(chosen) == set(options)
            else say(
                PROPOSE_NUMBERS,
                language,
                numbers=say(PROPOSE_NUMBERS_JOIN, language).join(
                    f"{options.index(i) + 1}" for i in chosen
                ),
            )
        )
        template = PROPOSE_MANY_BY_CALL if by_call else PROPOSE_MANY
        what = _held_what(params, which, language)
        text = say(template, language, what=what, numbered=numbered)
    else:
        template = PROPOSE_ONE_BY_CALL if by_call else PROPOSE_ONE
        what = _held_what(params, _line(by_id[chosen[0]], 120, language), language)
        text = say(template, language, what=what)
    return truncate(lead + text, _MAX_PROPOSAL)


def _held_what(params: ManageExistingParams, which: str, language: str) -> str:
    """What a YES does, in words maestro composes: "cancel both", "close WO-12 (…)", "ask to
    move the visit for both to friday after 3pm" (the request's time words only, never the
    rest of its sentence), "ask for a new time for the visit for WO-12 (…)"."""
    if params.operation == "reschedule":
        when = new_time(params.request)
        return say(MOVE_TO if when else MOVE_NEW_TIME, language, which=which, when=when)
    return say(PROPOSE_WHAT[params.operation], language, which=which)


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
    if call is None:
        # One of a call's held actions: released once, exactly as held, by the shared rule.
        refused = released_as_held(action, ctx)
        if refused is not None:
            return refused
        done = _apply(ctx, action.params)
        _tell(ctx, action.params, done)
        return finish(
            ctx,
            lane,
            note=f"released from {hold.confirmation_id}: {action.params.operation} of "
            f"{', '.join(wo.wo_id for wo in done) or 'nothing'} exactly as held",
        )
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
        changed = say(CHANGED_NOTHING_CHANGED, ctx.sender_language, what=check.summary())
        ctx.send(sender.phone, truncate(changed, 500), suffix="changed")
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

    done = _apply(ctx, call)
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


def _apply(ctx: LaneContext, call: ManageExistingParams) -> list[WorkOrder]:
    """The held cancel or reschedule, on each of its work orders; the ones it changed."""
    done: list[WorkOrder] = []
    for wo_id in call.wo_ids:
        before = ctx.work_orders.get(wo_id)
        change = (
            _cancel(ctx)
            if call.operation == "cancel"
            else complete_change(ctx)
            if call.operation == "complete"
            else touch(ctx)
        )
        try:
            updated = update_work_order(ctx.work_orders, wo_id, change)
        except InvalidTransitionError:
            continue
        if updated is None:
            continue
        done.append(updated)
        if call.operation in ("cancel", "complete"):
            done_word = (
                "cancelled"
                if call.operation == "cancel"
                else "closed with no vendor on it (nothing to rate)"
                if before is not None and before.status is WorkOrderStatus.OPEN
                else "closed"
            )
            entry = ctx.append_entry(
                "status",
                wo_id,
                f"{done_word} by {who_said(ctx)} (a held {call.operation}, confirmed with YES)",
                wo_id,
                from_status=before.status if before is not None else None,
                to_status=updated.status,
                operation=call.operation,
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
    return done


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
    if call.operation == "complete":
        tell_closed(ctx, done)
        return
    language = ctx.sender_language
    names = ", ".join(_line(wo, 40, language) for wo in done)
    if call.operation == "cancel":
        said = say(DONE_CANCELLED, language, names=names)
    else:
        when = new_time(call.request)
        said = say(MOVE_ASKED if when else MOVE_ASKED_NEW_TIME, language, jobs=names, when=when)
    ctx.send(sender.phone, truncate(said, 500), suffix="done")
    by_pm = sender.role is PartyRole.PM
    by = "pm" if by_pm else "tenant"
    for wo in done:
        tenant = phone_of(ctx, wo.tenant_id)
        if call.operation == "cancel" and by_pm and tenant is not None:
            # The tenant learns their request is closed, in fixed words: nothing the PM wrote.
            ctx.send(
                tenant,
                truncate(_cancelled_by(wo, by_pm, ctx.language_of(tenant, wo)), 500),
                suffix=f"tenant#{wo.wo_id}",
            )
        vendor = phone_of(ctx, wo.vendor_id)
        if vendor is None or wo.vendor_id == sender.party_id:
            continue
        heard = ctx.language_of(vendor)
        when = say(WHEN_SAID, heard, request=short(call.request, 80)) if call.request else ""
        body = (
            _cancelled_by(wo, by_pm, heard)
            if call.operation == "cancel"
            else say(VISIT_ASKED_BY[by], heard, line=_line(wo, language=heard), when=when)
        )
        ctx.send(vendor, truncate(body, 500), suffix=f"vendor#{wo.wo_id}")


def _cancelled_by(wo: WorkOrder, by_pm: bool, language: str) -> str:
    """The fixed notice that a work order was cancelled, and by whom."""
    return say(
        CANCELLED_BY["pm" if by_pm else "tenant"], language, line=_line(wo, language=language)
    )


# -- what a call asked for, held until the number's owner confirms by text ---------------------


def hold_actions(ctx: LaneContext) -> LaneOutcome:
    """Hold the actions dispose held (``QueuedAction.held``) as one PendingConfirmation of those
    exact actions, each work order they name pinned as it is now, and text the party what was
    asked. Nothing they would do is done here. A new hold supersedes whatever else was open."""
    lane = Lane.MANAGE_EXISTING
    sender, queued = ctx.sender, ctx.queued
    if sender is None or queued is None or not queued.held:  # pragma: no cover - dispose's
        return finish(ctx, lane, status="skipped", note="nothing to hold")
    named = {wo_id for action in queued.held for wo_id, _ in action_targets(action)}
    mine = {
        wo_id: wo
        for wo_id in sorted(named)
        if (wo := ctx.work_orders.get(wo_id)) is not None and may_act_on(ctx, wo)
    }
    # What names a work order that is gone or no longer the sender's is not held (dispose
    # checked it against their open contexts; this is the check against the store, now).
    kept = tuple(a for a in queued.held if all(i in mine for i, _ in action_targets(a)))
    dropped = [a.lane for a in queued.held if a not in kept]
    if not kept:
        return finish(
            ctx, lane, status="skipped", note="nothing held: no work order it names is theirs"
        )
    by_call = queued.by_unverified_call
    tenant = sender.role is PartyRole.TENANT
    proposal = _held_proposal(kept, mine, queued.say, by_call, tenant, ctx.sender_language)
    confirmation_id = ctx.idempotency_key
    superseded = supersede_open(ctx, keep=confirmation_id)
    hold = PendingConfirmation(
        confirmation_id=confirmation_id,
        package_id=ctx.package.package_id,
        conversation_id=ctx.package.conversation_id,
        party_id=sender.party_id,
        held=kept,
        proposal=proposal,
        wo_snapshots=tuple(WoSnapshot.of(mine[i]) for i in dict.fromkeys(_ids_of(kept))),
        asked_on=Channel.SMS,  # ctx.send texts the number: only a text back releases it
        by_unverified_call=by_call,
        held_at=ctx.now,
        expires_at=ctx.now + DEFAULT_PENDING_TTL,
    )
    # Keyed by the idempotency key and created once: a re-run leaves the first run's hold.
    with contextlib.suppress(AlreadyExistsError):
        ctx.pending.put_confirmation(hold)
    ctx.effect("confirm.held", confirmation_id)
    ctx.event(
        "confirm.held",
        confirmation_id,
        operation=hold.operation,
        wo_ids=",".join(hold.wo_ids),
        status="held",
    )
    ctx.send(sender.phone, proposal, suffix="confirm")
    notes = [f"held {hold.operation} ({', '.join(hold.wo_ids) or 'a new request'}) until YES"]
    if dropped:
        notes.append(f"not held, not the sender's: {', '.join(dropped)}")
    if superseded:
        notes.append(f"superseded {', '.join(superseded)}")
    return finish(ctx, lane, note="; ".join(notes))


def released_as_held(action: Action, ctx: LaneContext) -> LaneOutcome | None:
    """Whether one action of a hold of actions may run now: None to go on, else the skip.

    It runs only if it is one of the actions its hold holds, exactly. The first of them, once,
    re-validates the whole hold against the work orders as stored now and moves it from held to
    released (conditionally); the rest run only if this package released it. A re-run of the
    same package finds it released by itself and goes on."""
    lane = Lane(action.lane)
    queued = ctx.queued
    pending_id = queued.pending_id if queued is not None else None
    hold = ctx.pending.get("confirmation", pending_id) if pending_id else None
    if not isinstance(hold, PendingConfirmation) or action not in hold.held:
        return finish(ctx, lane, status="skipped", note="not released: not what a hold holds")
    rerun = hold.status == "released" and hold.closed_by == ctx.package.package_id
    if action != hold.held[0]:
        if rerun:
            return None  # the first of them released it, in this package
        return finish(ctx, lane, status="skipped", note=f"{hold.confirmation_id} is {hold.status}")
    if not rerun:
        refused = _release_once(ctx, lane, hold)
        if refused is not None:
            return refused
    ctx.effect("confirm.released", hold.confirmation_id)
    ctx.event(
        "confirm.released",
        hold.confirmation_id,
        operation=hold.operation,
        wo_ids=",".join(hold.wo_ids),
        status="released",
    )
    return None


def _release_once(ctx: LaneContext, lane: Lane, hold: PendingConfirmation) -> LaneOutcome | None:
    """Re-validate a hold of actions at the effect and move it from held to released, once:
    None when it is released now, else the skip (a changed work order discards it)."""
    if hold.status != "held":
        return finish(ctx, lane, status="skipped", note=f"{hold.confirmation_id} is {hold.status}")
    check = revalidate(
        [
            Target(
                wo_id=wo_id,
                operation=operation,
                asked_at=hold.held_at,
                then=next((s for s in hold.wo_snapshots if s.wo_id == wo_id), None),
                current=ctx.work_orders.get(wo_id),
            )
            for wo_id, operation in hold_targets(hold)
        ],
        ctx.sender,
    )
    sender = ctx.sender
    if check.outcome != "valid" or sender is None:
        with contextlib.suppress(StaleVersionError):
            ctx.pending.set_status(
                "confirmation", hold.confirmation_id, "held", "discarded", ctx.package.package_id
            )
        if sender is not None:
            ctx.send(
                sender.phone,
                truncate(say(CHANGED_NOTHING_DONE, ctx.sender_language, what=check.summary()), 500),
                suffix="changed",
            )
        return finish(
            ctx, lane, status="skipped", note=f"not released: {check.outcome}: {check.summary()}"
        )
    try:
        ctx.pending.set_status(
            "confirmation", hold.confirmation_id, "held", "released", ctx.package.package_id
        )
    except StaleVersionError:
        return finish(ctx, lane, status="skipped", note=f"{hold.confirmation_id} moved on")
    return None


def _ids_of(actions: Sequence[Action]) -> list[str]:
    return [wo_id for action in actions for wo_id, _ in action_targets(action)]


def _held_proposal(
    actions: Sequence[Action],
    wos: dict[str, WorkOrder],
    first: str,
    by_call: bool,
    tenant: bool,
    language: str = "en",
) -> str:
    """One text naming everything held, in the order it would run, and how to confirm it."""
    parts = [_what(action, wos, tenant, language) for action in actions]
    joiner = say(HELD_JOIN, language)
    asked = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + joiner + parts[-1]
    template = HELD_PROPOSAL_BY_CALL if by_call else HELD_PROPOSAL
    lead = f"{first} " if first else ""
    room = _MAX_PROPOSAL - len(lead) - len(say(template, language, asked=""))
    return truncate(
        lead + say(template, language, asked=short(asked, max(room, 20))), _MAX_PROPOSAL
    )


def _what(action: Action, wos: dict[str, WorkOrder], tenant: bool, language: str = "en") -> str:
    """What one held action would do, in words (its quoted part cut short), as the party who
    asked would say it: a tenant says when they are home, a vendor or PM proposes a visit."""
    what = {key: in_language(texts, language) for key, texts in HELD_WHAT.items()}

    def label(wo_id: str | None) -> str:
        wo = wos.get(wo_id or "")
        return _line(wo, 40, language) if wo is not None else what["new"]

    if isinstance(action, CreateWo):
        return what["create"].format(summary=short(action.params.summary, 80))
    if isinstance(action, ScheduleVisit):
        return what["home" if tenant else "propose"].format(
            wo=label(action.target_wo_id), when=short(action.params.availability, 60)
        )
    if isinstance(action, RelayToOpenWo):
        return what["add"].format(
            wo=label(action.target_wo_id), note=short(action.params.note, 100)
        )
    if isinstance(action, RelayToVendor):
        return what["tell"].format(
            wo=label(action.target_wo_id), said=short(action.params.message, 100)
        )
    if isinstance(action, RecordRating):
        return what["rate"].format(wo=label(action.target_wo_id), stars=action.params.stars)
    if isinstance(action, ManageExisting):
        names = ", ".join(label(i) for i in action.params.wo_ids)
        if action.params.operation in ("cancel", "complete"):
            key = "cancel" if action.params.operation == "cancel" else "close"
            return what[key].format(names=names)
        request = action.params.request
        when = what["move_when"].format(request=short(request, 60)) if request else ""
        return what["move"].format(names=names, when=when)
    return action.lane  # pragma: no cover - only what needs the owner is held
