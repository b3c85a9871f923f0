"""continue_with_assistant: the assistant replies to the sender; nothing else changes."""

from __future__ import annotations

from maestro.domain.actions import ContinueWithAssistant, Lane
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish

__all__ = ["NEUTRAL_REPLY", "run"]

NEUTRAL_REPLY = "Thanks for your message. I'm on it and will get back to you shortly."


def run(action: ContinueWithAssistant, ctx: LaneContext) -> LaneOutcome:
    # An unknown sender still gets a reply, on the number the package came from; nothing binds
    # that number to a person.
    to = ctx.sender.phone if ctx.sender is not None else ctx.package.sender_phone
    ctx.send(to, action.params.reply_hint or NEUTRAL_REPLY, suffix="reply")
    target = ctx.resolve_target(action.target_wo_id)
    return finish(ctx, Lane.CONTINUE_WITH_ASSISTANT, target=target, note="assistant replied")
