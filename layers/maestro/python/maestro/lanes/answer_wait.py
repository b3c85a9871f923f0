"""answer_wait (internal: only resolve queues it): a vendor's answer to their open offer, a PM's
to an approval, sent to the WO's execution as its wait's task output, and the party told the
truth about what it did.

The lease snapshot carried only which wait was open; the run is re-read here for the token, and
the wait must still be that one (the same kind, for this party, the same offer) and not past its
deadline. Then ``TaskTokens.succeed(token, WaitAnswer)``: ids only, never the words (an
execution's history cannot be erased). A token that waits no more (answered already, timed
out, the execution stopped) is said plainly: that offer is no longer open. An unclear answer is
asked again ("Reply 1 to accept WO-…, 2 to decline"), naming the work orders when several are
open. Every text of one action goes under one message key, so a re-run (whose token is gone by
then) returns the first text instead of sending a second, contradicting one.
"""

from __future__ import annotations

from maestro.domain.actions import AnswerWait, Lane
from maestro.domain.dispatch import DispatchRun, WaitAnswer
from maestro.domain.fixed_texts import (
    WAIT_ASK,
    WAIT_ASK_WHICH,
    WAIT_DONE,
    WAIT_GONE,
    WAIT_NONE_OPEN,
    Texts,
)
from maestro.domain.fixed_texts import say as worded
from maestro.domain.models import Channel
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import finish
from maestro.ports.workflows import TaskTokenGoneError

__all__ = ["run"]

_REPLY = "reply"
"""The one message suffix of the lane (see the module docstring)."""


def run(action: AnswerWait, ctx: LaneContext) -> LaneOutcome:
    lane = Lane.ANSWER_WAIT
    sender = ctx.sender
    params = action.params
    wo_id = action.target_wo_id
    if sender is None:  # pragma: no cover - resolve answers a known party's waits only
        return finish(ctx, lane, status="skipped", target=wo_id, note="no sender")
    language = ctx.sender_language
    say = ctx.queued.say if ctx.queued is not None else ""

    def tell(texts: Texts, note: str, **values: str) -> LaneOutcome:
        body = worded(texts, language, **values)
        ctx.send(sender.phone, f"{say} {body}".strip() if say else body, suffix=_REPLY)
        return finish(ctx, lane, target=wo_id, note=note)

    if wo_id is None:
        # Several open and the answer named none of them: ask which, naming each.
        wos = list(params.candidates)
        live = [w for w in wos if _still_waiting(ctx, w, params.kind, None) is not None]
        if not live:
            return tell(
                WAIT_NONE_OPEN[params.kind],
                "asked which, but none is open now",
                wos=_listed(wos, language),
            )
        if len(live) == 1:
            return tell(WAIT_ASK[params.kind], f"asked again about {live[0]}", wo=live[0])
        return tell(
            WAIT_ASK_WHICH[params.kind],
            f"asked which of {', '.join(live)}",
            wos=_listed(live, language),
            first=live[0],
        )

    run_ = _still_waiting(ctx, wo_id, params.kind, params.offer_index)
    if run_ is None or run_.waiting is None:
        return tell(WAIT_GONE[params.kind], f"{wo_id}: the {params.kind} waits no more", wo=wo_id)
    if params.answer == "unclear":
        return tell(WAIT_ASK[params.kind], f"{wo_id}: not a clear answer; asked again", wo=wo_id)
    if not ctx.package.answers_on(Channel.SMS):  # pragma: no cover - resolve asks again first
        return tell(WAIT_ASK[params.kind], f"{wo_id}: not by text; asked again", wo=wo_id)
    if ctx.tokens is None:
        raise RuntimeError("answer_wait needs the task tokens (PipelineDeps.tokens)")
    answer = WaitAnswer(
        kind=params.kind,
        answer=params.answer,
        party_id=sender.party_id,
        package_id=ctx.package.package_id,
    )
    try:
        ctx.tokens.succeed(run_.waiting.token, answer.model_dump(mode="json"))
    except TaskTokenGoneError:
        return tell(
            WAIT_GONE[params.kind],
            f"{wo_id}: the token waits no more (answered or timed out)",
            wo=wo_id,
        )
    return tell(
        WAIT_DONE[params.answer],
        f"{wo_id}: {params.kind} answered {params.answer} (the execution goes on)",
        wo=wo_id,
    )


def _still_waiting(
    ctx: LaneContext, wo_id: str, kind: str, offer_index: int | None
) -> DispatchRun | None:
    """The run, re-read, when its wait is still the one answered: this kind, for the sender, the
    same offer, before its deadline. None otherwise."""
    if ctx.dispatch is None or ctx.sender is None:
        return None
    run_ = ctx.dispatch.get(wo_id)
    wait = run_.waiting if run_ is not None else None
    if (
        run_ is None
        or wait is None
        or wait.kind != kind
        or wait.party_id != ctx.sender.party_id
        or (offer_index is not None and wait.offer_index != offer_index)
        or wait.deadline <= ctx.now
    ):
        return None
    return run_


def _listed(ids: list[str], language: str) -> str:
    joiner = " y " if language == "es" else " and "
    return ", ".join(ids[:-1]) + joiner + ids[-1] if len(ids) > 1 else "".join(ids)
