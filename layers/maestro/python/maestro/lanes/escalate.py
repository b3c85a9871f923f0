"""escalate: page the on-call PM; for an emergency, tell the tenant how to stay safe.

Escalation closes nothing (I1): open WOs, pending clarifications and held confirmations are
left exactly as they were, to be re-validated when the emergency is over (I6).

What an unknown number costs (docs/unknown-senders.md):
- an identity escalation (a number nobody knows) pages no one: it is a line of the hour's digest
  (:mod:`maestro.pipeline.digest` sends one page an hour listing them), and the sender gets
  nothing: nothing says it is an emergency, and the number is bound to no one;
- its first emergency pages at once, with the safety advice to that number; its repeats within
  the fold window (``unknown_emergency_fold_minutes``) fold into that page: no new page, no new
  safety text, the outcome naming the page's SID and time (a repeat escalating while that page
  is still going out is retried until it has gone).

Who is paged (docs/on-call.md): the on-call PM of the page's property at that moment (the
target WO's property, else the sender's one property), else the property's default PM, else the
account's fallback number; the outcome note and the ``escalation.paged`` event say who and why.
With no one to page, the page is recorded as undeliverable (and alarmed): nothing is sent into
nothing, and an emergency's safety advice does not say anyone was alerted.

The daily caps: an emergency from a known sender always pages (counted); any other page past the
page cap becomes a line of the hour's digest instead. Safety advice always goes. A page quotes at
most :data:`PAGE_EXCERPT_CHARS` of what was said: who and why, never the sender's essay.
"""

from __future__ import annotations

import re
from datetime import datetime

from maestro.domain.actions import Escalate, Lane
from maestro.domain.digest import DIGEST_EXCERPT_CHARS, DigestEntry, DigestKind
from maestro.domain.events import body_digest
from maestro.domain.fixed_texts import (
    BREAK_IN_NO_REASON,
    BREAK_IN_NO_TRAIL,
    BREAK_IN_PAGE,
    BROUGHT_IN,
    EMERGENCY_PAGE,
    FALL_BACK_WHY,
    FALLBACK_PAGE,
    FOLLOW_UP,
    PAGE_CAP_REACHED,
    PAGE_FROM,
    PAGE_FROM_UNKNOWN,
    PAGE_HAZARD,
    PAGE_RE,
    PAGE_WHO,
    PAGE_WHO_UNKNOWN,
    SAFETY_ADVICE,
    TOLD_FOLLOW_UP,
    UNIT_SUFFIX,
    AdviceKind,
    say,
)
from maestro.domain.fixed_texts import HELD_BACK as HELD_BACK_TEXTS
from maestro.domain.fixed_texts import PAGED as PAGED_TEXTS
from maestro.domain.fixed_texts import UNREACHED as UNREACHED_TEXTS
from maestro.domain.language import DEFAULT_LANGUAGE, detect_language, in_language, language_for
from maestro.domain.models import Party
from maestro.domain.on_call import PageRecipient, page_property
from maestro.domain.safety import safety_floor
from maestro.errors import TransientError
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.helpers import finish, short
from maestro.lanes.on_call import page_recipient, undeliverable

__all__ = [
    "PAGED_TEXTS",
    "PAGE_EXCERPT_CHARS",
    "UNREACHED_TEXTS",
    "advice_language",
    "run",
    "safety_instructions",
]

PAGE_EXCERPT_CHARS = 120
"""A page quotes at most this much of what the sender said."""
_HAZARD_CHARS = 60

