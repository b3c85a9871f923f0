"""The DynamoDB memory adapters against moto: conditions, indexes, expiry, round trips."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from builders import MARIA, T0, act

from maestro.adapters.ddb import to_item
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_ledger import DynamoLedger, DynamoSweepWatermark
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.actions import Lane, ManageExistingParams
from maestro.domain.models import Party, PartyRole, Urgency, VisitWindow, WorkOrder, WorkOrderStatus
from maestro.domain.records import (
    ActionOutcomeRecord,
    Disposition,
    MaestroDecision,
    MaestroState,
    OutstandingItem,
    PackageCompletion,
    PendingClarification,
    PendingConfirmation,
    SweepMark,
    outcome_record_id,
)
from maestro.domain.timeline import NoteEntry, RatingEntry, StatusEntry, VisitEntry
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro.tables import DECISIONS, LEDGER, PARTIES, PENDING, STATE, WORK_ORDERS

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

VENDOR = "vendor-bob"


# --------------------------------------------------------------------------------- builders


def decision(
    index: int = 0,
    *,
    package_id: str = "pkg-1",
    conversation_id: str = "conv-1",
    at: datetime = T0,
    reason: str = "",
    stage: str = "dispose",
) -> MaestroDecision:
    return MaestroDecision.model_validate(
        {
            "decision_id": f"{package_id}#{stage}#{index}",
            "package_id": package_id,
            "conversation_id": conversation_id,
            "stage": stage,
            "index": index,
            "disposition": Disposition.QUEUED,
            "lane": "relay_to_open_wo",
            "target_wo_id": "WO-204",
            "command": act("relay_to_open_wo", "WO-204", confidence=0.83),
            "context_relation": "continues",
            "open_context_count": 2,
            "bound_context_id": "WO-204",
            "confidence": 0.8,
            "threshold": 0.8,
            "votes": {"relay_to_open_wo:WO-204": 4, "clarify": 1},
            "samples": 5,
            "valid_samples": 5,
            "entropy_bits": 0.7219280948873623,
            "model": "scripted",
            "input_tokens": 1234,
            "output_tokens": 56,
            "reason": reason,
            "idempotency_key": f"{package_id}#{index}",
            "recorded_at": at,
        }
    )


def work_order(wo_id: str = "WO-1", vendor_id: str | None = VENDOR, **changes: Any) -> WorkOrder:
    return WorkOrder.model_validate(
        {
            "wo_id": wo_id,
            "tenant_id": MARIA.party_id,
            "vendor_id": vendor_id,
            "unit": "3B",
            "summary": "leak under the kitchen sink",
            "category": "plumbing",
            "urgency": Urgency.URGENT,
            "created_at": T0,
            "updated_at": T0,
            **changes,
        }
    )


def state(version: int = 1, note: str = "") -> MaestroState:
    return MaestroState(
        wo_id="WO-1",
        version=version,
        urgency=Urgency.URGENT,
        outstanding=(OutstandingItem(kind="availability", since=T0, note=note),),
        last_package_id="pkg-1",
        last_decision_id="pkg-1#dispose#0",
        updated_at=T0 + timedelta(minutes=version),
    )


def clarification(
    cid: str,
    party_id: str | None = MARIA.party_id,
    *,
    asked: timedelta = timedelta(0),
    ttl: timedelta = timedelta(hours=72),
) -> PendingClarification:
    return PendingClarification(
        clarification_id=cid,
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=party_id,
        question="Which one: the kitchen sink (WO-1) or the bathroom fan (WO-2)?",
        candidate_ids=("WO-1", "WO-2"),
        candidate_lines=("WO-1: kitchen sink leak", "WO-2: bathroom fan"),
        asked_at=T0 + asked,
        expires_at=T0 + asked + ttl,
    )


def confirmation(
    cid: str, *, held: timedelta = timedelta(0), ttl: timedelta = timedelta(hours=1)
) -> PendingConfirmation:
    return PendingConfirmation(
        confirmation_id=cid,
        package_id="pkg-1",
        party_id=MARIA.party_id,
        call=ManageExistingParams(operation="cancel", wo_ids=("WO-1",), request="cancel it"),
        proposal="Cancel WO-1 (kitchen sink leak)? Reply YES to confirm.",
        held_at=T0 + held,
        expires_at=T0 + held + ttl,
    )


def raw_item(aws: AwsEnv, logical: str, key: dict[str, str]) -> dict[str, Any] | None:
    item = aws.dynamodb.get_item(
        TableName=aws.table_names[logical],
        Key={k: {"S": v} for k, v in key.items()},
        ConsistentRead=True,
    ).get("Item")
    return dict(item) if item else None


@pytest.fixture
def log(aws: AwsEnv) -> DynamoDecisionLog:
    return DynamoDecisionLog(aws.dynamodb, aws.table_names[DECISIONS.logical_name])


@pytest.fixture
def states(aws: AwsEnv) -> DynamoStateStore:
    return DynamoStateStore(aws.dynamodb, aws.table_names[STATE.logical_name])


@pytest.fixture
def wos(aws: AwsEnv) -> DynamoWorkOrderStore:
    return DynamoWorkOrderStore(aws.dynamodb, aws.table_names[WORK_ORDERS.logical_name])


@pytest.fixture
def pending(aws: AwsEnv) -> DynamoPendingStore:
    return DynamoPendingStore(aws.dynamodb, aws.table_names[PENDING.logical_name])


@pytest.fixture
def parties(aws: AwsEnv) -> DynamoPartyDirectory:
    return DynamoPartyDirectory(aws.dynamodb, aws.table_names[PARTIES.logical_name])


# --------------------------------------------------------------------------------- decisions


def test_decision_round_trips_exactly(log: DynamoDecisionLog) -> None:
    original = decision(reason="tenant adds detail to the open leak")
    log.append(original)

    stored = log.get("pkg-1", original.decision_id)

    assert stored is not None
    assert stored.model_dump() == original.model_dump()
    assert log.get("pkg-1", "no-such-decision") is None


def test_appending_an_existing_decision_fails_and_keeps_the_first(log: DynamoDecisionLog) -> None:
    first = decision(reason="first write")
    log.append(first)

    with pytest.raises(AlreadyExistsError):
        log.append(decision(reason="a re-execution trying to overwrite"))

    stored = log.get("pkg-1", first.decision_id)
    assert stored is not None
    assert stored.reason == "first write"
    assert len(log.for_package("pkg-1")) == 1


def test_decision_log_is_append_only_by_construction() -> None:
    public = {name for name in dir(DynamoDecisionLog) if not name.startswith("_")}
    # Only appends (decisions, outcomes, the completion line) and reads: no update, no delete.
    assert public == {
        "append",
        "record_outcome",
        "complete",
        "get",
        "for_package",
        "outcomes_for",
        "completion_for",
        "completed_between",
        "recent",
    }


def test_completions_are_found_by_time_range_across_days(log: DynamoDecisionLog) -> None:
    times = {
        "pkg-a": T0 - timedelta(days=1, minutes=5),
        "pkg-b": T0.replace(hour=0, minute=0),  # midnight: a new day's partition
        "pkg-c": T0,
        "pkg-d": T0 + timedelta(minutes=1),
    }
    for package_id, at in times.items():
        log.complete(
            PackageCompletion(
                record_id=f"{package_id}#completed",
                package_id=package_id,
                conversation_id="conv-1",
                route="reasoning",
                completed_by="persist",
                decisions=1,
                recorded_at=at,
            )
        )
    found = log.completed_between(T0 - timedelta(days=1, minutes=10), T0)
    assert [c.package_id for c in found] == ["pkg-a", "pkg-b"]  # [start, end): pkg-c excluded
    assert [c.package_id for c in log.completed_between(T0, T0 + timedelta(hours=1))] == [
        "pkg-c",
        "pkg-d",
    ]


def _completion(package_id: str, at: datetime) -> PackageCompletion:
    return PackageCompletion(
        record_id=f"{package_id}#completed",
        package_id=package_id,
        conversation_id="conv-1",
        route="reasoning",
        completed_by="persist",
        decisions=1,
        recorded_at=at,
    )


def test_completions_are_read_from_a_mark_on_a_page_at_a_time(log: DynamoDecisionLog) -> None:
    # Two in the same microsecond: the package id orders them, as the index does.
    times = {"pkg-a": T0, "pkg-b": T0, "pkg-c": T0 + timedelta(seconds=1)}
    times |= {"pkg-d": T0 + timedelta(days=1), "pkg-e": T0 + timedelta(days=1, seconds=1)}
    for package_id, at in times.items():
        log.complete(_completion(package_id, at))
    start, end = T0 - timedelta(hours=1), T0 + timedelta(days=2)

    def ids(mark: SweepMark | None, limit: int | None = None) -> list[str]:
        return [c.package_id for c in log.completed_between(start, end, after=mark, limit=limit)]

    assert ids(None, limit=2) == ["pkg-a", "pkg-b"]
    assert ids(SweepMark(recorded_at=T0, package_id="pkg-a")) == [
        "pkg-b",
        "pkg-c",
        "pkg-d",
        "pkg-e",
    ]
    assert ids(SweepMark(recorded_at=T0, package_id="pkg-b"), limit=2) == ["pkg-c", "pkg-d"]
    assert ids(SweepMark(recorded_at=T0 + timedelta(days=1), package_id="pkg-d")) == ["pkg-e"]
    assert ids(SweepMark(recorded_at=times["pkg-e"], package_id="pkg-e")) == []


def test_a_days_completions_spread_over_shards_and_are_read_from_all(aws: AwsEnv) -> None:
    table = aws.table_names[DECISIONS.logical_name]
    log = DynamoDecisionLog(aws.dynamodb, table, completion_shards=4)
    times = {f"pkg-{n:02d}": T0 + timedelta(seconds=n) for n in range(12)}
    for package_id, at in times.items():
        log.complete(_completion(package_id, at))
    # A line written before sharding: the day alone.
    legacy = _completion("pkg-legacy", T0 + timedelta(seconds=5, microseconds=1))
    aws.dynamodb.put_item(
        TableName=table,
        Item=to_item(
            {
                "package_id": legacy.package_id,
                "decision_id": legacy.record_id,
                "record": "completion",
                "doc": legacy.model_dump_json(),
                "completed_day": T0.date().isoformat(),
                "completed_key": f"{legacy.recorded_at.isoformat(timespec='microseconds')}#"
                f"{legacy.package_id}",
            }
        ),
    )
    days = {
        item["completed_day"]["S"]
        for item in aws.dynamodb.scan(TableName=table)["Items"]
        if "completed_day" in item
    }
    assert days == {T0.date().isoformat(), *(f"{T0.date().isoformat()}#{k}" for k in range(4))}
    start, end = T0 - timedelta(hours=1), T0 + timedelta(hours=1)
    in_order = [*list(times)[:6], "pkg-legacy", *list(times)[6:]]
    assert [c.package_id for c in log.completed_between(start, end)] == in_order
    # A page is the first of all shards together, in the index's order.
    page = log.completed_between(start, end, limit=5)
    assert [c.package_id for c in page] == in_order[:5]
    rest = log.completed_between(start, end, after=SweepMark.of(page[-1]))
    assert [c.package_id for c in rest] == in_order[5:]
    sharded = log.completed_between(start, end, unsharded=False)
    assert [c.package_id for c in sharded] == [p for p in in_order if p != "pkg-legacy"]


def test_outcomes_are_read_alone_consistently_or_not(aws: AwsEnv, log: DynamoDecisionLog) -> None:
    log.append(decision(0))
    log.complete(_completion("pkg-1", T0))
    for index in (1, 0):
        log.record_outcome(
            ActionOutcomeRecord(
                record_id=outcome_record_id("pkg-1", index),
                package_id="pkg-1",
                conversation_id="conv-1",
                index=index,
                decision_id=f"pkg-1#dispose#{index}",
                lane=Lane.CLARIFY,
                status="done",
                recorded_at=T0,
            )
        )
    calls: list[dict[str, Any]] = []
    query = aws.dynamodb.query

    def counted(**kwargs: Any) -> Any:
        page = query(**kwargs)
        calls.append({**kwargs, "Count": page["Count"]})
        return page

    aws.dynamodb.query = counted
    assert [o.index for o in log.outcomes_for("pkg-1")] == [0, 1]
    assert [o.index for o in log.outcomes_for("pkg-1", consistent=False)] == [0, 1]
    # The two outcome lines only: neither the decision nor the completion line is read.
    assert [(c["ConsistentRead"], c["Count"]) for c in calls] == [(True, 2), (False, 2)]


def test_the_sweepers_watermark_only_moves_forward(aws: AwsEnv) -> None:
    table = aws.table_names[LEDGER.logical_name]
    watermark = DynamoSweepWatermark(aws.dynamodb, table)
    assert watermark.read() is None
    later = SweepMark(recorded_at=T0, package_id="pkg-b")
    assert watermark.advance(later)
    assert not watermark.advance(SweepMark(recorded_at=T0, package_id="pkg-a"))
    assert not watermark.advance(later)
    assert watermark.read() == later
    assert watermark.advance(SweepMark(recorded_at=T0 + timedelta(microseconds=1), package_id="a"))
    # It lives in the ledger's table, and is not a row of the ledger.
    assert DynamoLedger(aws.dynamodb, table).scan() == []


def test_for_package_orders_by_decision_index(log: DynamoDecisionLog) -> None:
    # Written out of order, with ids whose string order differs from index order (10 < 2).
    for index in (10, 2, 0, 1):
        log.append(decision(index, at=T0 + timedelta(seconds=index)))
    log.append(decision(0, package_id="pkg-other"))

    assert [d.index for d in log.for_package("pkg-1")] == [0, 1, 2, 10]
    assert log.for_package("pkg-missing") == []


def test_recent_returns_the_last_decisions_oldest_first(log: DynamoDecisionLog) -> None:
    # Appended out of time order, across packages, with another conversation mixed in.
    minutes = [7, 1, 5, 3, 9, 2]
    for i, minute in enumerate(minutes):
        log.append(
            decision(
                0, package_id=f"pkg-{minute}", at=T0 + timedelta(minutes=minute), reason=str(i)
            )
        )
    log.append(
        decision(0, package_id="pkg-x", conversation_id="conv-2", at=T0 + timedelta(hours=1))
    )

    last3 = log.recent("conv-1", 3)
    assert [d.recorded_at for d in last3] == [T0 + timedelta(minutes=m) for m in (5, 7, 9)]
    everything = log.recent("conv-1", 100)
    assert [d.package_id for d in everything] == [f"pkg-{m}" for m in sorted(minutes)]
    assert log.recent("conv-1", 0) == []
    assert [d.conversation_id for d in log.recent("conv-2", 5)] == ["conv-2"]


def test_recent_breaks_time_ties_by_decision_id(log: DynamoDecisionLog) -> None:
    for index in (2, 0, 1):
        log.append(decision(index))  # same recorded_at

    assert [d.index for d in log.recent("conv-1", 2)] == [1, 2]


# --------------------------------------------------------------------------------- state


def test_state_round_trips_and_versions_advance(states: DynamoStateStore) -> None:
    assert states.get("WO-1") is None
    states.put(state(1), expected_version=None)
    states.put(state(2, note="after the second package"), expected_version=1)

    stored = states.get("WO-1")
    assert stored is not None
    assert stored.model_dump() == state(2, note="after the second package").model_dump()


def test_state_version_must_follow_the_expected_one(states: DynamoStateStore) -> None:
    with pytest.raises(ValueError, match="version"):
        states.put(state(2), expected_version=None)
    states.put(state(1), expected_version=None)
    with pytest.raises(ValueError, match="version"):
        states.put(state(3), expected_version=1)
    assert states.get("WO-1") == state(1)


def test_stale_state_update_fails_and_leaves_the_item(states: DynamoStateStore) -> None:
    states.put(state(1), expected_version=None)
    states.put(state(2, note="current"), expected_version=1)

    with pytest.raises(StaleVersionError):
        states.put(state(2, note="from a stale read"), expected_version=1)
    with pytest.raises(StaleVersionError):
        states.put(state(1, note="a second creator"), expected_version=None)

    assert states.get("WO-1") == state(2, note="current")


def test_two_writers_racing_from_the_same_version_exactly_one_wins(aws: AwsEnv) -> None:
    table = aws.table_names[STATE.logical_name]
    writer_a = DynamoStateStore(aws.dynamodb, table)
    writer_b = DynamoStateStore(aws.dynamodb, table)
    writer_a.put(state(1), expected_version=None)

    seen_a, seen_b = writer_a.get("WO-1"), writer_b.get("WO-1")
    assert seen_a is not None
    assert seen_b is not None
    outcomes: list[str] = []
    for writer, seen, who in ((writer_a, seen_a, "a"), (writer_b, seen_b, "b")):
        try:
            writer.put(state(seen.version + 1, note=who), expected_version=seen.version)
            outcomes.append(who)
        except StaleVersionError:
            outcomes.append("lost")

    assert sorted(outcomes) == ["a", "lost"]
    assert writer_b.get("WO-1") == state(2, note="a")


# --------------------------------------------------------------------------------- work orders


def test_work_order_round_trips_and_create_is_once_only(wos: DynamoWorkOrderStore) -> None:
    window = VisitWindow(start=T0 + timedelta(days=1), end=T0 + timedelta(days=1, hours=2))
    original = work_order(status=WorkOrderStatus.SCHEDULED, visit=window)
    wos.create(original)

    with pytest.raises(AlreadyExistsError):
        wos.create(work_order(summary="a different job under the same id"))

    stored = wos.get("WO-1")
    assert stored is not None
    assert stored.model_dump() == original.model_dump()
    assert wos.get("WO-missing") is None


def test_stale_work_order_update_fails(wos: DynamoWorkOrderStore) -> None:
    wo = work_order()
    wos.create(wo)
    scheduled = wo.schedule(VisitWindow(start=T0, end=T0 + timedelta(hours=1)), T0)
    wos.update(scheduled, expected_version=1)

    # A writer still holding version 1 loses, and the stored WO is the winner's.
    cancelled = wo.transition(WorkOrderStatus.CANCELLED, T0)
    with pytest.raises(StaleVersionError):
        wos.update(cancelled, expected_version=1)
    assert wos.get("WO-1") == scheduled

    with pytest.raises(ValueError, match="version"):
        wos.update(scheduled, expected_version=2)  # version 2 is not 2 + 1
    with pytest.raises(StaleVersionError):
        wos.update(work_order("WO-never-created", version=2), expected_version=1)


def test_completing_a_work_order_closes_it_for_tenant_and_vendor(
    aws: AwsEnv, wos: DynamoWorkOrderStore
) -> None:
    wo = work_order()
    wos.create(wo)
    assert wos.open_for_party(MARIA.party_id) == [wo]
    assert wos.open_for_party(VENDOR) == [wo]

    started = wo.transition(WorkOrderStatus.IN_PROGRESS, T0 + timedelta(hours=1))
    wos.update(started, expected_version=1)
    done = started.transition(WorkOrderStatus.COMPLETED, T0 + timedelta(hours=2))
    wos.update(done, expected_version=2)

    assert wos.open_for_party(MARIA.party_id) == []
    assert wos.open_for_party(VENDOR) == []
    item = raw_item(aws, WORK_ORDERS.logical_name, {"wo_id": "WO-1"})
    assert item is not None
    assert {i.partition.name for i in WORK_ORDERS.indexes}.isdisjoint(item)
    assert wos.get("WO-1") == done


def test_open_for_party_uses_both_indexes_sorted_and_deduplicated(
    wos: DynamoWorkOrderStore,
) -> None:
    wos.create(work_order("WO-3"))
    wos.create(work_order("WO-1", vendor_id=None))  # no vendor yet: not on the vendor index
    wos.create(work_order("WO-2", tenant_id="tenant-other"))
    # A party both tenant and vendor of one WO (a PM fixing it themselves) sees it once.
    wos.create(work_order("WO-4", tenant_id=VENDOR))
    closed = work_order("WO-5", status=WorkOrderStatus.CANCELLED)
    wos.create(closed)

    assert [w.wo_id for w in wos.open_for_party(MARIA.party_id)] == ["WO-1", "WO-3"]
    assert [w.wo_id for w in wos.open_for_party(VENDOR)] == ["WO-2", "WO-3", "WO-4"]
    assert [w.wo_id for w in wos.open_for_party("tenant-other")] == ["WO-2"]
    assert wos.open_for_party("nobody") == []
    assert wos.get("WO-5") == closed


def test_open_for_property_reads_a_bounded_page_and_counts_the_rest(
    aws: AwsEnv, wos: DynamoWorkOrderStore
) -> None:
    """A PM's contexts and "open" listing: the property's open WOs by id, only ``limit`` of
    them read, with how many are open in all; a closed WO, another property's, or one with no
    property is not on the index."""
    for n in range(1, 6):
        wos.create(work_order(f"WO-{n}", property_id="prop-elm"))
    wos.create(work_order("WO-6", property_id="prop-oak"))
    wos.create(work_order("WO-7"))  # no property recorded
    wos.create(work_order("WO-8", property_id="prop-elm", status=WorkOrderStatus.CANCELLED))

    page, total = wos.open_for_property("prop-elm", 2)
    assert ([w.wo_id for w in page], total) == (["WO-1", "WO-2"], 5)
    assert wos.open_for_property("prop-oak", 10) == ([wos.get("WO-6")], 1)
    assert wos.open_for_property("prop-none", 10) == ([], 0)

    # Closing one takes it off the index (a whole-item put drops the attribute).
    first = wos.get("WO-1")
    assert first is not None
    wos.update(first.transition(WorkOrderStatus.CANCELLED, T0 + timedelta(hours=1)), 1)
    page, total = wos.open_for_property("prop-elm", 2)
    assert ([w.wo_id for w in page], total) == (["WO-2", "WO-3"], 4)
    item = raw_item(aws, WORK_ORDERS.logical_name, {"wo_id": "WO-7"})
    assert item is not None
    assert "open_property_id" not in item


# --------------------------------------------------------------------------------- pending


def test_clarifications_round_trip_oldest_first_and_expire_by_the_given_clock(
    pending: DynamoPendingStore,
) -> None:
    later = clarification("clar-2", asked=timedelta(minutes=10))
    short = clarification("clar-3", asked=timedelta(minutes=5), ttl=timedelta(minutes=30))
    first = clarification("clar-1")
    for item in (later, short, first):
        pending.put_clarification(item)

    now = T0 + timedelta(minutes=20)
    found = pending.clarifications_for(MARIA.party_id, now)
    assert [c.model_dump() for c in found] == [x.model_dump() for x in (first, short, later)]

    # clar-3 expires at exactly T0+35min: an expiry at "now" counts as expired.
    assert [
        c.clarification_id
        for c in pending.clarifications_for(MARIA.party_id, T0 + timedelta(minutes=35))
    ] == ["clar-1", "clar-2"]
    assert pending.clarifications_for(MARIA.party_id, T0 + timedelta(days=4)) == []
    assert pending.confirmations_for(MARIA.party_id, now) == []


def test_expiry_is_exact_below_a_second(pending: DynamoPendingStore) -> None:
    item = clarification("clar-1", ttl=timedelta(seconds=10, milliseconds=500))
    pending.put_clarification(item)

    assert pending.clarifications_for(MARIA.party_id, T0 + timedelta(seconds=10, milliseconds=499))
    assert not pending.clarifications_for(
        MARIA.party_id, T0 + timedelta(seconds=10, milliseconds=500)
    )


def test_unknown_sender_clarification_round_trips(aws: AwsEnv, pending: DynamoPendingStore) -> None:
    item = clarification("clar-anon", party_id=None)
    pending.put_clarification(item)

    assert pending.clarifications_for(MARIA.party_id, T0) == []
    found = pending.clarifications_for("unknown", T0)
    assert [c.model_dump() for c in found] == [item.model_dump()]
    raw = raw_item(aws, PENDING.logical_name, {"pending_id": "clar-anon"})
    assert raw is not None
    # The TTL attribute is whole epoch seconds, never before the real expiry.
    assert PENDING.ttl_attribute is not None
    assert int(raw[PENDING.ttl_attribute]["N"]) >= item.expires_at.timestamp()


def test_confirmations_round_trip_and_expire(pending: DynamoPendingStore) -> None:
    soon = confirmation("conf-1", ttl=timedelta(minutes=15))
    later = confirmation("conf-2", held=timedelta(minutes=5))
    pending.put_confirmation(later)
    pending.put_confirmation(soon)

    found = pending.confirmations_for(MARIA.party_id, T0 + timedelta(minutes=10))
    assert [c.model_dump() for c in found] == [soon.model_dump(), later.model_dump()]
    assert [
        c.confirmation_id
        for c in pending.confirmations_for(MARIA.party_id, T0 + timedelta(minutes=15))
    ] == ["conf-2"]
    assert pending.clarifications_for(MARIA.party_id, T0) == []


def test_confirmation_status_is_compare_and_set(pending: DynamoPendingStore) -> None:
    pending.put_confirmation(confirmation("conf-1"))
    pending.put_confirmation(confirmation("conf-2", held=timedelta(minutes=1)))
    pending.put_clarification(clarification("clar-1"))

    pending.set_confirmation_status("conf-1", expected="held", status="released")
    # A second YES (or a retry) finds it already released: it must not release twice.
    with pytest.raises(StaleVersionError):
        pending.set_confirmation_status("conf-1", expected="held", status="released")
    with pytest.raises(StaleVersionError):
        pending.set_confirmation_status("conf-missing", expected="held", status="released")
    with pytest.raises(StaleVersionError):  # a clarification is not a confirmation
        pending.set_confirmation_status("clar-1", expected="held", status="released")
    with pytest.raises(ValueError, match="status"):
        pending.set_confirmation_status("conf-2", expected="held", status="approved")

    held = pending.confirmations_for(MARIA.party_id, T0 + timedelta(minutes=2))
    assert [c.confirmation_id for c in held] == ["conf-2"]
    assert len(pending.clarifications_for(MARIA.party_id, T0)) == 1


# --------------------------------------------------------------------------------- parties


def test_party_lookup_by_phone(parties: DynamoPartyDirectory) -> None:
    vendor = Party(party_id=VENDOR, role=PartyRole.VENDOR, phone="+14155550199", name="Bob")
    parties.put(MARIA)
    parties.put(vendor)

    assert parties.by_phone(MARIA.phone) == MARIA
    found = parties.by_phone(vendor.phone)
    assert found is not None
    assert found.model_dump() == vendor.model_dump()
    assert parties.by_phone("+14155550000") is None


def test_party_put_overwrites(parties: DynamoPartyDirectory) -> None:
    parties.put(MARIA)
    moved = MARIA.model_copy(update={"unit": "4C", "name": "Maria G."})
    parties.put(moved)

    assert parties.by_phone(MARIA.phone) == moved


# --------------------------------------------------------------------------------- errors


def test_other_client_errors_are_not_swallowed(aws: AwsEnv) -> None:
    missing = "maestro-test-no-such-table"
    with pytest.raises(ClientError) as log_error:
        DynamoDecisionLog(aws.dynamodb, missing).append(decision())
    with pytest.raises(ClientError) as wo_error:
        DynamoWorkOrderStore(aws.dynamodb, missing).update(work_order(version=2), 1)
    with pytest.raises(ClientError) as pending_error:
        DynamoPendingStore(aws.dynamodb, missing).set_confirmation_status("c", "held", "released")

    for error in (log_error, wo_error, pending_error):
        assert not isinstance(error.value, AlreadyExistsError | StaleVersionError)
        assert error.value.response["Error"]["Code"] == "ResourceNotFoundException"


# --------------------------------------------------------------------------------- timeline


def test_timeline_entries_round_trip_by_type_create_once_in_time_order(aws: AwsEnv) -> None:
    timeline = DynamoTimeline(aws.dynamodb, aws.table_names["timeline"])
    common: dict[str, Any] = {"wo_id": "WO-204", "package_id": "pkg-1", "who": MARIA.party_id}
    entries = [
        NoteEntry(entry_id="pkg-1#0#note", at=T0, what="a note", note="drips at night", **common),
        VisitEntry(
            entry_id="pkg-1#1#visit",
            at=T0 + timedelta(minutes=1),
            what="visit confirmed",
            mode="confirm",
            window_start=T0 + timedelta(days=1),
            window_end=T0 + timedelta(days=1, hours=2),
            status=WorkOrderStatus.SCHEDULED,
            decision_id="pkg-1#dispose#1",
            **common,
        ),
        RatingEntry(
            entry_id="pkg-2#0#rating", at=T0 + timedelta(days=3), what="5/5", stars=5, **common
        ),
        StatusEntry(
            entry_id="pkg-3#0#status#WO-204",
            at=T0 + timedelta(days=2),
            what="cancelled",
            from_status=WorkOrderStatus.SCHEDULED,
            to_status=WorkOrderStatus.CANCELLED,
            operation="cancel",
            **{**common, "who": None},
        ),
    ]
    for entry in reversed(entries):
        assert timeline.append(entry) is True
    again = entries[0].model_copy(update={"note": "something else"})
    assert timeline.append(again) is False  # a re-run appends nothing and changes nothing
    assert timeline.for_wo("WO-204") == sorted(entries, key=lambda e: e.at)
    assert timeline.get("WO-204", "pkg-1#0#note") == entries[0]
    assert timeline.get("WO-204", "nope") is None
    assert timeline.for_wo("WO-999") == []
