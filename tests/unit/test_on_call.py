"""Who a page goes to (docs/on-call.md): the pure choice, and the property a page is about."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maestro.domain.directory import OnCall, Person, PersonRole
from maestro.domain.models import Party, PartyRole
from maestro.domain.on_call import choose_page_recipient, default_pm, page_property

NIGHT = datetime(2027, 3, 9, 0, 0, tzinfo=UTC)  # 18:00 in Chicago (CST, UTC-6)
FALLBACK = "+16175550342"


def pm(person_id: str, phone: str, *properties: str) -> Person:
    return Person(person_id=person_id, role=PersonRole.PM, phones=(phone,), property_ids=properties)


WREN = pm("pm-wren", "+13125550101", "birch")
OLU = pm("pm-olu", "+13125550102", "birch", "cedar")
ANY = pm("pm-any", "+13125550103", "*")
NIGHT_SHIFT = OnCall(
    property_id="birch", person_id="pm-olu", starts_at=NIGHT, ends_at=NIGHT + timedelta(hours=12)
)


def test_the_on_call_pm_is_paged_and_the_why_says_their_shift_in_the_propertys_hours() -> None:
    chosen = choose_page_recipient(
        "birch",
        shift=NIGHT_SHIFT,
        on_call_person=OLU,
        managers=[WREN, OLU],
        fallback_phone=FALLBACK,
        timezone="America/Chicago",
    )
    assert (chosen.phone, chosen.source, chosen.person_id) == (OLU.phones[0], "on_call", "pm-olu")
    assert chosen.why == "on call for birch 18:00–06:00 CST"
    assert chosen.deliverable


def test_an_all_properties_shift_says_so_and_a_long_one_says_its_days() -> None:
    week = OnCall(
        property_id="*", person_id="pm-any", starts_at=NIGHT, ends_at=NIGHT + timedelta(days=7)
    )
    chosen = choose_page_recipient(
        None, shift=week, on_call_person=ANY, managers=[], fallback_phone=""
    )
    assert chosen.why == "on call for all properties Mar 09 00:00–Mar 16 00:00 UTC"
    assert chosen.phone == ANY.phones[0]


def test_without_a_shift_the_default_pm_is_the_propertys_own_lowest_id_first() -> None:
    # Given in any order, the choice is the same: a PM of the property itself (not one of
    # every property), the lowest person id among them.
    for managers in ([ANY, WREN, OLU], [OLU, ANY, WREN]):
        chosen = choose_page_recipient(
            "birch", shift=None, on_call_person=None, managers=managers, fallback_phone=FALLBACK
        )
        assert (chosen.person_id, chosen.source) == ("pm-olu", "default_pm")
        assert chosen.why == "default PM of birch"
    assert default_pm([ANY, WREN], "cedar") == ANY  # only a PM of every property manages it
    assert default_pm([WREN, OLU], None) is None  # no property: only a PM of every property


def test_a_shift_whose_person_is_no_pm_of_the_directory_is_passed_over_and_said() -> None:
    tenant = Person(
        person_id="pm-olu", role=PersonRole.TENANT, phones=("+13125550199",), unit_id="b-1"
    )
    for person in (None, tenant):
        chosen = choose_page_recipient(
            "birch", shift=NIGHT_SHIFT, on_call_person=person, managers=[WREN], fallback_phone=""
        )
        assert chosen.person_id == "pm-wren"
        assert chosen.why == "default PM of birch (on-call pm-olu is not a PM in the directory)"


def test_then_the_accounts_fallback_then_no_one() -> None:
    fallback = choose_page_recipient(
        "cedar", shift=None, on_call_person=None, managers=[WREN], fallback_phone=FALLBACK
    )
    assert (fallback.phone, fallback.source, fallback.person_id) == (FALLBACK, "fallback", None)
    assert fallback.why == "account fallback number (no on-call or default PM for cedar)"

    nobody = choose_page_recipient(
        "cedar", shift=None, on_call_person=None, managers=[], fallback_phone=""
    )
    assert (nobody.phone, nobody.source, nobody.deliverable) == (None, "undeliverable", False)
    assert nobody.why == ("no on-call PM, no default PM for cedar and no account fallback number")


@pytest.mark.parametrize(
    ("wo_property", "sender_properties", "expected"),
    [
        ("cedar", ("birch",), "cedar"),  # the WO's property first
        (None, ("birch",), "birch"),  # else the sender's one property
        (None, ("birch", "cedar"), None),  # a PM of several names no one property
        (None, ("*",), None),  # nor a vendor of every property
        (None, (), None),
    ],
)
def test_the_property_of_a_page(
    wo_property: str | None, sender_properties: tuple[str, ...], expected: str | None
) -> None:
    sender = Party(
        party_id="p-1", role=PartyRole.TENANT, phone="+13125550150", property_ids=sender_properties
    )
    assert page_property(wo_property, sender) == expected
    assert page_property(wo_property, None) == wo_property


def test_the_longest_ids_still_make_a_why() -> None:
    long_property, long_person = "p" * 64, "q" * 64
    shift = NIGHT_SHIFT.model_copy(update={"property_id": long_property, "person_id": long_person})
    nobody = choose_page_recipient(
        long_property, shift=shift, on_call_person=None, managers=[], fallback_phone=""
    )
    assert long_property in nobody.why
    assert long_person in nobody.why