# The floor's category names the hazard best (it reads symptoms, typos and Spanish); a hazard
# it does not report is named by these words instead, checked in order (a model's hazard, "CO
# alarm going off"): carbon monoxide before gas and smoke ("CO alarm" is neither), gas before
# water ("gas leak" is not a water leak).
_BY_WORDS: tuple[tuple[AdviceKind, re.Pattern[str]], ...] = (
    ("carbon_monoxide", re.compile(r"carbon\W*monoxide|\bco\b(?!-)|mon[oó]xido", re.I)),
    ("gas", re.compile(r"\bgas\b|propane|rotten\W+eggs?|huevos?\W+podridos?", re.I)),
    ("fire", re.compile(r"fire|smok|flame|burning|fuego|humo|incendi|llamas|quemad", re.I)),
    ("electrical", re.compile(r"sparks?\b|sparking|electrical|chispa|el[eé]ctric", re.I)),
    (
        "water",
        re.compile(
            r"flood|water|leak|burst|pipe|overflow|sewage|inund|agua|fuga|tuber|revent|gotea",
            re.IGNORECASE,
        ),
    ),
)
_BY_CATEGORY: dict[str, AdviceKind] = {
    "carbon_monoxide": "carbon_monoxide",
    "gas": "gas",
    "smoke_fire": "fire",
    "electrical": "electrical",
    "flooding": "water",
    "sewage": "water",
    "no_heat_freezing": "no_heat",
}
# Water and electricity in the same report: the advice is about the power, not the valve.
_WET = re.compile(r"water|flood|leak|pour|drip|\bwet\b|soak|agua|inund|gotea|mojad", re.I)
_POWERED = re.compile(
    r"outlet|socket|\bplugs?\b|wir(?:e|es|ing)\b|breaker|fuse|electric|switch|light\W+fixture|"
    r"enchufe|contacto|tomacorriente|cable|interruptor|apagador|el[eé]ctric|l[aá]mpara",
    re.IGNORECASE,
)
SAFETY_SUFFIX = "safety"
PAGED = PAGED_TEXTS["en"]
UNREACHED = UNREACHED_TEXTS["en"]
HELD_BACK = HELD_BACK_TEXTS["en"]
_CAP_REACHED = say(PAGE_CAP_REACHED, "en")


def emergency_window_key(phone: str) -> str:
    """The page-throttle key of an unknown number's emergency page (its fold window)."""
    return f"emergency-page#{phone}"


def safety_advice_key(action_key: str) -> str:
    """The messenger's key for an emergency's safety advice (the escalating action's key): one
    advice per emergency, whoever sends it (this lane, or fail-open when the step failed)."""
    return f"{action_key}#{SAFETY_SUFFIX}"


def safety_instructions(hazard: str, text: str = "", language: str = "en") -> tuple[str, str]:
    """(kind, advice) for a hazard, in ``language`` when it has a translation, else English.

    The kind is the safety floor's category of the hazard's words, else of the sender's;
    else the first hazard word found in either (:data:`_BY_WORDS`); else generic. Water and
    electricity named together are ``water_electrical``, whichever the floor saw first.
    """
    kind = _advice_kind(hazard, text)
    if kind in ("water", "electrical"):
        both = f"{hazard} {text}"
        if _WET.search(both) and _POWERED.search(both):
            kind = "water_electrical"
    return kind, in_language(SAFETY_ADVICE[kind], language)


def advice_language(preferred: str | None, text: str) -> str:
    """The language of an emergency's advice: the directory's, else the message's, else
    Spanish when the floor read the emergency with a Spanish rule ("uele a gas!!" says too
    little for :func:`detect_language`), else English."""
    if preferred or detect_language(text) is not None:
        return language_for(preferred, text)
    hit = safety_floor(text) if text else None
    return hit.language if hit is not None else DEFAULT_LANGUAGE


def _advice_kind(hazard: str, text: str) -> AdviceKind:
    for source in (hazard, text):
        hit = safety_floor(source) if source else None
        if hit is not None and hit.category in _BY_CATEGORY:
            return _BY_CATEGORY[hit.category]
        if hit is not None and hit.category == "other":
            # danger to a person (hurt, attacked, trapped): no hazard's steps apply, whatever
            # other words are there ("shots fired" is no fire, "fell in the pool" no leak)
            return "generic"
    for source in (hazard, text):
        for kind, pattern in _BY_WORDS:
            if source and pattern.search(source):
                return kind
    return "generic"


