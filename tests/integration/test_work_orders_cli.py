"""`maestro wo show|list` on `maestro serve` (its operator routes) and on a deployed stack
(`--env`, on moto): the WO as the stores hold it, its timeline with the files a tenant's MMS
carried, its dispatch run without the wait's task token, its execution and the state it is in;
never a whole phone number."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from embedded import open_wo, run_cli, serving

from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.directory import Trade
from maestro.domain.dispatch import DispatchRun, Judgment, Offer, RankedVendor, Wait
from maestro.domain.models import MediaRef, Urgency, WorkOrder, WorkOrderStatus
from maestro.domain.timeline import NoteEntry
from maestro.stack_outputs import (
    OUTPUT_GATES_TABLE,
    OUTPUT_STATE_MACHINE,
    OUTPUT_WORK_ORDER_MACHINE,
    table_output,
)
from maestro_dev.eval_harness.scenario import WORLD_PROPERTY
from maestro_dev.local.operator_access import TOKEN_HEADER
from maestro_dev.local.server import LocalServer
from maestro_dev.local.world import MARIA, VIC

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

TOKEN = "AAAAKgAAAAIAAAAAAAAAAWz2-the-task-token-nobody-may-print"
CALLBACK = "415-555-0142"
PHOTO = (
    "https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/MM0/Media/ME0f3a",
    "image/jpeg",
)
OFFERING = "Dispatch: offer to vendor 2 of 3"
T0 = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
_WHOLE_PHONE = re.compile(r"555[ .-]?0142|\+1415\d{7}")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalServer]:
    with serving(monkeypatch, tmp_path, speed=0.0, step=False) as srv:  # a test moves time
        yield srv


def _report_by_mms(server: LocalServer) -> WorkOrder:
    """Maria texts a photo of a new problem, with her callback number in the words."""
    stack = server.stack
    delivery = stack.twilio.text(
        MARIA.phone,
        f"the bedroom closet door is broken, call me on {CALLBACK}",
        media=[PHOTO],
    )
    assert [status for _, status in delivery.attempts] == [200]
    stack.advance(stack.idle + 1)
    found = [
        wo
        for wo in DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).listed(None, None)[0]
        if wo.wo_id != "WO-198"
    ]
    assert len(found) == 1, found
    return found[0]


def _judgment() -> Judgment:
    vendors = (
        RankedVendor(vendor_id=VIC.party_id, name="Vic", rank=1, why="plumbing, covers world"),
        RankedVendor(vendor_id="vendor-hal", name="Hal", rank=2, open_jobs=3, rating=4.5),
    )
    return Judgment(
        priority=Urgency.ROUTINE,
        trade=Trade.PLUMBING,
        nte_usd=350,
        approval_needed=False,
        after_hours=False,
        vendors=vendors,
        reasons=("routine: no hazard in the report", "plumbing from the category"),
        offer_timeout_seconds=14_400,
    )


def _offering_run(wo: WorkOrder, execution_arn: str) -> DispatchRun:
    """A run that has offered the job to Vic (declined) and now waits on Hal."""
    at = wo.created_at
    return DispatchRun(
        wo_id=wo.wo_id,
        execution_arn=execution_arn,
        step="offering",
        started_at=at,
        updated_at=at + timedelta(minutes=40),
        judgment=_judgment(),
        offers=(
            Offer(
                index=1,
                vendor_id=VIC.party_id,
                sent_at=at + timedelta(minutes=1),
                sid="SM" + "1" * 32,
                outcome="declined",
                answered_at=at + timedelta(minutes=39),
                by_package="pkg-vic-1",
            ),
            Offer(index=2, vendor_id="vendor-hal", sent_at=at + timedelta(minutes=40)),
        ),
        waiting=Wait(
            kind="offer",
            token=TOKEN,
            party_id="vendor-hal",
            started_at=at + timedelta(minutes=40),
            deadline=at + timedelta(hours=4, minutes=40),
            offer_index=2,
            vendor_id="vendor-hal",
        ),
    )


def _running_execution(sfn: Any, wo_id: str) -> str:
    """An execution of a work order machine, named by the WO, parked in an offer's state."""
    definition = {
        "StartAt": "Gather: go on with what it has",
        "States": {
            "Gather: go on with what it has": {"Type": "Pass", "Next": OFFERING},
            OFFERING: {"Type": "Wait", "Seconds": 86_400, "End": True},
        },
    }
    machine = sfn.create_state_machine(
        name="maestro-test-work-order",
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::123456789012:role/x",
    )["stateMachineArn"]
    return str(sfn.start_execution(stateMachineArn=machine, name=wo_id, input="{}")["executionArn"])


