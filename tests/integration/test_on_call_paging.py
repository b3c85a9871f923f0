"""Every page goes to the property's on-call PM at that moment, then its default PM, then the
account's fallback number; with no one at all, it is recorded as undeliverable and alarmed
(docs/on-call.md). On the embedded stack, read back from Twilio and the decision log."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.domain.directory import Directory, OnCall, Person, PersonRole, Property, Unit
from maestro.domain.events import DomainEvent, EscalationPaged, body_digest
from maestro.lanes import on_call as on_call_module
from maestro.lanes.escalate import UNREACHED
from maestro.observability import UNDELIVERABLE_PAGE_METRIC
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import seed_directory
from tests.integration.embedded import completion, flush, outcomes, package_id, sms, to_phone

pytestmark = pytest.mark.integration

MIDNIGHT = datetime(2027, 3, 9, 0, 0, tzinfo=UTC)  # 18:00 the evening before, in Chicago
HOUR = 3600

BIRCH = Property(property_id="birch", name="Birch Row", timezone="America/Chicago")
CEDAR = Property(property_id="cedar", name="Cedar Flats", timezone="UTC")


def _tenant(person_id: str, phone: str, unit_id: str) -> Person:
    return Person(person_id=person_id, role=PersonRole.TENANT, phones=(phone,), unit_id=unit_id)


def _pm(person_id: str, phone: str, *properties: str) -> Person:
    return Person(person_id=person_id, role=PersonRole.PM, phones=(phone,), property_ids=properties)


# Birch's default PM is pm-ada (of its own PMs, the lowest id); pm-wren, who manages both
# properties, is on call for birch overnight; pm-roam, a PM of no property of their own, holds
# the all-properties shift in the afternoon (people.csv has no "every property" PM: `*` there
# is an unknown property to the importer).
ADA = _pm("pm-ada", "+13125550201", "birch")
WREN = _pm("pm-wren", "+13125550202", "birch", "cedar")
ROAM = _pm("pm-roam", "+13125550203")
TENANTS = {hour: _tenant(f"t-{hour}", f"+1312555031{hour % 10}", "birch-1") for hour in (1, 14, 20)}
CEDAR_TENANT = _tenant("t-cedar", "+13125550320", "cedar-1")
DIRECTORY = Directory(
    properties=(BIRCH, CEDAR),
    units=(
        Unit(unit_id="birch-1", property_id="birch", label="1"),
        Unit(unit_id="cedar-1", property_id="cedar", label="1"),
    ),
    people=(ADA, WREN, ROAM, *TENANTS.values(), CEDAR_TENANT),
    on_call=(
        OnCall(
            property_id="birch",
            person_id="pm-wren",
            starts_at=MIDNIGHT,
            ends_at=MIDNIGHT + timedelta(hours=12),
        ),
        OnCall(
            property_id="*",
            person_id="pm-roam",
            starts_at=MIDNIGHT + timedelta(hours=12),
            ends_at=MIDNIGHT + timedelta(hours=18),
        ),
    ),
)


@pytest.fixture
def undeliverable_count(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every metric an undeliverable page counts (the embedded stack publishes none)."""
    seen: list[str] = []
    real: Callable[..., None] = on_call_module.count

    def counted(name: str, value: float = 1, **dims: str) -> None:
        seen.append(name)
        real(name, value, **dims)

    monkeypatch.setattr(on_call_module, "count", counted)
    return seen


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack(start=MIDNIGHT + timedelta(minutes=55)) as local:
        seed_directory(local, DIRECTORY)
        yield local


def _gas(stack: LocalStack, phone: str, words: str) -> dict[str, Any]:
    sms(stack, words, sender=phone)
    return flush(stack)


def _page_record(stack: LocalStack, execution: dict[str, Any]) -> tuple[str, EscalationPaged]:
    """The escalation's outcome note (the decision log) and its page's claim (the bus's)."""
    (escalated,) = [o for o in outcomes(stack, execution) if o.lane == "escalate"]
    stack.advance(10)  # the rule delivers the events to the tap
    events = [DomainEvent.model_validate(_detail(e)) for e in stack.domain_events()]
    (paged,) = [
        e for e in events if e.type == "escalation.paged" and e.package_id == package_id(execution)
    ]
    claim = paged.typed_claim()
    assert isinstance(claim, EscalationPaged)
    return escalated.note, claim


def _detail(envelope: dict[str, Any]) -> Any:
    detail = envelope["detail"]
    return json.loads(detail) if isinstance(detail, str) else detail