def run(action: Escalate, ctx: LaneContext) -> LaneOutcome:
    params = action.params
    sender = ctx.sender
    phone = sender.phone if sender is not None else ctx.package.sender_phone
    target = ctx.resolve_target(action.target_wo_id)

    if params.reason == "identity":
        return _identity(ctx, phone)
    recipient = _recipient(ctx, target)
    if params.reason == "guard_tripped":
        return _break_in(ctx, phone, params.hazard, recipient)
    if params.reason == "fallback":
        return _fallback(ctx, phone, target, recipient, action.why)

    emergency = params.reason == "emergency"
    if not recipient.deliverable:
        return _undeliverable(ctx, phone, target, recipient, params.hazard if emergency else None)
    if emergency and sender is None:
        folded = _fold(ctx, phone)
        if folded is not None:
            return folded
    # A known sender's emergency always pages (counted against the cap, never refused); any
    # other page past the daily cap becomes a line of the hour's digest.
    paged = ctx.may_send(
        "pages", "page", essential=(emergency and sender is not None) or ctx.digest is None
    )
    safety = ""
    if emergency:
        # The tenant's safety first, then the page: both go out in the same run, in the
        # sender's language.
        language = advice_language(_preferred(ctx), ctx.package.text)
        advice_kind, advice = safety_instructions(params.hazard, ctx.package.text, language)
        then = in_language(PAGED_TEXTS if paged else HELD_BACK_TEXTS, language)
        advised = ctx.send(phone, f"{advice} {then}", suffix=SAFETY_SUFFIX, essential=True)
        # Said only when it went: a sender who opted out gets none (the outcome says why).
        how = "sent" if advised is not None else "not sent"
        safety = f"; safety instructions {how} ({advice_kind}, {language})"
    if not paged:
        kind: DigestKind = "emergency" if emergency else "fallback"
        hour = _to_digest(ctx, kind, f"{kind}#{phone}", _who(sender, phone), _CAP_REACHED)
        if emergency and sender is None and ctx.throttle is not None:
            ctx.throttle.record(emergency_window_key(phone), ctx.idempotency_key, digest_hour=hour)
        return finish(
            ctx,
            Lane.ESCALATE,
            target=target,
            note=f"{_CAP_REACHED}: no page; a line in the digest of {hour:%H:%M} UTC instead "
            f"({params.reason}, {params.severity}){safety}; contexts kept",
        )

    who = _from(sender, phone)
    about = say(PAGE_RE, "en", target=target) if target else ""
    hazard = (
        say(PAGE_HAZARD, "en", hazard=short(params.hazard, _HAZARD_CHARS)) if params.hazard else ""
    )
    page = ctx.send(
        _phone(recipient),
        say(
            EMERGENCY_PAGE,
            "en",
            severity=params.severity.upper(),
            reason=params.reason,
            hazard=hazard,
            who=who,
            about=about,
            excerpt=_excerpt(ctx),
        ),
        suffix="page",
        cap="pages",
    )
    assert page is not None  # charged above: may_send said it goes
    _paged(ctx, page.sid, params.reason, params.severity, recipient)
    if emergency and sender is None and ctx.throttle is not None:
        ctx.throttle.record(
            emergency_window_key(phone), ctx.idempotency_key, page_sid=page.sid, paged_at=ctx.now
        )
    return finish(
        ctx,
        Lane.ESCALATE,
        target=target,
        note=f"paged {_paged_whom(recipient)} ({params.reason}, {params.severity}){safety}; "
        "contexts kept",
    )


def _from(sender: Party | None, phone: str) -> str:
    """Who a page is about: the person as the directory knows them, with their number."""
    if sender is None:
        return say(PAGE_FROM_UNKNOWN, "en", phone=phone)
    name = short(sender.name or sender.party_id, 40)
    unit = say(UNIT_SUFFIX, "en", unit=short(sender.unit, 20)) if sender.unit else ""
    return say(PAGE_FROM, "en", name=name, role=sender.role.value, unit=unit, phone=phone)