def _until(read: Any, timeout: float = 20) -> Any:
    """Poll ``read`` until it answers (an execution's next history event, on its own thread)."""
    deadline = time.monotonic() + timeout
    while (value := read()) is None:
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def test_wo_show_on_serve_has_the_record_the_timeline_the_run_and_the_execution(
    server: LocalServer,
) -> None:
    stack = server.stack
    # Written straight to the stores (a WO seeded so publishes nothing and starts no execution
    # of its own): a run mid-dispatch, with a declined offer, that no test could wait for.
    wo = open_wo(
        stack,
        "WO-3141",
        f"closet door off its hinge; call {CALLBACK}",
        property_id=WORLD_PROPERTY.property_id,
    )
    DynamoTimeline(stack.ddb, stack.tables["timeline"]).append(
        NoteEntry(
            wo_id=wo.wo_id,
            entry_id="pkg-1#0#note",
            at=wo.created_at,
            who=MARIA.party_id,
            package_id="pkg-1",
            what=f"the tenant (Maria) added a note (1 photo): text me on {CALLBACK}",
            note=f"text me on {CALLBACK}",
            media=(MediaRef(url=PHOTO[0], content_type=PHOTO[1]),),
        )
    )
    arn = _running_execution(stack.sfn, wo.wo_id)
    DynamoDispatchStore(stack.ddb, stack.tables["dispatch"]).put(_offering_run(wo, arn), None)

    def entered() -> str | None:
        code, said = run_cli("wo", "show", wo.wo_id, "--json", "--url", server.url)
        assert code == 0, said
        shown = json.loads(said)
        return said if (shown["execution"] or {}).get("current_state") == OFFERING else None

    said = _until(entered)
    shown = json.loads(said)
    assert shown["work_order"]["wo_id"] == wo.wo_id
    assert shown["work_order"]["status"] == "open"
    (first,) = shown["timeline"]
    assert first["kind"] == "note"
    assert first["media"] == [{"url": PHOTO[0], "content_type": PHOTO[1]}]
    run = shown["dispatch"]["run"]
    assert (run["step"], run["execution_arn"]) == ("offering", arn)
    assert [(o["index"], o["vendor_id"], o["outcome"]) for o in run["offers"]] == [
        (1, VIC.party_id, "declined"),
        (2, "vendor-hal", "open"),
    ]
    assert [v["vendor_id"] for v in run["judgment"]["vendors"]] == [VIC.party_id, "vendor-hal"]
    assert run["judgment"]["reasons"][0] == "routine: no hazard in the report"
    waiting = shown["dispatch"]["waiting"]
    assert (waiting["kind"], waiting["party_id"], waiting["offer_index"]) == (
        "offer",
        "vendor-hal",
        2,
    )
    assert "token" not in waiting
    assert (shown["execution"]["arn"], shown["execution"]["status"]) == (arn, "RUNNING")

    code, text = run_cli("wo", "show", wo.wo_id, "--url", server.url)
    assert code == 0, text
    assert f"execution: RUNNING at {OFFERING!r}" in text
    assert "offer 1: vendor-vic declined" in text
    assert "offer 2: vendor-hal open" in text
    assert "waiting: offer 2 for vendor-hal's answer until" in text
    assert f"image/jpeg  {PHOTO[0]}" in text
    for output in (said, text):
        assert TOKEN not in output  # whoever holds the token can answer for the vendor
        assert not _WHOLE_PHONE.search(output), output  # the number the tenant wrote, masked
        assert MARIA.phone not in output
    assert "…0142" in text


