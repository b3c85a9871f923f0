"""The directory on DynamoDB: what the pipeline reads, and what the importer writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.domain.directory import (
    Directory,
    OnCall,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
)
from tests.integration.conftest import AwsEnv

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)


def test_entities_round_trip_and_the_pipelines_reads_answer(aws: AwsEnv) -> None:
    store = DynamoDirectory(aws.dynamodb, aws.table_names["directory"])
    elm = Property(property_id="elm", name="Elm Court", timezone="America/Chicago")
    unit = Unit(unit_id="elm-2a", property_id="elm", label="2A")
    pm = Person(
        person_id="pm-lee", role=PersonRole.PM, phones=("+15550003001",), property_ids=("elm",)
    )
    plumber = Vendor(
        vendor_id="v-p", name="Pipes", phone="+15550001001", trades=(Trade.PLUMBING,), rank=2
    )
    shift = OnCall(
        property_id="elm", person_id="pm-lee", starts_at=T0, ends_at=T0 + timedelta(hours=12)
    )
    everywhere = OnCall(
        property_id="*", person_id="pm-lee", starts_at=T0 - timedelta(days=1), ends_at=T0
    )
    for entity in (elm, unit, pm, plumber, shift, everywhere):
        store.put(entity)

    assert store.property("elm") == elm
    assert store.unit("elm-2a") == unit
    assert store.person("pm-lee") == pm
    assert store.person("nobody") is None
    assert store.on_call_at("elm", T0 + timedelta(hours=1)) == shift
    assert store.on_call_at("elm", T0 - timedelta(hours=1)) == everywhere
    assert store.vendors_for("elm", Trade.PLUMBING) == [plumber]

    # A vendor re-ranked and narrowed: its old coverage rows go with the old fields.
    narrowed = plumber.model_copy(update={"rank": 1, "trades": (Trade.HVAC,)})
    store.put(narrowed)
    assert store.vendors_for("elm", Trade.PLUMBING) == []
    assert store.vendors_for("elm", Trade.HVAC) == [narrowed]

    assert store.snapshot() == Directory(
        properties=(elm,),
        units=(unit,),
        people=(pm,),
        vendors=(narrowed,),
        on_call=(everywhere, shift),
    )
    store.delete(narrowed)
    assert store.vendors_for("elm", Trade.HVAC) == []
    assert store.vendor("v-p") is None


def test_the_pms_of_a_property_are_one_read_and_follow_the_pms_properties(aws: AwsEnv) -> None:
    store = DynamoDirectory(aws.dynamodb, aws.table_names["directory"])
    ash = Person(
        person_id="pm-ash", role=PersonRole.PM, phones=("+15550003101",), property_ids=("oak",)
    )
    bea = Person(
        person_id="pm-bea",
        role=PersonRole.PM,
        phones=("+15550003102",),
        property_ids=("oak", "elm"),
    )
    roving = Person(
        person_id="pm-cy", role=PersonRole.PM, phones=("+15550003103",), property_ids=("oak", "elm")
    )
    for person in (roving, bea, ash):
        store.put(person)

    assert store.managers_of("oak") == [ash, bea, roving]
    assert store.managers_of("elm") == [bea, roving]
    assert store.managers_of(None) == []  # a PM manages the properties they list
    assert store.managers_of("pine") == []

    # A PM who gives up a property is no longer among its PMs; one deleted, nowhere.
    moved = bea.model_copy(update={"property_ids": ("pine",)})
    store.put(moved)
    assert store.managers_of("elm") == [roving]
    assert store.managers_of("pine") == [moved]
    store.delete(ash)
    assert store.managers_of("oak") == [roving]
    assert store.snapshot().people == (moved, roving)
