"""clarify: ask one question naming the candidates, and store it so the reply can resolve.

The stored PendingClarification keeps the candidates in the order they were numbered, with one
line each and each as it was when asked, plus what the question put on hold (the package's words
and the readings withheld), so the next package's "1", "the kitchen one" or "both" resolves
against them (``maestro.domain.pending``) and replays the reading on the chosen work order(s).
A question about a command (cancel, reschedule, rate, relay) stores the command with it
(``ClarifyParams.call``), so the answer runs exactly that on what it picks.
A new question supersedes whatever else the party had open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from maestro.domain.actions import Clarify, DeferredCall, Lane
from maestro.domain.answers import NEW_CANDIDATE
from maestro.domain.commands import call_question
from maestro.domain.events import body_digest
from maestro.domain.fixed_texts import (
    OPTION,
    OPTION_SEPARATOR,
    QUESTION_ONE,
    SOMETHING_NEW,
    YOUR_REQUEST,
    say,
)
from maestro.domain.models import PartyRole, WoSnapshot
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingClarification
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import finish, short, supersede_open

__all__ = ["ask_about_call", "run"]


_MAX_CANDIDATES = 10
_NEW_LINE = SOMETHING_NEW["en"]
"""How a "something new" candidate's line is stored (shown in the reader's language)."""


def _candidates(
    action: Clarify, ctx: LaneContext
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """The candidate ids (the action's, else every open context), one line per candidate, and
    each candidate's description."""
    described = {c.context_id: c.description for c in ctx.open_contexts}
    ids = action.params.candidate_ids or tuple(c.context_id for c in ctx.open_contexts)
    ids = tuple(dict.fromkeys(ids))[:_MAX_CANDIDATES]
    lines = tuple(
        _NEW_LINE if cid == NEW_CANDIDATE else f"{cid}: {described.get(cid, cid)}" for cid in ids
    )
    return ids, lines, described


def _question(
    question: str,
    ids: Sequence[str],
    lines: Sequence[str],
    described: Mapping[str, str],
    language: str = "en",
) -> str:
    """The question as sent: it always shows what it asks about. Several candidates are
    numbered ("1" only means something if they were) unless the question numbers each already;
    one is named with a YES to take it unless the question names it already."""
    if len(ids) == 1 and ids[0] != NEW_CANDIDATE:
        only = ids[0]
        if only in question:
            return question
        about = short(described.get(only) or say(YOUR_REQUEST, language), 120)
        return f"{question.rstrip()} {say(QUESTION_ONE, language, wo_id=only, about=about)}"
    if len(lines) < 2 or all(f"{n})" in question for n in range(1, len(lines) + 1)):
        return question
    shown = [say(SOMETHING_NEW, language) if line == _NEW_LINE else line for line in lines]
    options = OPTION_SEPARATOR.join(
        say(OPTION, language, number=n, line=line) for n, line in enumerate(shown, 1)
    )
    return f"{question.rstrip()} {options}"


def run(action: Clarify, ctx: LaneContext) -> LaneOutcome:
    ids, lines, described = _candidates(action, ctx)
    call = action.params.call
    if call is not None:
        return ask_about_call(ctx, Lane.CLARIFY, call, ids, lines, action.params.reason)
    question = _question(action.params.question, ids, lines, described, ctx.sender_language)
    return _ask(ctx, Lane.CLARIFY, question, ids, lines, None, action.params.reason)


def ask_about_call(
    ctx: LaneContext,
    lane: Lane,
    call: DeferredCall,
    ids: Sequence[str],
    lines: Sequence[str],
    reason: str,
) -> LaneOutcome:
    """Ask which of the numbered candidates ``call`` is for, in fixed words naming the command,
    and store the question with the call: the answer runs it on what it picks (a cancel, a
    reschedule or a PM's close held for a YES; a vendor's report of the jobs picked)."""
    queued = ctx.queued
    again = queued is not None and queued.pending_id is not None
    manager = ctx.sender is not None and ctx.sender.role is PartyRole.PM
    question = call_question(call, lines, ctx.sender_language, again=again, manager=manager)
    return _ask(ctx, lane, question, tuple(ids), tuple(lines), call, reason)


def _ask(
    ctx: LaneContext,
    lane: Lane,
    question: str,
    ids: tuple[str, ...],
    lines: tuple[str, ...],
    call: DeferredCall | None,
    reason: str,
) -> LaneOutcome:
    queued = ctx.queued
    to = ctx.sender.phone if ctx.sender is not None else ctx.package.sender_phone
    ctx.send(to, question, suffix="question")
    # What the question puts on hold, replayed on the answer: the original words (a re-ask
    # keeps the first question's), the readings withheld, and each candidate as it is now.
    deferred_text = queued.deferred_text if queued and queued.deferred_text else ctx.package.text
    snapshots = tuple(
        WoSnapshot.of(wo)
        for cid in ids
        if cid != NEW_CANDIDATE and (wo := ctx.work_orders.get(cid))
    )
    superseded = supersede_open(ctx, keep=ctx.idempotency_key)
    # Keyed by the idempotency key: a re-run overwrites the same item with the same content.
    ctx.pending.put_clarification(
        PendingClarification(
            clarification_id=ctx.idempotency_key,
            package_id=ctx.package.package_id,
            conversation_id=ctx.package.conversation_id,
            party_id=ctx.sender.party_id if ctx.sender is not None else None,
            question=question,
            candidate_ids=ids,
            candidate_lines=lines,
            candidate_snapshots=snapshots,
            deferred_text=deferred_text,
            deferred=queued.deferred if queued else (),
            call=call,
            by_unverified_call=queued is not None and queued.by_unverified_call,
            asked_at=ctx.now,
            expires_at=ctx.now + DEFAULT_PENDING_TTL,
        )
    )
    ctx.effect("clarification.asked", ctx.idempotency_key)
    ctx.event(
        "clarification.asked",
        ctx.idempotency_key,
        question_sha256=body_digest(question),
        candidates=",".join(ids),
    )
    replaced = f"; superseded {', '.join(superseded)}" if superseded else ""
    return finish(
        ctx,
        lane,
        note=f"asked ({reason}); candidates: {', '.join(ids) or 'none'}{replaced}",
    )
