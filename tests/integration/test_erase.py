"""Erase (#18, docs/erase-and-retention.md): after `maestro directory erase PHONE|ID`, no table,
no event on the bus and no log line holds the person's number or anything they wrote; the
decision log keeps every row (ids, lanes, times); another tenant's data is untouched; a second
erase changes nothing.

A tenant texts a new problem (a WO is created), an emergency (the PM is paged, with her words),
a note for the WO (relayed to its timeline) and a cancel (held for YES); another tenant texts in
the same hour. Then the operator erases her: through `maestro serve`'s operator route with the
CLI, by number and by id.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from embedded import (
    captured_logs,
    decisions,
    described,
    flush,
    log,
    new_executions,
    sms,
    work_orders,
)

from maestro.adapters.dynamodb_erase import DynamoEraser
from maestro.adapters.dynamodb_ledger import WATERMARK_PARTITION, DynamoSweepWatermark
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.domain.directory import OnCall, Person, PersonRole
from maestro.domain.erasure import ERASED
from maestro.domain.models import conversation_id_for
from maestro.tables import ALL_TABLES
from maestro_dev.cli import main
from maestro_dev.local.server import LocalServer
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, VIC, housed, seed, seed_directory

pytestmark = pytest.mark.integration

NEW_PROBLEM = "the dishwasher in my kitchen leaks onto the floor every time it runs"
EMERGENCY = "strong smell of gas near the boiler cupboard and it is making me dizzy"
NOTE = "the dishwasher is still leaking, it comes from the door seal, use the back gate"
CANCEL = "please cancel the dishwasher one"
HERS = (NEW_PROBLEM, EMERGENCY, NOTE, CANCEL)

OMARS = housed(
    Person(
        person_id="tenant-omar",
        role=PersonRole.TENANT,
        name="Omar",
        phones=("+14155550166",),
        unit_id="5A",
    )
)
(OMAR,) = OMARS.parties()
HIS = "the radiator in the living room of 5A is broken and it drips water on the carpet"


def _all_items(stack: LocalStack) -> dict[str, list[dict[str, Any]]]:
    """Every item of every table (ALL_TABLES), as stored."""
    found: dict[str, list[dict[str, Any]]] = {}
    for spec in ALL_TABLES:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": stack.tables[spec.logical_name]}
        while True:
            page = stack.ddb.scan(**kwargs)
            items += page["Items"]
            if not page.get("LastEvaluatedKey"):
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        found[spec.logical_name] = items
    return found


def _quotes_her(text: str) -> list[str]:
    """What in ``text`` is Maria's: her number (as E.164 or bare digits), a body or its opening."""
    needles = [MARIA.phone, MARIA.phone.lstrip("+")]
    for body in HERS:
        needles += [body, body[:24]]
    lowered = text.lower()
    return [n for n in needles if n.lower() in lowered]


def _decision_structure(stack: LocalStack) -> list[tuple[Any, ...]]:
    """The decision log's rows: keys, record kind, lane, stage and times, as stored."""
    rows = []
    for item in _all_items(stack)["decisions"]:
        doc = json.loads(item["doc"]["S"])
        rows.append(
            (
                item["package_id"]["S"],
                item["decision_id"]["S"],
                item.get("record", {}).get("S"),
                doc.get("lane"),
                doc.get("stage"),
                doc.get("disposition"),
                doc.get("recorded_at"),
                doc.get("completed_at"),
            )
        )
    return sorted(rows, key=repr)