def test_wo_list_on_serve_filters_by_status_and_property_and_says_how_it_read(
    server: LocalServer,
) -> None:
    wo = _report_by_mms(server)

    def listed(*argv: str) -> dict[str, Any]:
        code, said = run_cli("wo", "list", *argv, "--json", "--url", server.url)
        assert code == 0, said
        answer: dict[str, Any] = json.loads(said)
        return answer

    unfinished = listed()  # the default: all but completed and cancelled
    assert [w["wo_id"] for w in unfinished["work_orders"]] == [wo.wo_id]
    assert unfinished["read"] == "scan"
    everything = listed("--status", "all")
    assert [w["wo_id"] for w in everything["work_orders"]] == ["WO-198", wo.wo_id]  # oldest first
    assert [w["wo_id"] for w in listed("--status", "completed")["work_orders"]] == ["WO-198"]
    by_property = listed("--property", WORLD_PROPERTY.property_id)
    assert [w["wo_id"] for w in by_property["work_orders"]] == [wo.wo_id]
    assert by_property["read"] == "open_by_property index"
    assert listed("--property", "nowhere")["work_orders"] == []
    finished_there = listed("--property", WORLD_PROPERTY.property_id, "--status", "completed")
    assert ([w["wo_id"] for w in finished_there["work_orders"]], finished_there["read"]) == (
        ["WO-198"],
        "scan",
    )

    code, text = run_cli("wo", "list", "--status", "all", "--url", server.url)
    assert code == 0, text
    lines = text.splitlines()
    assert lines[0].startswith("WO-198  completed")
    assert lines[1].startswith(f"{wo.wo_id}  open")
    assert lines[-1] == "2 work orders (any status; read by scan)"
    assert not _WHOLE_PHONE.search(text), text