def test_a_gas_report_pages_the_propertys_on_call_pm_then_the_next_in_line_by_the_hour(
    stack: LocalStack,
) -> None:
    others = {ADA.phones[0], ROAM.phones[0], ON_CALL_PM}

    # 01:00 UTC (19:00 in Chicago): birch's own overnight shift.
    night = _gas(stack, TENANTS[1].phones[0], "there's a gas odour by the boiler cupboard")
    pages = to_phone(stack, WREN.phones[0])
    assert len(pages) == 1
    assert pages[0].startswith("[EMERGENCY]")
    assert not any(to_phone(stack, phone) for phone in others)
    note, claim = _page_record(stack, night)
    assert claim.to_sha256 == body_digest(WREN.phones[0])
    assert claim.person_id == "pm-wren"
    assert claim.why == "on call for birch 18:00–06:00 CST"
    assert "pm-wren" in note
    assert "on call for birch 18:00–06:00 CST" in note

    # 14:00 UTC: birch's shift is over; the all-properties shift answers.
    stack.advance(13 * HOUR)
    afternoon = _gas(stack, TENANTS[14].phones[0], "smells like gas on the landing, strong")
    _, claim = _page_record(stack, afternoon)
    assert (claim.to_sha256, claim.person_id) == (body_digest(ROAM.phones[0]), "pm-roam")
    assert claim.why == "on call for all properties 12:00–18:00 UTC"
    assert len(to_phone(stack, ROAM.phones[0])) == 1

    # 20:00 UTC: no shift at all; birch's default PM, not the account's fallback number.
    stack.advance(6 * HOUR)
    evening = _gas(stack, TENANTS[20].phones[0], "gas hissing from the meter outside 1")
    _, claim = _page_record(stack, evening)
    assert (claim.to_sha256, claim.person_id, claim.why) == (
        body_digest(ADA.phones[0]),
        "pm-ada",
        "default PM of birch",
    )
    assert to_phone(stack, ON_CALL_PM) == []

    # The same hour at cedar, whose only PM manages it with birch: that PM is its default.
    cedar = _gas(stack, CEDAR_TENANT.phones[0], "our kitchen reeks of gas")
    _, claim = _page_record(stack, cedar)
    assert (claim.to_sha256, claim.why) == (body_digest(WREN.phones[0]), "default PM of cedar")


def test_fail_open_pages_whoever_is_on_call_for_the_senders_property(stack: LocalStack) -> None:
    def broken_act(step: str, event: dict[str, Any], call: Callable[[], dict[str, Any]]) -> Any:
        if step == "act":
            raise RuntimeError("act is down")
        return call()

    stack.fault = broken_act
    execution = _gas(stack, TENANTS[1].phones[0], "the back door lock is jammed shut")
    assert execution["status"] == "FAILED"
    (page,) = to_phone(stack, WREN.phones[0])
    assert page.startswith("[FALLBACK] maestro could not finish a package")
    assert to_phone(stack, ON_CALL_PM) == []
    done = completion(stack, execution)
    assert done is not None
    assert done.completed_by == "fail_open"


def test_with_no_on_call_no_pm_and_no_fallback_the_page_is_undeliverable_and_alarmed(
    undeliverable_count: list[str],
) -> None:
    nobody = Directory(
        properties=(BIRCH,),
        units=(Unit(unit_id="birch-1", property_id="birch", label="1"),),
        people=(TENANTS[1],),
    )
    with LocalStack(start=MIDNIGHT, settings={"on_call_pm_phone": ""}) as stack:
        seed_directory(stack, nobody)
        phone = TENANTS[1].phones[0]
        execution = _gas(stack, phone, "gas smell coming up the stairwell")

        # Nothing was paged anywhere: the only text is the tenant's safety advice, which says
        # no one was alerted (it would not be true).
        assert {m.to for m in stack.outbox()} == {phone}
        (advice,) = to_phone(stack, phone)
        assert advice.endswith(UNREACHED)
        (escalated,) = [o for o in outcomes(stack, execution) if o.lane == "escalate"]
        assert escalated.note.startswith(
            "the page undeliverable: no on-call PM, no default PM for birch and no account "
            "fallback number"
        )
        stack.advance(10)
        assert not any(_detail(e)["type"] == "escalation.paged" for e in stack.domain_events())
        assert undeliverable_count.count(UNDELIVERABLE_PAGE_METRIC) >= 1


def test_the_hourly_digest_goes_to_whoever_is_on_call_for_every_property(
    stack: LocalStack,
) -> None:
    stack.advance(12 * HOUR)  # 12:55 UTC: the all-properties shift holds until 18:00
    stranger = "+13125550999"
    sms(stack, "hi, is this the leasing office for the new tower?", sender=stranger)
    stack.advance(stack.idle + 1)  # a line of the 13:00 digest
    stack.advance(HOUR)
    (digest,) = to_phone(stack, ROAM.phones[0])
    assert digest.startswith("[INFO] maestro digest")
    assert stranger in digest
    assert to_phone(stack, ON_CALL_PM) == []
