"""Who a page goes to, and why (docs/on-call.md). Pure: the reads are the caller's.

A page is about one property, or none:

1. the property's on-call PM at that moment (its own shift before an all-properties ``*`` one,
   :func:`maestro.domain.directory.on_call_at`);
2. else the property's default PM: of the PMs whose properties include it, the lowest person
   id (deterministic, whatever order the directory returns them in);
3. else the account's fallback number (the ``on_call_pm_phone`` setting; may be empty);
4. else no one: the page is **undeliverable**, recorded and alarmed, never sent into nothing.

Without a property (an unknown number, a PM of several properties), only ``*`` shifts apply,
then the fallback.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from maestro.domain.common import E164, Frozen
from maestro.domain.directory import ALL_PROPERTIES, OnCall, Person, PersonRole
from maestro.domain.models import Party

__all__ = [
    "WHY_CHARS",
    "PageRecipient",
    "PageSource",
    "choose_page_recipient",
    "default_pm",
    "is_reporter",
    "page_property",
]

WHY_CHARS = 300
"""Room for the longest why: two 64-character ids and the words around them."""

PageSource = Literal["on_call", "default_pm", "fallback", "undeliverable"]


class PageRecipient(Frozen):
    """The number a page goes to (None: undeliverable), whose it is, and why it was chosen."""

    phone: E164 | None
    source: PageSource
    why: str = Field(min_length=1, max_length=WHY_CHARS)
    person_id: str | None = None
    property_id: str | None = None

    @property
    def deliverable(self) -> bool:
        return self.phone is not None


def page_property(wo_property_id: str | None, sender: Party | None) -> str | None:
    """The property a page is about: its WO's, else the sender's one property, else none (a
    sender of several properties, or of every one, names no single property)."""
    if wo_property_id:
        return wo_property_id
    if sender is not None and len(sender.property_ids) == 1:
        (only,) = sender.property_ids
        if only != ALL_PROPERTIES:
            return only
    return None


def _scope(property_id: str | None) -> str:
    return property_id if property_id is not None else "all properties"


def default_pm(managers: Iterable[Person], property_id: str | None) -> Person | None:
    """The property's default PM: of the PMs managing it, the lowest person id (none without a
    property: a PM manages the properties they list, never "every property")."""
    candidates = [p for p in managers if p.role is PersonRole.PM and property_id in p.property_ids]
    return min(candidates, key=lambda p: p.person_id) if candidates else None


def is_reporter(reporter: Party | None, person: Person | None) -> bool:
    """Whether ``person`` is the one reporting (by id, or by the phone they texted from)."""
    return (
        reporter is not None
        and person is not None
        and (reporter.party_id == person.person_id or reporter.phone in person.phones)
    )


def _span(shift: OnCall, zone: ZoneInfo) -> str:
    start, end = shift.starts_at.astimezone(zone), shift.ends_at.astimezone(zone)
    fmt = "%b %d %H:%M" if end - start >= timedelta(days=1) else "%H:%M"
    return f"{start.strftime(fmt)}–{end.strftime(fmt)} {end.strftime('%Z')}".strip()


def choose_page_recipient(
    property_id: str | None,
    *,
    shift: OnCall | None,
    on_call_person: Person | None,
    managers: Iterable[Person],
    fallback_phone: str,
    timezone: str = "UTC",
    reporter: Party | None = None,
) -> PageRecipient:
    """Who is paged about ``property_id``: the on-call PM of ``shift`` (``on_call_person`` is
    its person as the directory holds it), else the default PM among ``managers``, else
    ``fallback_phone``, else no one. ``timezone`` (the property's) says the shift's hours.

    Never the ``reporter``: a PM reporting an emergency is not paged about their own text
    (nor told "we've alerted the on-call PM" when that PM is them); the next in line is."""
    skipped = ""
    if shift is not None and is_reporter(reporter, on_call_person):
        skipped = f" (on-call {shift.person_id} is the one reporting)"
        shift = None
    if shift is not None:
        if on_call_person is not None and on_call_person.role is PersonRole.PM:
            shift_scope = (
                "all properties" if shift.property_id == ALL_PROPERTIES else shift.property_id
            )
            return PageRecipient(
                phone=on_call_person.phones[0],
                source="on_call",
                why=f"on call for {shift_scope} {_span(shift, ZoneInfo(timezone))}",
                person_id=on_call_person.person_id,
                property_id=property_id,
            )
        # A shift naming someone the directory no longer holds as a PM is passed over, said.
        skipped = f" (on-call {shift.person_id} is not a PM in the directory)"
    default = default_pm([m for m in managers if not is_reporter(reporter, m)], property_id)
    if default is not None:
        return PageRecipient(
            phone=default.phones[0],
            source="default_pm",
            why=f"default PM of {_scope(property_id)}{skipped}",
            person_id=default.person_id,
            property_id=property_id,
        )
    if fallback_phone and not (reporter is not None and reporter.phone == fallback_phone):
        return PageRecipient(
            phone=fallback_phone,
            source="fallback",
            why=f"account fallback number (no on-call or default PM for {_scope(property_id)})"
            f"{skipped}",
            property_id=property_id,
        )
    return PageRecipient(
        phone=None,
        source="undeliverable",
        why=f"no on-call PM, no default PM for {_scope(property_id)} and no account fallback "
        f"number{skipped}",
        property_id=property_id,
    )
