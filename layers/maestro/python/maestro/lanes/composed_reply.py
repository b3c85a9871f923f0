"""The assistant's reply composed by the cheap model, checked, or the fixed text
(docs/composed-replies.md).

:func:`composed_or_fixed` is the one seam ``continue_with_assistant`` calls when it has no reply
written and no work order to describe. With a composer (a model is configured and composition is
on) and a known sender, it gathers the facts, what the person wrote, what this package's earlier
actions did (read back from their recorded outcomes and the WO store), who else is around, asks
the composer, and sends the answer only if :func:`maestro.domain.reply_check.check_reply` finds
nothing wrong. Otherwise, and whenever the model fails or is over budget, the fixed text goes:
composition never blocks a package. Each refusal and failure is said in the action's outcome
note (the decision log), a log line and a metric.
"""

from __future__ import annotations

from pydantic import Field, ValidationError

from maestro.brain.model_port import ModelError
from maestro.domain.actions import Lane
from maestro.domain.common import Frozen, truncate
from maestro.domain.models import ContextKind, Party, WorkOrderStatus
from maestro.domain.records import ActionOutcomeRecord
from maestro.domain.reply_check import Did, Done, OtherParty, ReplyFacts, check_reply
from maestro.lanes.context import LaneContext
from maestro.observability import count, logger

__all__ = ["ReplyChoice", "composed_or_fixed", "done_so_far", "reply_facts"]

_MAX_WOS = 12
"""Work orders whose parties the check reads: the sender's open ones are at most about this."""

_DID: dict[Lane, Did] = {
    Lane.CREATE_WO: Did.OPENED,
    Lane.RELAY_TO_OPEN_WO: Did.RELAYED,
    Lane.RELAY_TO_VENDOR: Did.RELAYED,
    Lane.ESCALATE: Did.PAGED,
    Lane.CLARIFY: Did.ASKED,
    # The manage lane and an answer to a wait text the person themselves (a list, a hold to
    # confirm, what their answer did): a reply may say they were answered, never what changed.
    Lane.MANAGE_EXISTING: Did.ASKED,
    Lane.ANSWER_WAIT: Did.ASKED,
    Lane.RECORD_RATING: Did.RATED,
}


class ReplyChoice(Frozen):
    text: str | None = Field(description="What to send; None: nothing (the fixed choice)")
    note: str = ""


def done_so_far(ctx: LaneContext) -> tuple[Done, ...]:
    """What this package's earlier actions did, from their recorded outcomes (an action that
    was skipped or failed did nothing a reply may speak of)."""
    if ctx.decisions is None:
        return ()
    outcomes = [
        o
        for o in ctx.decisions.outcomes_for(ctx.package.package_id)
        if o.index < ctx.action_index and o.status == "done"
    ]
    return tuple(d for o in outcomes if (d := _done(ctx, o)) is not None)


def _done(ctx: LaneContext, outcome: ActionOutcomeRecord) -> Done | None:
    wo_id = outcome.created_wo_id or outcome.target_wo_id
    wo = ctx.work_orders.get(wo_id) if wo_id else None
    if outcome.lane is Lane.SCHEDULE_VISIT:
        # Booked only when the store says so; offered times are not a visit.
        booked = wo is not None and wo.status is WorkOrderStatus.SCHEDULED and wo.visit is not None
        did = Did.BOOKED if booked else Did.PROPOSED
    elif outcome.lane in _DID:
        did = _DID[outcome.lane]
    else:
        return None
    what = truncate(wo.summary, 60) if wo is not None else ""
    return Done(did=did, wo_id=wo_id if did is not Did.PAGED else None, what=what)


def _other(party: Party) -> OtherParty:
    return OtherParty(name=party.name, phone=party.phone, unit=party.unit)


def reply_facts(ctx: LaneContext, sender: Party, done: tuple[Done, ...]) -> ReplyFacts:
    """The sender, their work orders, and the other parties of those work orders."""
    own = [c.wo_id or c.context_id for c in ctx.open_contexts if c.kind is ContextKind.WORK_ORDER]
    touched = [d.wo_id for d in done if d.wo_id]
    others: dict[str, OtherParty] = {}
    for wo_id in list(dict.fromkeys([*touched, *own]))[:_MAX_WOS]:
        wo = ctx.work_orders.get(wo_id)
        if wo is None:
            continue
        for party_id in (wo.tenant_id, wo.vendor_id):
            if party_id is None or party_id == sender.party_id or party_id in others:
                continue
            party = ctx.parties.by_party_id(party_id)
            if party is not None:
                others[party_id] = _other(party)
    return ReplyFacts(
        done=done,
        sender_phone=sender.phone,
        sender_name=sender.name,
        sender_unit=sender.unit,
        own_wo_ids=tuple(own),
        others=tuple(others.values()),
    )


def composed_or_fixed(ctx: LaneContext, fixed: str | None) -> ReplyChoice:
    """The composed reply when there is one and it passes the check; else ``fixed``. When the
    fixed choice is to say nothing (``None``: an acknowledgement needs no answer), nothing is
    composed either."""
    composer, sender = ctx.composer, ctx.sender
    if composer is None or sender is None or fixed is None:
        # Offline, turned off, a number nobody knows (it costs no model call), or nothing to
        # say: the fixed choice.
        return ReplyChoice(text=fixed)
    done = done_so_far(ctx)
    try:
        composed = composer.compose(
            [m.body for m in ctx.package.messages],
            [d.line() for d in done],
            ctx.sender_language,
        )
    except (ModelError, ValueError, ValidationError) as error:
        kind = error.kind if isinstance(error, ModelError) else "invalid_answer"
        count("ComposedReplies", outcome="failed")
        logger.warning(
            "no composed reply: the fixed text goes",
            extra={"package_id": ctx.package.package_id, "failure": kind},
        )
        return ReplyChoice(text=fixed, note=f"no composed reply ({kind}): the fixed text went")
    refusal = check_reply(composed.text, reply_facts(ctx, sender, done))
    if refusal is not None:
        count("ComposedReplies", outcome="refused")
        # The refused text is not logged: it may hold another party's data.
        logger.warning(
            "composed reply refused: the fixed text goes",
            extra={"package_id": ctx.package.package_id, "refusal": refusal.reason()},
        )
        return ReplyChoice(
            text=fixed, note=f"composed reply refused, {refusal.reason()}; the fixed text went"
        )
    count("ComposedReplies", outcome="sent")
    return ReplyChoice(text=composed.text, note="composed reply, checked")
