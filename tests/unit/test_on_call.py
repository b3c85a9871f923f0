"""Who a page goes to (docs/on-call.md): the pure choice, and the property a page is about."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from builders import T0, TENANT_PHONE, act, package

from maestro.domain.digest import DigestEntry
from maestro.domain.directory import (
    Directory,
    OnCall,
    Person,
    PersonRole,
)
from maestro.domain.models import Party, PartyRole, WorkOrder
from maestro.domain.on_call import choose_page_recipient, default_pm, page_property
from maestro.lanes import execute
from maestro.lanes import on_call as on_call_lanes
from maestro.lanes.context import LaneContext
from maestro.observability import UNDELIVERABLE_PAGE_METRIC
from maestro.pipeline.digest import DigestDeps, DigestSender
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDigest,
    InMemoryDirectory,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

NIGHT = datetime(2027, 3, 9, 0, 0, tzinfo=UTC)  # 18:00 in Chicago (CST, UTC-6)
FALLBACK = "+16175550342"
DAY = timedelta(days=1)


def pm(person_id: str, phone: str, *properties: str) -> Person:
    return Person(person_id=person_id, role=PersonRole.PM, phones=(phone,), property_ids=properties)


WREN = pm("pm-wren", "+13125550101", "birch")
OLU = pm("pm-olu", "+13125550102", "birch", "cedar")
ANY = pm("pm-any", "+13125550103", "cedar")
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
    # Given in any order, the choice is the same: a PM of the property, the lowest person id
    # among them (pm-any manages cedar alone).
    for managers in ([ANY, WREN, OLU], [OLU, ANY, WREN]):
        chosen = choose_page_recipient(
            "birch", shift=None, on_call_person=None, managers=managers, fallback_phone=FALLBACK
        )
        assert (chosen.person_id, chosen.source) == ("pm-olu", "default_pm")
        assert chosen.why == "default PM of birch"
    assert default_pm([ANY, WREN], "cedar") == ANY
    assert default_pm([ANY, WREN, OLU], None) is None  # no property: no default PM


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


def test_the_escalate_lane_pages_by_the_target_wos_property_before_the_senders() -> None:
    # The sender is a tenant of birch; the WO the page is about is at cedar (a tenant who
    # moved, a WO filed for a unit next door): the page goes to cedar's PM.
    sender = Party(
        party_id="t-1", role=PartyRole.TENANT, phone=TENANT_PHONE, property_ids=("birch",)
    )
    cedar_wo = WorkOrder(
        wo_id="WO-77",
        tenant_id="t-1",
        property_id="cedar",
        summary="water under the boiler",
        created_at=T0,
        updated_at=T0,
    )
    messenger = RecordingMessenger()
    directory = InMemoryDirectory(Directory(people=(WREN, pm("pm-cy", "+13125550104", "cedar"))))

    def ctx(target: str | None, key: str) -> LaneContext:
        pkg = package("water is pouring from the boiler onto the outlets")
        return LaneContext(
            package=pkg,
            sender=sender,
            open_contexts=(),
            action_index=0,
            idempotency_key=key,
            work_orders=InMemoryWorkOrderStore([cedar_wo]),
            pending=InMemoryPendingStore(),
            parties=InMemoryPartyDirectory([]),
            messenger=messenger,
            on_call_pm_phone=FALLBACK,
            now=T0,
            timeline=InMemoryTimeline(),
            directory=directory,
        )

    about_wo = execute(
        act("escalate", "WO-77", reason="emergency", hazard="water"), ctx("WO-77", "k1")
    )
    assert len(messenger.to("+13125550104")) == 1  # cedar's PM
    assert "pm-cy" in about_wo.note
    assert "default PM of cedar" in about_wo.note
    about_sender = execute(act("escalate", reason="emergency", hazard="water"), ctx(None, "k2"))
    assert len(messenger.to(WREN.phones[0])) == 1  # birch's (the sender's) PM
    assert "default PM of birch" in about_sender.note
    assert messenger.to(FALLBACK) == []


def test_a_digest_with_no_one_to_page_is_left_due_and_goes_once_someone_is_on_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted: list[str] = []
    monkeypatch.setattr(on_call_lanes, "count", lambda name, *_a, **_k: counted.append(name))
    hour = datetime(2027, 3, 9, 2, 0, tzinfo=UTC)
    digest, messenger, bus = InMemoryDigest(), RecordingMessenger(), InMemoryBus()
    digest.add(
        DigestEntry(
            subject="unknown#+13125550999",
            kind="unknown_number",
            who="+13125550999",
            excerpt="is this the leasing office?",
            package_id="pkg-1",
            at=hour + timedelta(minutes=10),
        )
    )
    clock = FixedClock(hour + timedelta(hours=1, minutes=1))
    deps = DigestDeps(digest=digest, messenger=messenger, bus=bus, clock=clock, on_call_pm_phone="")
    assert DigestSender(deps).run().pages == ()
    assert counted == [UNDELIVERABLE_PAGE_METRIC]
    assert messenger.sent == []
    assert digest.due(clock.now(), 24) == [hour]  # not closed: nothing lost

    # Later, someone is on call for every property: the same hour's page goes to them.
    clock.at = hour + timedelta(hours=3)
    night = OnCall(property_id="*", person_id="pm-any", starts_at=hour, ends_at=hour + DAY)
    deps.directory = InMemoryDirectory(Directory(people=(ANY,), on_call=(night,)))
    report = DigestSender(deps).run()
    assert report.hours == (hour,)
    (page,) = messenger.to(ANY.phones[0])
    assert "+13125550999" in page.body
    (_, paged) = bus.events.values()
    assert paged.claim["why"] == "on call for all properties Mar 09 02:00–Mar 10 02:00 UTC"


def _as_party(person: Person) -> Party:
    return Party(party_id=person.person_id, role=PartyRole.PM, phone=person.phones[0])


def test_the_one_reporting_is_never_paged_about_their_own_text() -> None:
    # Olu is on call and reports it: the default PM (Wren) is paged, and the why says why.
    chosen = choose_page_recipient(
        "birch",
        shift=NIGHT_SHIFT,
        on_call_person=OLU,
        managers=[WREN, OLU],
        fallback_phone=FALLBACK,
        reporter=_as_party(OLU),
    )
    assert (chosen.person_id, chosen.source) == ("pm-wren", "default_pm")
    assert chosen.why == "default PM of birch (on-call pm-olu is the one reporting)"
    # Wren, birch's default PM, reports with no shift on: the next PM of birch, Olu.
    chosen = choose_page_recipient(
        "birch",
        shift=None,
        on_call_person=None,
        managers=[WREN, OLU],
        fallback_phone=FALLBACK,
        reporter=_as_party(WREN),
    )
    assert chosen.person_id == "pm-olu"
    # The only PM reports: the fallback number, unless it is their own phone too.
    only = choose_page_recipient(
        "birch",
        shift=None,
        on_call_person=None,
        managers=[WREN],
        fallback_phone=FALLBACK,
        reporter=_as_party(WREN),
    )
    assert (only.phone, only.source) == (FALLBACK, "fallback")
    own = choose_page_recipient(
        "birch",
        shift=None,
        on_call_person=None,
        managers=[WREN],
        fallback_phone=WREN.phones[0],
        reporter=_as_party(WREN),
    )
    assert own.source == "undeliverable"
