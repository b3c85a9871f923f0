"""Reading the directory for a page's recipient (the choice itself is
:func:`maestro.domain.on_call.choose_page_recipient`), and what an undeliverable page costs.

Used by every page: the escalate lane's, fail-open's and the hourly digest's (docs/on-call.md).
"""

from __future__ import annotations

from datetime import datetime

from maestro.domain.directory import ALL_PROPERTIES, OnCall, Person, PersonRole
from maestro.domain.models import Party
from maestro.domain.on_call import PageRecipient, choose_page_recipient, is_reporter
from maestro.observability import UNDELIVERABLE_PAGE_METRIC, count, logger
from maestro.ports.stores import DirectoryReader

__all__ = ["page_recipient", "undeliverable"]


def page_recipient(
    directory: DirectoryReader | None,
    fallback_phone: str,
    property_id: str | None,
    at: datetime,
    reporter: Party | None = None,
) -> PageRecipient:
    """Who a page about ``property_id`` at ``at`` goes to. Reads only what the choice needs:
    the shift (and its PM), and the property's PMs only when no shift's PM answers. Without a
    directory (a deployment that has none wired), the fallback number alone."""
    shift: OnCall | None = None
    person: Person | None = None
    managers: list[Person] = []
    timezone = "UTC"
    if directory is not None:
        shift = directory.on_call_at(property_id, at)
        if shift is not None:
            person = directory.person(shift.person_id)
            # A shift's hours are said in its property's zone (an all-properties one: UTC).
            found = (
                None
                if shift.property_id == ALL_PROPERTIES
                else directory.property(shift.property_id)
            )
            timezone = found.timezone if found is not None else "UTC"
        if person is None or person.role is not PersonRole.PM or is_reporter(reporter, person):
            managers = directory.managers_of(property_id)
    return choose_page_recipient(
        property_id,
        shift=shift,
        on_call_person=person,
        managers=managers,
        fallback_phone=fallback_phone,
        timezone=timezone,
        reporter=reporter,
    )


def undeliverable(recipient: PageRecipient, what: str, **context: str) -> str:
    """Count and log a page that had no one to go to (the alarm's metric); the line that
    records it where the outcome is read."""
    count(UNDELIVERABLE_PAGE_METRIC)
    logger.error(
        "page undeliverable",
        extra={"page": what, "why": recipient.why, "property_id": recipient.property_id, **context},
    )
    return f"{what} undeliverable: {recipient.why}"
