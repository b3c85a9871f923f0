"""The cloud's eval handlers (``maestro_dev.eval_harness.cloud``) on moto: the eval copy's own
tables, queues, secrets and package machine, and the copy's real inbound resolver behind a Lambda
client. Time is slept through an injected ``sleep`` (recorded, not waited)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.clock import SystemClock
from maestro.ingest.entry import build_inbound
from maestro.settings import InboundSettings
from maestro.stack_outputs import OUTPUT_EVAL_MACHINE, OUTPUT_EVAL_RUNS_TABLE
from maestro_dev.eval_harness import cloud, cloud_cli
from maestro_dev.eval_harness.cloud import (
    EvalCopyBusyError,
    EvalSettings,
    RealTimeRefusedError,
    run_step,
    start_run,
)
from maestro_dev.eval_harness.executor import HANDLERS
from maestro_dev.eval_harness.loader import load_world
from maestro_dev.eval_harness.runs import EVAL_RUNS, EvalRunStore
from maestro_dev.eval_harness.scenario import Scenario
from maestro_dev.local.twilio_loopback import LOCAL_ACCOUNT_SID

if TYPE_CHECKING:
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

# Wordings no golden scenario uses.
SCENARIO = {
    "id": "cloud-smoke",
    "title": "A tenant reports a dripping radiator valve",
    "naive_failure": "the text is lost between the webhook and the buffer",
    "world": load_world("maria").model_dump(mode="json", by_alias=True),
    "turns": [
        {"from": "tenant-maria", "text": "radiator valve in the hallway keeps dripping"},
        {"flush": "idle"},
    ],
    "checkpoints": [{"after": 0, "id": "buffered", "expect": {"packages": 1}}],
}


@dataclass
class InboundLambda:
    """A Lambda client whose one function is the copy's inbound resolver, run in-process."""

    settings: InboundSettings
    calls: list[dict[str, Any]] = field(default_factory=list)

    def invoke(self, FunctionName: str, InvocationType: str, Payload: str) -> dict[str, Any]:  # noqa: N803
        assert FunctionName == "maestro-dev-eval-inbound-sms"
        assert InvocationType == "RequestResponse"
        event = json.loads(Payload)
        self.calls.append(event)

        class Context:
            function_name = FunctionName
            aws_request_id = "req"
            invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:inbound"
            memory_limit_in_mb = 512

        answer = build_inbound(self.settings, SystemClock()).resolve(event, Context())
        return {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(answer).encode())}