def test_wo_show_of_no_such_wo_and_a_caller_without_the_token_are_refused(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, said = run_cli("wo", "show", "WO-NOPE", "--url", server.url)
    assert code == 1
    assert "no work order 'WO-NOPE'" in said
    code, said = run_cli("wo", "list", "--url", server.url, "--token", "0" * 64)
    assert code == 1
    assert said.startswith("401 ")
    # The route checks what it is asked, whoever built the request.
    request = urllib.request.Request(
        f"{server.url}/local/wos?status=closed", headers={TOKEN_HEADER: server.token}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert "status must be one of unfinished, all, open" in refused.value.read().decode()


# -- a deployed stack, on moto --------------------------------------------------------------------


def _deploy(aws: AwsEnv, *, tables: tuple[str, ...], **more: str) -> None:
    outputs = {
        OUTPUT_STATE_MACHINE: {"Value": "arn:aws:states:us-east-1:123456789012:stateMachine:p"},
        OUTPUT_GATES_TABLE: {"Value": aws.table_names["gates"]},
        **{table_output(name): {"Value": aws.table_names[name]} for name in tables},
        **{name: {"Value": value} for name, value in more.items()},
    }
    aws.client("cloudformation").create_stack(
        StackName="maestro-dev",
        TemplateBody=json.dumps(
            {"Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs}
        ),
    )


def test_wo_show_and_list_on_a_deployed_stack(aws: AwsEnv) -> None:
    _deploy(aws, tables=("work_orders", "timeline", "dispatch"))
    created = WorkOrder(
        wo_id="WO-7C1D",
        tenant_id=MARIA.party_id,
        unit="3B",
        property_id=WORLD_PROPERTY.property_id,
        summary=f"bathroom fan rattles; tenant asks for a call on {CALLBACK}",
        category="hvac",
        created_at=T0,
        updated_at=T0,
    )
    done = created.model_copy(
        update={"wo_id": "WO-0AA1", "status": WorkOrderStatus.CANCELLED, "property_id": "elm"}
    )
    store = DynamoWorkOrderStore(aws.dynamodb, aws.table_names["work_orders"])
    store.create(created)
    store.create(done)
    DynamoTimeline(aws.dynamodb, aws.table_names["timeline"]).append(
        NoteEntry(
            wo_id=created.wo_id,
            entry_id="pkg-1#0#note",
            at=created.created_at,
            who=MARIA.party_id,
            package_id="pkg-1",
            what="the tenant (Maria) reported it (1 photo): bathroom fan rattles",
            note="bathroom fan rattles",
            media=(MediaRef(url=PHOTO[0], content_type=PHOTO[1]),),
        )
    )
    arn = _running_execution(aws.client("stepfunctions"), created.wo_id)
    DynamoDispatchStore(aws.dynamodb, aws.table_names["dispatch"]).put(
        _offering_run(created, arn), None
    )

    code, said = run_cli("wo", "show", created.wo_id, "--json", "--env", "dev")
    assert code == 0, said
    shown = json.loads(said)
    assert shown["work_order"]["wo_id"] == created.wo_id
    assert shown["timeline"][0]["media"] == [{"url": PHOTO[0], "content_type": PHOTO[1]}]
    assert shown["dispatch"]["waiting"]["party_id"] == "vendor-hal"
    assert shown["execution"]["arn"] == arn
    assert shown["execution"]["status"] == "RUNNING"
    assert TOKEN not in said
    assert not _WHOLE_PHONE.search(said), said

    code, said = run_cli("wo", "list", "--env", "dev")
    assert code == 0, said
    assert said.splitlines()[-1] == "1 work order (unfinished; read by scan)"
    assert created.wo_id in said
    assert "WO-0AA1" not in said
    code, said = run_cli(
        "wo", "list", "--property", WORLD_PROPERTY.property_id, "--json", "--env", "dev"
    )
    listed = json.loads(said)
    assert ([w["wo_id"] for w in listed["work_orders"]], listed["read"]) == (
        [created.wo_id],
        "open_by_property index",
    )
    code, said = run_cli("wo", "list", "--status", "cancelled", "--json", "--env", "dev")
    assert [w["wo_id"] for w in json.loads(said)["work_orders"]] == ["WO-0AA1"]

    code, said = run_cli("wo", "show", "WO-NONE", "--env", "dev")
    assert (code, said.strip()) == (1, "no work order WO-NONE in maestro-dev")


def test_before_its_run_is_written_a_wos_execution_is_found_by_its_name(aws: AwsEnv) -> None:
    """wo_start has started the execution and its first step has not written the run yet: the
    work order machine's output names where to look."""
    sfn = aws.client("stepfunctions")
    wo = WorkOrder(
        wo_id="WO-5E5E",
        tenant_id=MARIA.party_id,
        summary="hallway light out",
        created_at=T0,
        updated_at=T0,
    )
    arn = _running_execution(sfn, wo.wo_id)
    machine = sfn.describe_execution(executionArn=arn)["stateMachineArn"]
    _deploy(
        aws,
        tables=("work_orders", "timeline", "dispatch"),
        **{OUTPUT_WORK_ORDER_MACHINE: machine},
    )
    DynamoWorkOrderStore(aws.dynamodb, aws.table_names["work_orders"]).create(wo)
    code, said = run_cli("wo", "show", wo.wo_id, "--json", "--env", "dev")
    assert code == 0, said
    shown = json.loads(said)
    assert shown["dispatch"] is None
    assert (shown["execution"]["arn"], shown["execution"]["status"]) == (arn, "RUNNING")
    code, said = run_cli("wo", "show", wo.wo_id, "--stack", "maestro-dev")
    assert "dispatch: no run" in said
    assert f"  {arn}" in said


def test_a_deployed_stack_without_the_dispatch_table_is_named_as_such(aws: AwsEnv) -> None:
    _deploy(aws, tables=("work_orders", "timeline"))
    with pytest.raises(LookupError, match="DispatchTableName"):
        run_cli("wo", "show", "WO-1", "--env", "dev")


class _OneItemPages:
    """A DynamoDB client whose scans read one item a page (DynamoDB filters after the limit,
    so most pages come back empty with a key to go on from)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.scans = 0

    def scan(self, **kwargs: Any) -> Any:
        self.scans += 1
        return self._client.scan(Limit=1, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_scan_reads_every_page_and_keeps_what_the_filter_lets_through(aws: AwsEnv) -> None:
    paging = _OneItemPages(aws.dynamodb)
    store = DynamoWorkOrderStore(paging, aws.table_names["work_orders"])
    statuses = [WorkOrderStatus.OPEN, WorkOrderStatus.CANCELLED, WorkOrderStatus.SCHEDULED] * 3
    for n, status in enumerate(statuses):
        store.create(
            WorkOrder(
                wo_id=f"WO-{n:04d}",
                tenant_id=MARIA.party_id,
                property_id="elm" if n % 2 else "oak",
                summary=f"job {n}",
                status=status,
                created_at=T0 + timedelta(minutes=n),
                updated_at=T0 + timedelta(minutes=n),
            )
        )
    found, how = store.listed(frozenset({WorkOrderStatus.CANCELLED}), None)
    assert how == "scan"
    assert [wo.wo_id for wo in found] == ["WO-0001", "WO-0004", "WO-0007"]
    assert paging.scans >= len(statuses)  # one item a page: every page was read
    found, _ = store.listed(frozenset({WorkOrderStatus.CANCELLED}), "elm")
    assert [wo.wo_id for wo in found] == ["WO-0001", "WO-0007"]


def test_wo_show_on_serve_follows_a_real_dispatch_from_gather_to_the_first_offer(
    server: LocalServer,
) -> None:
    """Maria's MMS opens a WO whose execution gathers (her photo counted from the timeline:
    no photo is asked for), then, past the gather deadline, offers the job to Vic: `wo show`
    reads each state as the execution reaches it."""
    stack = server.stack
    stack.twilio.text(MARIA.phone, "the kitchen sink is leaking under the cabinet", media=[PHOTO])
    stack.advance(stack.idle + 1)
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    (wo,) = [w for w in store.listed(None, None)[0] if w.wo_id != "WO-198"]

    def shown() -> dict[str, Any]:
        code, said = run_cli("wo", "show", wo.wo_id, "--json", "--url", server.url)
        assert code == 0, said
        assert TOKEN not in said
        assert MARIA.phone not in said
        answer: dict[str, Any] = json.loads(said)
        return answer

    gathering = shown()
    assert gathering["execution"]["current_state"] == "Gather: ask the tenant and wait"
    gathered = gathering["dispatch"]["run"]["gathered"]
    assert gathering["dispatch"]["run"]["step"] == "gathering"
    assert "photo" in gathered["have"]  # the MMS's photo, read from the WO's timeline
    assert "photo" not in gathered["asked"]
    waiting = gathering["dispatch"]["waiting"]
    assert (waiting["kind"], waiting["party_id"]) == ("gather", MARIA.party_id)
    assert "token" not in waiting

    deadline = datetime.fromisoformat(waiting["deadline"])
    stack.advance((deadline - stack.clock.now()).total_seconds() + 60)  # nobody answers
    offering = shown()
    assert offering["execution"]["current_state"] == "Dispatch: offer to vendor 1 of 3"
    run = offering["dispatch"]["run"]
    assert run["step"] == "offering"
    assert [(o["index"], o["vendor_id"], o["outcome"]) for o in run["offers"]] == [
        (1, VIC.party_id, "open")
    ]
    assert offering["dispatch"]["waiting"]["party_id"] == VIC.party_id
    code, text = run_cli("wo", "show", wo.wo_id, "--url", server.url)
    assert code == 0, text
    assert "execution: RUNNING at 'Dispatch: offer to vendor 1 of 3'" in text
    assert "offer 1: vendor-vic open" in text


def test_a_photo_sent_with_the_report_is_not_asked_for_again(server: LocalServer) -> None:
    """An appliance's vendor needs to see it: the photo of Maria's MMS, kept on the new WO's
    first entry, is counted by gather, which asks only for what is still missing."""
    stack = server.stack
    stack.twilio.text(
        MARIA.phone, "the dishwasher in the kitchen won't drain, see the error on it", media=[PHOTO]
    )
    stack.advance(stack.idle + 1)
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    (wo,) = [w for w in store.listed(None, None)[0] if w.wo_id != "WO-198"]
    code, said = run_cli("wo", "show", wo.wo_id, "--json", "--url", server.url)
    assert code == 0, said
    shown = json.loads(said)
    assert shown["work_order"]["category"] == "appliance"
    gathered = shown["dispatch"]["run"]["gathered"]
    assert "photo" in gathered["have"]
    assert "photo" not in gathered["asked"]
    (question,) = [m.body for m in stack.outbox(MARIA.phone) if "please reply with" in m.body]
    assert "photo" not in question


def test_a_video_alone_is_no_photo_and_gather_still_asks_for_one(server: LocalServer) -> None:
    stack = server.stack
    clip = (PHOTO[0].replace("ME0f3a", "ME0f3b"), "video/mp4")
    stack.twilio.text(
        MARIA.phone, "the dishwasher in the kitchen won't drain, clip attached", media=[clip]
    )
    stack.advance(stack.idle + 1)
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    (wo,) = [w for w in store.listed(None, None)[0] if w.wo_id != "WO-198"]
    code, said = run_cli("wo", "show", wo.wo_id, "--json", "--url", server.url)
    assert code == 0, said
    shown = json.loads(said)
    assert shown["timeline"][0]["media"] == [{"url": clip[0], "content_type": clip[1]}]
    assert "photo" in shown["dispatch"]["run"]["gathered"]["asked"]
