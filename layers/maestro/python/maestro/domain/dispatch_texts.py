"""Every text a dispatch run sends, in English and Spanish.

Each says only what is so when it is sent: an offer says how long it stays open (the offer's
wait times out then) and exactly how to answer it; an offer names the property and the unit and
nothing more (the address and the tenant's access details go to the vendor who accepts); the
tenant hears who accepted, not a time nobody has set. Each fits in MAX_TEXT_CHARS (two SMS
segments), the page to the PM in MAX_PAGE_CHARS: what does not fit is the tenant's own words,
cut with "…", never the WO id or how to answer.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from maestro.domain.common import truncate
from maestro.domain.directory import Property, Vendor
from maestro.domain.dispatch import DispatchRun, Judgment, OfferOutcome
from maestro.domain.fixed_texts import (
    APPROVE,
    APPROVE_JOB,
    APPROVE_UNIT,
    ASSIGNED_NO_ACCESS,
    ASSIGNED_TO_VENDOR,
    HOURS,
    LAPSED,
    MINUTES,
    NO_VENDOR_ANSWERED,
    NO_VENDOR_ASKED,
    NO_VENDOR_NTE,
    NO_VENDOR_OUTCOME,
    NO_VENDOR_PAGE,
    NO_VENDOR_PROPERTY,
    NO_VENDOR_TRAIL,
    NO_VENDOR_UNIT,
    OFFER,
    ONE_HOUR,
    ONE_MINUTE,
    PLACE_UNIT,
    PRIORITY,
    SOME_PROPERTY,
    SUMMARY_AFTER_COLON,
    SUMMARY_IN_PARENS,
    TRADE,
    VENDOR_COMING,
    WITHDRAWN,
    WITHDRAWN_HEAD,
    WITHDRAWN_SAID,
    say,
)
from maestro.domain.models import Urgency, WorkOrder, WorkOrderStatus

__all__ = [
    "MAX_PAGE_CHARS",
    "MAX_TEXT_CHARS",
    "approval_text",
    "assigned_vendor_text",
    "lapsed_text",
    "no_vendor_page",
    "offer_text",
    "tenant_coming_text",
    "withdrawn_text",
]

MAX_TEXT_CHARS = 320
"""A text to a vendor, tenant or PM: two SMS segments at most."""

MAX_PAGE_CHARS = 600
"""The page to the on-call PM carries the trail: it may run longer."""

_MIN_SUMMARY = 20
"""Below this a summary says nothing: left out rather than cut to a stub."""


def _fit(build: Callable[[str], str], summary: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``build(summary)`` within ``limit``: the summary is cut to the room the rest leaves (or
    left out when that room is too small), the rest is kept whole."""
    room = limit - len(build(""))
    if room >= _MIN_SUMMARY:
        return truncate(build(truncate(summary, room)), limit)
    return truncate(build(""), limit)


def _duration(seconds: int, language: str) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return say(ONE_HOUR, language) if hours == 1 else say(HOURS, language, n=hours)
    minutes = max(1, round(seconds / 60))
    return say(ONE_MINUTE, language) if minutes == 1 else say(MINUTES, language, n=minutes)


def _place(property: Property | None, unit_label: str | None, language: str) -> str:
    name = truncate(property.name, 60) if property is not None else None
    unit = truncate(unit_label, 30) if unit_label else None
    place = name or say(SOME_PROPERTY, language)
    return say(PLACE_UNIT, language, place=place, unit=unit) if unit else place


def _kind(judgment: Judgment, language: str) -> str:
    return say(PRIORITY[judgment.priority.value], language) + say(
        TRADE[judgment.trade.value], language
    )


def offer_text(
    wo: WorkOrder,
    vendor: Vendor,
    property: Property | None,
    unit_label: str | None,
    judgment: Judgment,
    index: int,
    language: str,
) -> str:
    """The job offered to ``vendor``: what, for how much, where (the property and the unit only:
    the address and access details come after acceptance), how long it is open, how to answer.
    ``index`` (which offer this is) is not told: a vendor is not told they were not first."""
    del index
    kind = _kind(judgment, language)
    place = _place(property, unit_label or wo.unit, language)
    open_for = _duration(judgment.offer_timeout_seconds, language)
    name = truncate(vendor.name, 40)

    def build(summary: str) -> str:
        what = say(SUMMARY_AFTER_COLON, language, summary=summary) if summary else ""
        return say(
            OFFER,
            language,
            name=name,
            wo_id=wo.wo_id,
            kind=kind,
            nte=judgment.nte_usd,
            what=what,
            place=place,
            open_for=open_for,
        )

    return _fit(build, wo.summary)


def assigned_vendor_text(
    wo: WorkOrder,
    property: Property | None,
    unit_label: str | None,
    access_notes: Sequence[str],
    language: str,
) -> str:
    """To the vendor who accepted: the job is theirs, the address, and what the tenant said
    about access, pets and times (``access_notes``, their words, cut to fit)."""
    place = _place(property, unit_label or wo.unit, language)
    address = truncate(property.address, 100) if property is not None and property.address else ""
    where = f"{place} ({address})" if address else place
    notes = " / ".join(" ".join(note.split()) for note in access_notes if note.strip())

    def build(said: str) -> str:
        if said:
            return say(ASSIGNED_TO_VENDOR, language, wo_id=wo.wo_id, where=where, said=said)
        return say(ASSIGNED_NO_ACCESS, language, wo_id=wo.wo_id, where=where)

    if not notes:
        return truncate(build(""), MAX_TEXT_CHARS)
    return _fit(build, notes)