@dataclass
class Copy:
    aws: AwsEnv
    settings: dict[str, EvalSettings]
    inbound: InboundLambda
    slept: list[float]
    runs: str
    machine: str

    def step(self, step: str, event: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        settings = self.settings[step]
        return run_step(
            step,  # type: ignore[arg-type]
            event,
            None,
            settings=settings,
            clients=lambda service: (
                self.inbound if service == "lambda" else self.aws.client(service)
            ),
            secrets=SecretsManagerSecrets(max_age_seconds=0),
            sleep=self.slept.append,
            **kwargs,
        )


@pytest.fixture
def copy(aws: AwsEnv) -> Iterator[Copy]:
    ddb = aws.dynamodb
    runs = "maestro-dev-eval-eval-runs"
    ddb.create_table(**EVAL_RUNS.create_table_kwargs(runs))
    sqs = aws.client("sqs")
    debounce = sqs.create_queue(QueueName="maestro-dev-eval-debounce")["QueueUrl"]
    watcher = sqs.create_queue(QueueName="maestro-dev-eval-watcher")["QueueUrl"]
    probes = sqs.create_queue(QueueName="maestro-dev-eval-probe")["QueueUrl"]
    secrets = aws.client("secretsmanager")
    token = secrets.create_secret(Name="eval-twilio", SecretString="copy-twilio-token")["ARN"]
    app = secrets.create_secret(Name="eval-app", SecretString="copy-app-secret")["ARN"]
    sfn = aws.client("stepfunctions")
    role = "arn:aws:iam::123456789012:role/maestro-dev-eval"
    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    machine = sfn.create_state_machine(
        name="maestro-dev-eval-package-pipeline", definition=definition, roleArn=role
    )["stateMachineArn"]
    wo_machine = sfn.create_state_machine(
        name="maestro-dev-eval-work-order", definition=definition, roleArn=role
    )["stateMachineArn"]
    tables = {f"{name}_table": table for name, table in aws.table_names.items()}
    inbound = InboundLambda(
        InboundSettings(
            messages_table=tables["messages_table"],
            conversations_table=tables["conversations_table"],
            parties_table=tables["parties_table"],
            debounce_queue_url=debounce,
            twilio_auth_token_secret=token,
            app_signing_secret=app,
            twilio_account_sid=LOCAL_ACCOUNT_SID,
            idle_window_seconds=300,
            max_wait_seconds=900,
        )
    )
    base: dict[str, Any] = {"eval_runs_table": runs}

    def given(step: str) -> dict[str, Any]:
        """What infra/evals.py gives the step (a step reaching past it fails by name)."""
        own = {name: aws.table_names[name] for name in cloud.STEP_TABLES[step]}
        made: dict[str, Any] = {"eval_copy_tables": json.dumps(own)}
        if step in cloud.SENDS_WEBHOOKS:
            made |= {
                "inbound_function_name": "maestro-dev-eval-inbound-sms",
                "twilio_auth_token_secret": token,
                "app_signing_secret": app,
            }
        if step in cloud.READS_EXECUTIONS:
            made["package_machine_arn"] = machine
        if step == "eval_setup":
            made["work_order_machine_arn"] = wo_machine
        if step in cloud.LETS_TIME_PASS:
            made["debounce_queue_url"] = debounce
            made["probe_queue_url"] = probes
        if step in cloud.WAITS_FOR_THE_WATCHER:
            made["watcher_queue_url"] = watcher
        return made

    settings = {
        step: EvalSettings(eval_step=step, **base, **given(step))  # type: ignore[arg-type]
        for step in HANDLERS
    }
    return Copy(aws, settings, inbound, [], runs, machine)


def _start(copy: Copy, mode: str = "all", scenario: dict[str, Any] | None = None) -> str:
    run_id = f"cloud-smoke-{len(copy.inbound.calls)}"
    executor_arn = copy.machine  # any machine: start_run records, then starts it
    start_run(
        Scenario.model_validate(scenario or SCENARIO),
        mode,  # type: ignore[arg-type]
        ddb=copy.aws.dynamodb,
        sfn=copy.aws.client("stepfunctions"),
        eval_runs_table=copy.runs,
        executor_arn=executor_arn,
        run_id=run_id,
        now=datetime.now(UTC),
    )
    return run_id


def test_a_turn_goes_through_the_copys_inbound_route_and_grading_reads_the_copy(
    copy: Copy,
) -> None:
    run_id = _start(copy)
    store = EvalRunStore(copy.aws.dynamodb, copy.runs)
    before = datetime.now(UTC)
    steps = copy.step("eval_setup", {"run_id": run_id, "mode": "all"})["steps"]
    assert [s["kind"] for s in steps] == ["turn", "flush"]
    # The scenario is anchored at now (the copy's pipeline reads the real clock).
    world_start = datetime.fromisoformat(store.run(run_id).scenario["world"]["start"])
    assert before <= world_start <= datetime.now(UTC)
    # The world was seeded into the copy's own tables.
    versions = store.run(run_id).seeded_versions
    assert "WO-198" in versions

    event = {"run_id": run_id, "mode": "all", "step": steps[0]}
    injected = copy.step("eval_inject", event)
    assert injected["status"] == 200
    assert 60 in copy.slept  # the turn's default "+1m", slept in real time
    # The text is in the copy's messages table under the SID the executor sent, signed with
    # the copy's own token (the resolver would have answered 403 otherwise).
    item = copy.aws.dynamodb.get_item(
        TableName=copy.aws.table_names["messages"], Key={"message_id": {"S": injected["sid"]}}
    )
    assert "radiator valve" in json.dumps(item["Item"])
    # The run's clock moved by what was slept, and the next handler starts from it.
    row = store.step(run_id, 0)
    assert row is not None
    assert row.at - world_start == timedelta(seconds=60)

    settled = copy.step("eval_settle", event)
    assert settled == {"packages": []}  # no pipeline runs in this test: no execution started
    graded = copy.step("eval_grade", event)
    assert graded == {"checkpoint": "buffered", "passed": False}
    (checkpoint,) = store.checkpoints(run_id)
    assert not checkpoint.passed
    assert checkpoint.reason

    finished = copy.step("eval_finish", {"run_id": run_id, "mode": "all"})
    assert finished["passed"] is False
    assert store.run(run_id).status == "failed"


def test_one_run_at_a_time_and_a_new_run_starts_from_an_empty_copy(
    copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test's sleeps are not waited: SQS's one purge a minute would refuse the second.
    monkeypatch.setenv("MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR", "false")
    first = _start(copy)
    copy.step("eval_setup", {"run_id": first, "mode": "all"})
    copy.inbound.calls.append({})  # a different run id for the second
    second = _start(copy)
    with pytest.raises(EvalCopyBusyError, match=first):
        copy.step("eval_setup", {"run_id": second, "mode": "all"})
    # A stray row from the first run, then the first run finishes and gives the copy back.
    ddb, work_orders = copy.aws.dynamodb, copy.aws.table_names["work_orders"]
    ddb.put_item(TableName=work_orders, Item={"wo_id": {"S": "WO-STRAY"}})
    sqs, debounce = copy.aws.client("sqs"), copy.settings["eval_setup"].debounce_queue_url
    sqs.send_message(QueueUrl=debounce, MessageBody='{"stale": true}', DelaySeconds=300)
    probes = copy.settings["eval_setup"].probe_queue_url
    assert probes is not None
    sqs.send_message(QueueUrl=probes, MessageBody='{"stale probe": true}')
    copy.step("eval_finish", {"run_id": first, "mode": "all"})
    copy.step("eval_setup", {"run_id": second, "mode": "all"})
    counts = sqs.get_queue_attributes(QueueUrl=debounce, AttributeNames=["All"])["Attributes"]
    # The stale signal purged: what waits is the second run's own (one per prior message).
    priors = len(Scenario.model_validate(SCENARIO).world.messages)
    assert int(counts["ApproximateNumberOfMessagesDelayed"]) == priors
    stale = sqs.get_queue_attributes(QueueUrl=probes, AttributeNames=["All"])["Attributes"]
    assert int(stale["ApproximateNumberOfMessages"]) == 0  # a stale probe would expedite
    left = {i["wo_id"]["S"] for i in ddb.scan(TableName=work_orders)["Items"]}
    assert 60 in copy.slept  # a minute for SQS to finish the purge, before the world's texts
    assert "WO-STRAY" not in left
    assert "WO-198" in left


def test_a_wait_longer_than_a_handler_may_sleep_is_refused_not_shortened(copy: Copy) -> None:
    waiting = {**SCENARIO, "turns": [{"wait": "20m"}], "checkpoints": []}
    waiting["checkpoints"] = [{"after": 0, "id": "later", "expect": {"packages": 0}}]
    run_id = _start(copy, scenario=waiting)
    steps = copy.step("eval_setup", {"run_id": run_id, "mode": "all"})["steps"]
    with pytest.raises(RealTimeRefusedError, match=r"waits 1200 s of real time.*780 s"):
        copy.step("eval_settle", {"run_id": run_id, "mode": "all", "step": steps[0]})
    assert sum(copy.slept) < 1200


@pytest.mark.parametrize(
    ("mode", "scenario", "why"),
    [
        ("step", SCENARIO, "step mode"),
        ("all", {**SCENARIO, "model": {"calls": {"brain": []}}}, "scripts the model"),
    ],
)
def test_what_the_copy_cannot_run_is_refused_before_a_run_is_recorded(
    copy: Copy, mode: str, scenario: dict[str, Any], why: str
) -> None:
    with pytest.raises(RealTimeRefusedError, match=why):
        _start(copy, mode, scenario)
    assert copy.aws.dynamodb.scan(TableName=copy.runs)["Count"] == 0


def test_the_operators_command_starts_a_run_on_the_environments_eval_copy(
    copy: Copy, tmp_path: Any
) -> None:
    scenario = tmp_path / "cloud-smoke.yaml"
    scenario.write_text(json.dumps(SCENARIO))  # JSON is YAML

    class Stacks:
        def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803
            if StackName != "maestro-dev-eval":
                raise LookupError(StackName)
            outputs = {
                OUTPUT_EVAL_MACHINE: copy.machine,
                OUTPUT_EVAL_RUNS_TABLE: copy.runs,
            }
            return {
                "Stacks": [
                    {"Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]}
                ]
            }

    def clients(service: str) -> Any:
        return Stacks() if service == "cloudformation" else copy.aws.client(service)

    out = io.StringIO()
    assert cloud_cli.run([str(scenario), "--env", "dev", "--mode", "checkpoint"], out, clients) == 0
    run_id = out.getvalue().split()[1]
    assert run_id.startswith("cloud-smoke-")
    assert "states/home" in out.getvalue()
    run = EvalRunStore(copy.aws.dynamodb, copy.runs).run(run_id)
    assert (run.mode, run.status) == ("checkpoint", "running")
    (execution,) = copy.aws.client("stepfunctions").list_executions(stateMachineArn=copy.machine)[
        "executions"
    ]
    assert execution["name"] == run_id
    with pytest.raises(LookupError, match=r"maestro-prod-eval.*eval_executor"):
        cloud_cli.run([str(scenario), "--env", "prod"], out, clients)


def test_a_second_purge_within_the_minute_waits_then_refuses_rather_than_keep_stale_signals(
    copy: Copy,
) -> None:
    first = _start(copy)
    copy.step("eval_setup", {"run_id": first, "mode": "all"})
    copy.step("eval_finish", {"run_id": first, "mode": "all"})
    copy.inbound.calls.append({})
    second = _start(copy)
    slept = len(copy.slept)
    # moto's clock does not move with the test's sleeps: the minute never passes.
    with pytest.raises(EvalCopyBusyError, match="purged less than a minute ago"):
        copy.step("eval_setup", {"run_id": second, "mode": "all"})
    assert 60 in copy.slept[slept:]  # it waited the minute once before refusing


def test_each_step_renews_the_runs_hold_and_a_run_that_lost_it_stops(
    copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR", "false")
    start = datetime.now(UTC)

    def at(hours: float) -> Any:
        return lambda: start + timedelta(hours=hours)

    first = _start(copy)
    steps = copy.step("eval_setup", {"run_id": first, "mode": "all"}, now=at(0))["steps"]
    gate = {"run_id": first, "index": 0, "gate": "after", "token": "t", "execution": "e"}
    copy.step("eval_gate", gate, now=at(20))  # paused at a checkpoint: the hold renewed
    copy.inbound.calls.append({})
    second = _start(copy)
    with pytest.raises(EvalCopyBusyError, match=first):  # past set-up's hold, not the gate's
        copy.step("eval_setup", {"run_id": second, "mode": "all"}, now=at(26))
    # The first run died at its gate: a day and more later, the copy is taken over.
    copy.step("eval_setup", {"run_id": second, "mode": "all"}, now=at(50))
    with pytest.raises(EvalCopyBusyError, match=second):
        copy.step("eval_inject", {"run_id": first, "mode": "all", "step": steps[0]}, now=at(51))