def _his(items: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Every item that names Omar (his number, conversation or id), as JSON, by table."""
    names = (OMAR.phone, conversation_id_for(OMAR.phone), OMAR.party_id)
    return {
        table: sorted(
            json.dumps(item, sort_keys=True)
            for item in rows
            if any(n in json.dumps(item) for n in names)
        )
        for table, rows in items.items()
    }


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        seed_directory(local, OMARS)
        yield local


def _lanes(stack: LocalStack, execution: dict[str, Any]) -> list[str]:
    return [d.lane.value for d in decisions(stack, execution) if d.lane is not None]


def _texts(stack: LocalStack) -> None:
    """Her four texts and his one, each routed as it is here for."""
    sms(stack, NEW_PROBLEM)
    assert "create_wo" in _lanes(stack, flush(stack))
    sms(stack, EMERGENCY)
    (urgent,) = new_executions(stack, 1)  # an emergency is flushed at once
    stack.wait_for_executions()
    assert "escalate" in _lanes(stack, described(stack, urgent))
    sms(stack, NOTE)
    assert "relay_to_open_wo" in _lanes(stack, flush(stack))
    sms(stack, CANCEL)
    assert "manage_existing" in _lanes(stack, flush(stack))
    sms(stack, HIS, sender=OMAR.phone)
    assert "create_wo" in _lanes(stack, flush(stack))
    stack.wait_for_executions()
    stack.settle()  # Twilio delivers, the watcher reads every claim


@pytest.fixture
def server(stack: LocalStack) -> Iterator[LocalServer]:
    srv = LocalServer(stack, 0, 0.0)  # time stands still: the test moves it
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        thread.join(timeout=10)


def _erase(server: LocalServer, who: str) -> tuple[int, str]:
    out = io.StringIO()
    # "--token=…": a token may begin with "-", which argparse would read as an option.
    code = main(
        ["directory", "erase", who, "--url", server.url, f"--token={server.token}"], out=out
    )
    return code, out.getvalue()


@pytest.mark.parametrize("by", ["phone", "id"])
def test_erase_leaves_no_number_and_no_words_and_keeps_the_decision_log(
    stack: LocalStack, server: LocalServer, by: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with captured_logs() as logs:
        _texts(stack)
        before = _all_items(stack)
        structure = _decision_structure(stack)
        # The scenario put her number and words where an erase must reach them.
        quoted = {t for t, items in before.items() for i in items if _quotes_her(json.dumps(i))}
        assert {"messages", "conversations", "decisions", "timeline", "parties"} <= quoted
        assert stack.directory.person(MARIA.party_id) is not None

        code, said = _erase(server, MARIA.phone if by == "phone" else MARIA.party_id)
        assert code == 0, said
        assert said.startswith(f"erased +…{MARIA.phone[-4:]}" if by == "phone" else "erased ")
        assert MARIA.phone not in said
        stack.settle()

    after = _all_items(stack)
    for table, items in after.items():
        for item in items:
            assert not _quotes_her(json.dumps(item)), f"{table} still quotes her: {item}"
    events = list(stack.domain_events())
    assert events, "the tap saw the scenario's events"
    for event in events:
        assert not _quotes_her(json.dumps(event)), f"an event quotes her: {event}"
    written = logs.getvalue()
    assert "person erased" in written
    assert not _quotes_her(written), _quotes_her(written)
    out, err = capfd.readouterr()
    assert not _quotes_her(out + err)

    # The decision log keeps every row, its ids, lanes and times; her words are a marker.
    assert _decision_structure(stack) == structure
    assert len(after["decisions"]) == len(before["decisions"])
    assert any(ERASED in item["doc"]["S"] for item in after["decisions"])
    # She is gone from the directory and from phone → party.
    assert stack.directory.person(MARIA.party_id) is None
    assert stack.parties.by_phone(MARIA.phone) is None
    # What stays still reads as the records it is: an audit trail, not a heap of strings.
    _every_record_loads(stack)
    # Omar is untouched, item for item.
    assert _his(after) == _his(before)
    assert sum(len(v) for v in _his(after).values()) > 3


def _every_record_loads(stack: LocalStack) -> None:
    items = _all_items(stack)
    for package in {i["package_id"]["S"] for i in items["decisions"]}:
        assert log(stack).for_package(package) or log(stack).completion_for(package)
        log(stack).outcomes_for(package)
    rows = [i for i in items["ledger"] if i["package_id"]["S"] != WATERMARK_PARTITION]
    assert len(stack.ledger_rows()) == len(rows)
    if len(rows) < len(items["ledger"]):  # the sweeper's watermark, not a row: it loads too
        assert DynamoSweepWatermark(stack.ddb, stack.tables["ledger"]).read() is not None
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    for wo in work_orders(stack):
        timeline.for_wo(wo.wo_id)
    stack.directory.snapshot()


def test_a_second_erase_changes_nothing_and_an_unknown_id_is_refused(
    stack: LocalStack, server: LocalServer
) -> None:
    # Put straight into the store, not imported: the importer refuses a shift held by a tenant,
    # and this one only has to name her.
    stack.directory.put(
        OnCall(
            property_id="*",
            person_id=MARIA.party_id,
            starts_at=stack.clock.now(),
            ends_at=stack.clock.now().replace(year=2027),
        )
    )
    _texts(stack)
    assert _erase(server, MARIA.party_id)[0] == 0
    assert stack.directory.snapshot().on_call == ()  # her shift names her: gone with her
    erased = _all_items(stack)

    code, said = _erase(server, MARIA.phone)
    assert (code, said.strip()) == (0, f"nothing left to erase for +…{MARIA.phone[-4:]}")
    # Her id no longer names anyone: refused, and nothing changes either.
    code, said = _erase(server, MARIA.party_id)
    assert code == 1
    assert "404" in said
    assert "nothing to erase" in said
    code, said = _erase(server, "not-a-number-or-anyone")
    assert code == 1
    assert _all_items(stack) == erased

    # The eraser itself says the same: a finished erase run again rewrites nothing.
    report = DynamoEraser(stack.ddb, stack.tables).erase(MARIA.phone)
    assert (report.changed, report.deleted, report.redacted) == (False, {}, {})
    assert _all_items(stack) == erased


def test_erasing_a_vendor_removes_their_directory_rows_whole(stack: LocalStack) -> None:
    assert [v.vendor_id for v in stack.directory.snapshot().vendors] == [VIC.party_id]
    report = DynamoEraser(stack.ddb, stack.tables).erase(VIC.phone)
    assert report.deleted == {"directory": 1, "parties": 1}
    assert stack.directory.snapshot().vendors == ()
    assert not [i for i in _all_items(stack)["directory"] if VIC.party_id in json.dumps(i)]
    assert stack.parties.by_phone(VIC.phone) is None
    assert not any(
        VIC.phone in json.dumps(i) for items in _all_items(stack).values() for i in items
    )
    _every_record_loads(stack)


def test_an_erase_needs_every_table(stack: LocalStack) -> None:
    tables = {k: v for k, v in stack.tables.items() if k != "ledger"}
    with pytest.raises(ValueError, match="ledger"):
        DynamoEraser(stack.ddb, tables)


def test_the_operator_route_answers_the_operator_alone(server: LocalServer) -> None:
    out = io.StringIO()
    argv = ["directory", "erase", MARIA.phone, "--url", server.url, "--token", "wrong"]
    assert main(argv, out=out) == 1
    assert out.getvalue().startswith("401"), out.getvalue()
    assert server.stack.parties.by_phone(MARIA.phone) is not None