def _fallback(
    ctx: LaneContext, phone: str, target: str | None, recipient: PageRecipient, why: str
) -> LaneOutcome:
    """The brain gave no usable answer: the PM is paged with why (``why``, the failure kind in
    words), what the person wrote and what was done; the person is told a person will follow
    up, which is true only once the page went (past the daily page cap: a digest line, and they
    hear their message goes with the PM's next update). No one to page: nothing is said to
    them (no one would follow up)."""
    if not recipient.deliverable:
        line = undeliverable(recipient, "the fallback page", package_id=ctx.package.package_id)
        return finish(
            ctx, Lane.ESCALATE, target=target, note=f"fallback: {line}; nothing sent to the sender"
        )
    language = ctx.sender_language
    if not ctx.may_send("pages", "page", essential=ctx.digest is None):
        hour = _to_digest(ctx, "fallback", f"fallback#{phone}", _who(ctx.sender, phone), why)
        ctx.send(phone, say(HELD_BACK_TEXTS, language), suffix="told")
        return finish(
            ctx,
            Lane.ESCALATE,
            target=target,
            note=f"fallback ({short(why, 120)}): {_CAP_REACHED}, a line in the digest of "
            f"{hour:%H:%M} UTC instead of a page; the sender told it goes with the next update",
        )
    page = ctx.send(
        _phone(recipient),
        say(
            FALLBACK_PAGE,
            "en",
            who=_from(ctx.sender, phone),
            about=say(PAGE_RE, "en", target=target) if target else "",
            why=short(why, 200) or say(FALL_BACK_WHY["no_reading"], "en"),
            excerpt=_excerpt(ctx),
            told=say(TOLD_FOLLOW_UP, "en"),
        ),
        suffix="page",
        cap="pages",
    )
    assert page is not None  # charged above: may_send said it goes
    _paged(ctx, page.sid, "fallback", "info", recipient)
    told = ctx.send(phone, say(FOLLOW_UP, language), suffix="told")
    how = "told a person will follow up" if told is not None else "not told (not sent)"
    return finish(
        ctx,
        Lane.ESCALATE,
        target=target,
        note=f"fallback ({short(why, 120)}): paged {_paged_whom(recipient)}; the sender {how}",
    )


def _preferred(ctx: LaneContext) -> str | None:
    return ctx.sender.language if ctx.sender is not None else None


def _recipient(ctx: LaneContext, target: str | None) -> PageRecipient:
    """Who this page goes to: by the target WO's property, else the sender's one property."""
    wo = ctx.work_orders.get(target) if target else None
    about = page_property(wo.property_id if wo is not None else None, ctx.sender)
    return page_recipient(ctx.directory, ctx.on_call_pm_phone, about, ctx.now, ctx.sender)


def _phone(recipient: PageRecipient) -> str:
    if recipient.phone is None:
        raise ValueError("an undeliverable page has no number to go to")
    return recipient.phone


def _paged_whom(recipient: PageRecipient) -> str:
    who = recipient.person_id or "the PM"
    return f"{who} at {recipient.phone}, {recipient.why}"


def _undeliverable(
    ctx: LaneContext, phone: str, target: str | None, recipient: PageRecipient, hazard: str | None
) -> LaneOutcome:
    """No one to page: recorded and alarmed, never sent into nothing. An emergency's safety
    advice (``hazard`` not None) still goes, saying no one was alerted (that would be untrue)."""
    safety = ""
    if hazard is not None:
        language = advice_language(_preferred(ctx), ctx.package.text)
        kind, advice = safety_instructions(hazard, ctx.package.text, language)
        then = in_language(UNREACHED_TEXTS, language)
        advised = ctx.send(phone, f"{advice} {then}", suffix=SAFETY_SUFFIX, essential=True)
        how = "sent" if advised is not None else "not sent"
        safety = f"; safety instructions {how} ({kind}, {language})"
    line = undeliverable(recipient, "the page", package_id=ctx.package.package_id)
    return finish(ctx, Lane.ESCALATE, target=target, note=f"{line}{safety}; contexts kept")


def _excerpt(ctx: LaneContext) -> str:
    """What a page quotes of the sender's words: one line, at most PAGE_EXCERPT_CHARS."""
    return short(" ".join(ctx.package.text.split()), PAGE_EXCERPT_CHARS)


def _fold(ctx: LaneContext, phone: str) -> LaneOutcome | None:
    """An unknown number's repeat emergency within the fold window: folded into the page its
    first one sent (no new page, no new safety text), recorded with that page's SID and time.
    None when this is the number's first emergency in the window (or a re-run of it)."""
    if ctx.throttle is None:
        return None
    key = emergency_window_key(phone)
    holder = ctx.throttle.claim(key, ctx.idempotency_key, ctx.now, ctx.fold_seconds)
    if holder is None:
        return None
    window = ctx.throttle.window(key)
    if window is not None and window.page_sid is not None and window.paged_at is not None:
        ctx.folded_into = (window.page_sid, window.paged_at)
        into = f"the emergency page {window.page_sid} sent {window.paged_at:%H:%M:%S} UTC"
    elif window is not None and window.digest_hour is not None:
        into = f"the digest line of {window.digest_hour:%H:%M} UTC ({_CAP_REACHED})"
    else:
        # The first emergency's page is still going out (its package escalates alongside
        # this one): the step is retried, and folds into that page once it has its SID. Were
        # the first to fail instead, this one fails open: the PM is paged, the sender advised.
        raise TransientError(f"{holder}: the first emergency page of this number is still going")
    return finish(
        ctx,
        Lane.ESCALATE,
        status="skipped",
        note=f"folded into {into}: a repeat from this unknown number within "
        f"{ctx.fold_seconds // 60} min; no new page, no new safety text",
    )


