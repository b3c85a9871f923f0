"""escalate: page the on-call PM; for an emergency, tell the tenant how to stay safe.

Escalation closes nothing (I1): open WOs, pending clarifications and held confirmations are
left exactly as they were, to be re-validated when the emergency is over (I6). An identity
escalation (a number nobody knows) pages the PM with the number and the words, and sends the
sender no safety advice: nothing says it is an emergency, and the number is bound to no one.
"""

from __future__ import annotations

import re

from maestro.domain.actions import Escalate, Lane
from maestro.domain.models import Party
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish, short

__all__ = ["run", "safety_instructions"]

# Checked in order: the first that matches picks the advice. Carbon monoxide before gas and
# smoke ("CO alarm" is neither), gas before water ("gas leak" is not a water leak).
_SAFETY: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "carbon_monoxide",
        re.compile(r"carbon\W*monoxide|\bco\b(?!-)", re.IGNORECASE),
        "Get everyone out to fresh air now and call 911. Don't go back in until the fire "
        "department says it is safe.",
    ),
    (
        "gas",
        re.compile(r"\bgas\b|propane|rotten\W+eggs?", re.IGNORECASE),
        "Leave now. Don't use light switches, phones, appliances or flames inside. From "
        "outside, call 911 or the gas company's emergency line.",
    ),
    (
        "fire",
        re.compile(r"fire|smok|flame|burning|sparks?\b", re.IGNORECASE),
        "Get out now and call 911. Close doors behind you; don't go back for belongings.",
    ),
    (
        "water",
        re.compile(r"flood|water|leak|burst|pipe|overflow|sewage", re.IGNORECASE),
        "If it is safe, shut off the water at the main valve. Keep clear of outlets, "
        "appliances and anything electrical near the water.",
    ),
)
_GENERIC = "If anyone is in danger, call 911 now."
IDENTITY_PAGE_WINDOW_SECONDS = 3600
"""One identity page per unknown number per hour; later packages attach to it."""
SAFETY_SUFFIX = "safety"


def safety_advice_key(action_key: str) -> str:
    """The messenger's key for an emergency's safety advice (the escalating action's key): one
    advice per emergency, whoever sends it (this lane, or fail-open when the step failed)."""
    return f"{action_key}#{SAFETY_SUFFIX}"


def safety_instructions(hazard: str, text: str = "") -> tuple[str, str]:
    """(kind, advice) for a hazard: chosen from the hazard's words first, then the sender's."""
    for source in (hazard, text):
        for kind, pattern, advice in _SAFETY:
            if source and pattern.search(source):
                return kind, advice
    return "generic", _GENERIC


def run(action: Escalate, ctx: LaneContext) -> LaneOutcome:
    params = action.params
    sender = ctx.sender
    phone = sender.phone if sender is not None else ctx.package.sender_phone
    target = ctx.resolve_target(action.target_wo_id)

    if params.reason == "identity":
        return _identity(ctx, phone)
    if params.reason == "guard_tripped":
        return _break_in(ctx, phone, params.hazard)

    advice_kind: str | None = None
    if params.reason == "emergency":
        # The tenant's safety first, then the page: both go out in the same run.
        advice_kind, advice = safety_instructions(params.hazard, ctx.package.text)
        ctx.send(
            phone,
            f"{advice} We've alerted the on-call property manager, who will contact you.",
            suffix=SAFETY_SUFFIX,
        )

    if sender is None:
        who = f"UNKNOWN number {phone} (not in the directory; not bound to anyone)"
    else:
        name = short(sender.name or sender.party_id, 40)
        unit = f", unit {short(sender.unit, 20)}" if sender.unit else ""
        who = f"{name} ({sender.role.value}{unit}, {phone})"
    words = short(ctx.package.text.replace("\n", " / "), 600)
    about = f" re {target}" if target else ""
    hazard = f": {params.hazard}" if params.hazard else ""
    page = ctx.send(
        ctx.on_call_pm_phone,
        f"[{params.severity.upper()}] {params.reason}{hazard}. From {who}{about}. "
        f'They said: "{words}"',
        suffix="page",
    )
    _paged(ctx, page.sid, params.reason, params.severity)
    safety = f"; safety instructions sent ({advice_kind})" if advice_kind else ""
    return finish(
        ctx,
        Lane.ESCALATE,
        target=target,
        note=f"paged the on-call PM ({params.reason}, {params.severity}){safety}; contexts kept",
    )


def _break_in(ctx: LaneContext, phone: str, reason: str) -> LaneOutcome:
    """The guards tripped (seed 003): the PM is brought in once with the trail, and the party is
    told a person is on it instead of being asked the same thing again."""
    sender = ctx.sender
    who = _who(sender, phone)
    trail = " | ".join(ctx.queued.trail) if ctx.queued is not None else ""
    words = short(" ".join(ctx.package.text.split()), 200)
    page = ctx.send(
        ctx.on_call_pm_phone,
        short(
            f"[INFO] maestro is going round in circles with {who}: {reason or 'no progress'}. "
            f'Latest: "{words}". Trail: {trail or "(none)"}. Please take over.',
            1200,
        ),
        suffix="page",
    )
    _paged(ctx, page.sid, "guard_tripped", "info")
    ctx.send(
        phone,
        "I've asked the property manager to help with this; they'll be in touch with you.",
        suffix="told",
    )
    return finish(ctx, Lane.ESCALATE, note=f"break-in: paged the PM with the trail ({reason})")


def _paged(ctx: LaneContext, sid: str, reason: str, severity: str) -> None:
    ctx.effect("escalation.paged", sid)
    ctx.event(
        "escalation.paged",
        sid,
        "page",
        to=ctx.on_call_pm_phone,
        reason=reason,
        severity=severity,
    )


def _who(sender: Party | None, phone: str) -> str:
    if sender is None:
        return f"UNKNOWN number {phone}"
    unit = f", unit {short(sender.unit, 20)}" if sender.unit else ""
    return f"{short(sender.name or sender.party_id, 40)} ({sender.role.value}{unit})"


def _identity(ctx: LaneContext, phone: str) -> LaneOutcome:
    """A number nobody knows: one short page per number per hour, never bound to anyone."""
    if ctx.throttle is not None:
        holder = ctx.throttle.claim(
            f"identity-page#{phone}", ctx.idempotency_key, ctx.now, IDENTITY_PAGE_WINDOW_SECONDS
        )
        if holder is not None:
            return finish(
                ctx,
                Lane.ESCALATE,
                status="skipped",
                note=f"identity page throttled: attached to the page of {holder} (one per "
                "number per hour)",
            )
    words = short(" ".join(ctx.package.text.split()), 160)
    page = ctx.send(
        ctx.on_call_pm_phone,
        f"[INFO] A number not in the directory ({phone}) texted the maintenance line: "
        f'"{words}". It is not bound to anyone; add it to the directory or reply to them.',
        suffix="page",
    )
    _paged(ctx, page.sid, "identity", "info")
    return finish(ctx, Lane.ESCALATE, note="paged the on-call PM about an unknown number")