def tenant_coming_text(wo: WorkOrder, vendor: Vendor, language: str) -> str:
    """To the tenant: who accepted the job, and what is next (the visit's time, not set yet)."""
    name = truncate(vendor.name, 40)

    def build(summary: str) -> str:
        what = say(SUMMARY_IN_PARENS, language, summary=summary) if summary else ""
        return say(VENDOR_COMING, language, name=name, wo_id=wo.wo_id, what=what)

    return _fit(build, wo.summary)


def approval_text(wo: WorkOrder, judgment: Judgment, language: str) -> str:
    """To the PM: approve the job up to its NTE, YES or NO, with what it is."""
    job = say(APPROVE_JOB, language, kind=_kind(judgment, language))
    job = job[:1].upper() + job[1:]
    unit = say(APPROVE_UNIT, language, unit=truncate(wo.unit, 30)) if wo.unit else ""

    def build(summary: str) -> str:
        what = say(SUMMARY_AFTER_COLON, language, summary=summary) if summary else ""
        return say(
            APPROVE, language, wo_id=wo.wo_id, nte=judgment.nte_usd, job=job, unit=unit, what=what
        )

    return _fit(build, wo.summary)


def withdrawn_text(wo: WorkOrder, reason: str, language: str) -> str:
    """To the vendor whose offer was open when the WO closed: the offer is withdrawn. The WO's
    own status says why when it is final; else ``reason`` (English; Spanish says it is no
    longer open), else "is closed"."""
    said = truncate(" ".join(reason.split()), 120)
    if wo.status in (WorkOrderStatus.CANCELLED, WorkOrderStatus.COMPLETED):
        head = say(WITHDRAWN_HEAD[wo.status.value], language, wo_id=wo.wo_id)
    elif said and language == "en":
        head = say(WITHDRAWN_SAID, language, wo_id=wo.wo_id, said=said)
    else:
        head = say(WITHDRAWN_HEAD["closed"], language, wo_id=wo.wo_id)
    return truncate(say(WITHDRAWN, language, head=head), MAX_TEXT_CHARS)


def lapsed_text(wo: WorkOrder, language: str) -> str:
    """To a vendor whose offer timed out: it is closed now, an answer no longer takes it."""
    return say(LAPSED, language, wo_id=wo.wo_id)


def _why_no_vendor(run: DispatchRun) -> tuple[str, str]:
    """Which ``NO_VENDOR_PAGE`` says why, and the trade it names ("" when none)."""
    judgment = run.judgment
    if run.approval == "refused":
        return "refused", ""
    if run.approval == "timed_out":
        return "approval_timed_out", ""
    if judgment is not None and not judgment.vendors:
        # After hours, only urgent work was limited to after-hours vendors (judge).
        limited = judgment.after_hours and judgment.priority is not Urgency.ROUTINE
        return ("no_trade_after_hours" if limited else "no_trade"), judgment.trade.value
    if run.offers:
        return "none_accepted", ""
    return "none_offered", ""


def _outcome(outcome: OfferOutcome) -> str:
    return say(NO_VENDOR_OUTCOME[outcome], "en")


def no_vendor_page(wo: WorkOrder, run: DispatchRun, trail: Sequence[str]) -> str:
    """To the on-call PM: the WO has no vendor, why, who was asked and how each answered, and
    as much of the trail as fits (the newest last), within MAX_PAGE_CHARS. Its wording is the
    fixed texts' (``NO_VENDOR_*``, English only: a page only the PM reads)."""
    judgment = run.judgment
    about = ", ".join(
        part
        for part in (
            judgment.priority.value if judgment else wo.urgency.value,
            judgment.trade.value if judgment else None,
            say(NO_VENDOR_NTE, "en", nte=judgment.nte_usd) if judgment else None,
            say(NO_VENDOR_PROPERTY, "en", property=wo.property_id) if wo.property_id else None,
            say(NO_VENDOR_UNIT, "en", unit=truncate(wo.unit, 30)) if wo.unit else None,
        )
        if part
    )
    names = {v.vendor_id: v.name for v in judgment.vendors} if judgment else {}
    asked = "; ".join(
        say(
            NO_VENDOR_ANSWERED,
            "en",
            name=truncate(names.get(o.vendor_id, o.vendor_id), 40),
            outcome=_outcome(o.outcome),
        )
        for o in run.offers
    )
    why, trade = _why_no_vendor(run)
    head = say(
        NO_VENDOR_PAGE[why],
        "en",
        wo_id=wo.wo_id,
        trade=trade,
        about=about,
        summary=truncate(wo.summary, 120),
    ) + (" " + say(NO_VENDOR_ASKED, "en", asked=asked) if asked else "")
    head = truncate(head, MAX_PAGE_CHARS)
    lines = [" ".join(line.split()) for line in trail if line.strip()]
    room = MAX_PAGE_CHARS - len(head) - len(" " + say(NO_VENDOR_TRAIL, "en", trail=""))
    kept: list[str] = []
    # The newest lines matter most: walk back from the end while they fit.
    for line in reversed(lines):
        piece = truncate(line, 160)
        if len(" | ".join([piece, *kept])) > room:
            break
        kept.insert(0, piece)
    if not kept:
        return head
    return f"{head} " + say(NO_VENDOR_TRAIL, "en", trail=" | ".join(kept))