def _to_digest(ctx: LaneContext, kind: DigestKind, subject: str, who: str, why: str) -> datetime:
    """Add this action to the hour's digest instead of a page; the hour it joined."""
    if ctx.digest is None:
        raise ValueError("no digest is wired: a page cannot become a digest line")
    return ctx.digest.add(
        DigestEntry(
            subject=short(subject, 120),
            kind=kind,
            who=short(who, 120),
            excerpt=short(" ".join(ctx.package.text.split()), DIGEST_EXCERPT_CHARS),
            why=why,
            package_id=ctx.package.package_id,
            messages=len(ctx.package.messages),
            at=ctx.now,
        )
    )


def _break_in(ctx: LaneContext, phone: str, reason: str, recipient: PageRecipient) -> LaneOutcome:
    """The guards tripped (seed 003): the PM is brought in once with the trail (a page, or past
    the daily page cap a line of the hour's digest), and the party is told a person is on it
    instead of being asked the same thing again."""
    sender = ctx.sender
    who = _who(sender, phone)
    trail = " | ".join(ctx.queued.trail) if ctx.queued is not None else ""
    if not recipient.deliverable:
        # No one to bring in: nothing tells the party a person is on it (it would not be true).
        line = undeliverable(recipient, "the break-in page", package_id=ctx.package.package_id)
        return finish(ctx, Lane.ESCALATE, note=f"break-in: {line} ({reason}); nothing sent")
    if ctx.may_send("pages", "page", essential=ctx.digest is None):
        page = ctx.send(
            _phone(recipient),
            short(
                say(
                    BREAK_IN_PAGE,
                    "en",
                    who=who,
                    why=short(reason, _HAZARD_CHARS) or say(BREAK_IN_NO_REASON, "en"),
                    excerpt=_excerpt(ctx),
                    trail=trail or say(BREAK_IN_NO_TRAIL, "en"),
                ),
                1200,
            ),
            suffix="page",
            cap="pages",
        )
        assert page is not None  # charged above
        _paged(ctx, page.sid, "guard_tripped", "info", recipient)
        how = f"paged {_paged_whom(recipient)} with the trail"
    else:
        subject = f"break_in#{ctx.package.conversation_id}"
        hour = _to_digest(ctx, "break_in", subject, who, _CAP_REACHED)
        how = f"{_CAP_REACHED}: a line in the digest of {hour:%H:%M} UTC instead of a page"
    ctx.send(phone, in_language(BROUGHT_IN, ctx.sender_language), suffix="told")
    return finish(ctx, Lane.ESCALATE, note=f"break-in: {how} ({reason})")


def _paged(
    ctx: LaneContext, sid: str, reason: str, severity: str, recipient: PageRecipient
) -> None:
    ctx.effect("escalation.paged", sid)
    ctx.event(
        "escalation.paged",
        sid,
        "page",
        to_sha256=body_digest(_phone(recipient)),
        reason=reason,
        severity=severity,
        why=recipient.why,
        person_id=recipient.person_id,
    )


def _who(sender: Party | None, phone: str) -> str:
    if sender is None:
        return say(PAGE_WHO_UNKNOWN, "en", phone=phone)
    name = short(sender.name or sender.party_id, 40)
    unit = say(UNIT_SUFFIX, "en", unit=short(sender.unit, 20)) if sender.unit else ""
    return say(PAGE_WHO, "en", name=name, role=sender.role.value, unit=unit)


def _identity(ctx: LaneContext, phone: str) -> LaneOutcome:
    """A number nobody knows: no page of its own and nothing sent to it; one line (per number
    per hour) in the hour's digest, which goes to the PM as one page. Never bound to anyone."""
    hour = _to_digest(ctx, "unknown_number", f"unknown#{phone}", phone, "")
    return finish(
        ctx,
        Lane.ESCALATE,
        note=f"an unknown number: a line in the digest of {hour:%H:%M} UTC (one page an hour "
        "lists them); nothing sent, bound to no one",
    )
