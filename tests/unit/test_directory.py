"""The directory's models and its pure queries: who is on call, which vendors serve."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from maestro.domain.directory import (
    Directory,
    OnCall,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
    on_call_at,
    vendors_for,
)
from maestro.domain.models import PartyRole

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)


def _shift(prop: str, who: str, start_h: int, end_h: int) -> OnCall:
    return OnCall(
        property_id=prop,
        person_id=who,
        starts_at=T0 + timedelta(hours=start_h),
        ends_at=T0 + timedelta(hours=end_h),
    )


def test_the_propertys_own_shift_wins_over_the_all_properties_one() -> None:
    shifts = [_shift("*", "pm-all", 0, 24), _shift("elm", "pm-elm", 2, 6)]
    assert on_call_at(shifts, "elm", T0 + timedelta(hours=3)) == shifts[1]
    assert on_call_at(shifts, "elm", T0 + timedelta(hours=7)) == shifts[0]
    assert on_call_at(shifts, "oak", T0 + timedelta(hours=3)) == shifts[0]
    # A shift ends at ends_at, exclusive: the handover instant belongs to the next one.
    assert on_call_at(shifts, "elm", T0 + timedelta(hours=6)) == shifts[0]
    assert on_call_at(shifts, "elm", T0 + timedelta(hours=30)) is None


def test_vendors_by_trade_property_rank_and_after_hours() -> None:
    a = Vendor(vendor_id="v-a", name="A", phone="+15550001001", trades=(Trade.PLUMBING,), rank=2)
    b = Vendor(
        vendor_id="v-b",
        name="B",
        phone="+15550001002",
        trades=(Trade.PLUMBING, Trade.HVAC),
        property_ids=("elm",),
        rank=1,
        after_hours=True,
    )
    c = Vendor(vendor_id="v-c", name="C", phone="+15550001003", trades=(Trade.PEST,))
    assert vendors_for([a, b, c], "elm", Trade.PLUMBING) == [b, a]
    assert vendors_for([a, b, c], "oak", Trade.PLUMBING) == [a]
    assert vendors_for([a, b, c], "elm", Trade.PLUMBING, after_hours=True) == [b]
    assert vendors_for([a, b, c], "elm", Trade.ROOFING) == []


def test_models_refuse_what_a_directory_cannot_hold() -> None:
    with pytest.raises(ValidationError, match="tenant needs a unit"):
        Person(person_id="t1", role=PersonRole.TENANT, phones=("+15550001001",))
    with pytest.raises(ValidationError, match=r"E\.164"):
        Person(person_id="t1", role=PersonRole.PM, phones=("555-0100",))
    with pytest.raises(ValidationError, match="time zone"):
        Property(property_id="elm", name="Elm", timezone="Mars/Olympus")
    with pytest.raises(ValidationError, match="after starts_at"):
        _shift("elm", "pm", 3, 3)
    with pytest.raises(ValidationError):
        Vendor(vendor_id="v", name="V", phone="+15550001001", trades=("carpentry",))  # type: ignore[arg-type]


def test_a_person_with_two_phones_is_one_party_under_each() -> None:
    directory = Directory(
        properties=(Property(property_id="elm", name="Elm Court"),),
        units=(Unit(unit_id="elm-2a", property_id="elm", label="2A"),),
        people=(
            Person(
                person_id="t-ana",
                role=PersonRole.TENANT,
                name="Ana",
                phones=("+15550002001", "+15550002002"),
                unit_id="elm-2a",
                language="es",
            ),
            Person(
                person_id="pm-lee",
                role=PersonRole.PM,
                name="Lee",
                phones=("+15550003001",),
                property_ids=("elm",),
            ),
        ),
    )
    parties = {p.phone: p for p in directory.parties()}
    assert set(parties) == {"+15550002001", "+15550002002", "+15550003001"}
    ana = parties["+15550002002"]
    assert (ana.party_id, ana.role, ana.unit, ana.property_ids, ana.language) == (
        "t-ana",
        PartyRole.TENANT,
        "2A",
        ("elm",),
        "es",
    )
    assert parties["+15550003001"].property_ids == ("elm",)
