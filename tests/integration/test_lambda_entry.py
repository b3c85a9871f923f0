"""The real Lambda entry points, wired from settings to real adapters on moto."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import T0, package
from harness import ACCOUNT, MARIA, PASS_MACHINE, twilio_event, twilio_sid
from pydantic import ValidationError

from maestro.access import EVENT_PUBLISHERS, FUNCTION_TABLES
from maestro.adapters.ddb import UnconfiguredTableError
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.clock import SystemClock
from maestro.domain.events import DomainEvent, claim_dict
from maestro.domain.execution_input import execution_input
from maestro.ingest import entry, flusher_entry
from maestro.observability import LazyTracer
from maestro.pipeline import entry as pipeline_entry
from maestro.pipeline.entry import build_pipeline
from maestro.ports.workflows import DebounceSignal
from maestro.settings import PipelineSettings
from maestro_dev.local.stack import FakeLambdaContext

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = FakeLambdaContext(function_name="maestro-test", aws_request_id="req-1")


@pytest.fixture
def configured(aws: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment as the CDK stack sets it, with moto resources behind every name."""
    secrets = aws.client("secretsmanager")
    secrets.create_secret(Name="maestro/twilio-auth-token", SecretString="twilio-test-auth-token")
    secrets.create_secret(Name="maestro/app-signing", SecretString="app-test-secret")
    queue_url = aws.client("sqs").create_queue(QueueName="debounce")["QueueUrl"]
    sfn = aws.client("stepfunctions")
    arn = sfn.create_state_machine(
        name="pipeline", definition=PASS_MACHINE, roleArn="arn:aws:iam::123456789012:role/x"
    )["stateMachineArn"]
    env = {
        "MAESTRO_MESSAGES_TABLE": aws.table_names["messages"],
        "MAESTRO_CONVERSATIONS_TABLE": aws.table_names["conversations"],
        "MAESTRO_PARTIES_TABLE": aws.table_names["parties"],
        "MAESTRO_DEBOUNCE_QUEUE_URL": queue_url,
        "MAESTRO_TWILIO_AUTH_TOKEN_SECRET": "maestro/twilio-auth-token",
        "MAESTRO_TWILIO_ACCOUNT_SID": ACCOUNT,
        "MAESTRO_APP_SIGNING_SECRET": "maestro/app-signing",
        "MAESTRO_STATE_MACHINE_ARN": arn,
        "MAESTRO_IDLE_WINDOW_SECONDS": "0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MAESTRO_IDLE_WINDOW_SECONDS", "1")
    entry._inbound.cache_clear()
    flusher_entry._flusher.cache_clear()
    yield env  # type: ignore[misc]
    entry._inbound.cache_clear()
    flusher_entry._flusher.cache_clear()


def _sms(label: str, body: str) -> dict[str, str]:
    return {
        "MessageSid": twilio_sid("SM", label),
        "AccountSid": ACCOUNT,
        "From": MARIA.phone,
        "To": "+14155550000",
        "Body": body,
    }


def test_settings_are_validated_at_invocation_not_import(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("MAESTRO_"):
            monkeypatch.delenv(key)
    entry._inbound.cache_clear()
    # Importing the handler module needed no settings; invoking it does, and says what is missing.
    with pytest.raises(ValidationError, match="messages_table"):
        entry.inbound_handler(twilio_event("/twilio/sms", _sms("unconfigured", "hi")), CONTEXT)  # type: ignore[arg-type]
    entry._inbound.cache_clear()


def test_inbound_entry_stores_and_enqueues_through_real_adapters(
    aws: Any, configured: dict[str, str]
) -> None:
    params = _sms("e2e", "the dishwasher is leaking")
    response = entry.inbound_handler(twilio_event("/twilio/sms", params), CONTEXT)  # type: ignore[arg-type]
    assert response["statusCode"] == 200
    messages = (
        aws.client("sqs")
        .receive_message(
            QueueUrl=configured["MAESTRO_DEBOUNCE_QUEUE_URL"],
            MaxNumberOfMessages=10,
            WaitTimeSeconds=2,
        )
        .get("Messages", [])
    )
    signals = [DebounceSignal.model_validate_json(m["Body"]) for m in messages]
    assert [s.seq for s in signals] == [1]


@pytest.mark.parametrize(
    ("configured_account", "status"),
    [(ACCOUNT, 200), (twilio_sid("AC", "another account"), 403), ("", 503)],
    ids=["its account", "another account", "none (cdk.json's blank)"],
)
def test_the_inbound_entry_accepts_the_configured_accounts_webhooks_alone(
    aws: Any,
    configured: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    configured_account: str,
    status: int,
) -> None:
    monkeypatch.setenv("MAESTRO_TWILIO_ACCOUNT_SID", configured_account)
    entry._inbound.cache_clear()
    event = twilio_event("/twilio/sms", _sms("accounts", "the radiator hisses"))
    response = entry.inbound_handler(event, CONTEXT)  # type: ignore[arg-type]
    assert response["statusCode"] == status, response
    stored = aws.dynamodb.scan(TableName=configured["MAESTRO_MESSAGES_TABLE"], Select="COUNT")
    assert stored["Count"] == (1 if status == 200 else 0)


def test_flusher_entry_reports_partial_batch_failures(aws: Any, configured: dict[str, str]) -> None:
    params = _sms("partial", "no heat")
    entry.inbound_handler(twilio_event("/twilio/sms", params), CONTEXT)  # type: ignore[arg-type]
    sqs = aws.client("sqs")
    (good,) = sqs.receive_message(
        QueueUrl=configured["MAESTRO_DEBOUNCE_QUEUE_URL"], WaitTimeSeconds=2
    )["Messages"]
    event = {
        "Records": [
            _sqs_record(good["MessageId"], good["Body"]),
            _sqs_record("bad-1", "this is not a signal"),
        ]
    }
    result = flusher_entry.flusher_handler(event, CONTEXT)  # type: ignore[arg-type]
    assert result == {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}
    executions = aws.client("stepfunctions").list_executions(
        stateMachineArn=configured["MAESTRO_STATE_MACHINE_ARN"]
    )["executions"]
    assert len(executions) == 1
    described = aws.client("stepfunctions").describe_execution(
        executionArn=executions[0]["executionArn"]
    )
    package = json.loads(described["input"])["package"]
    assert [m["body"] for m in package["messages"]] == ["no heat"]


@pytest.mark.parametrize("step_mode", ["true", None])
def test_flusher_entry_starts_step_mode_executions_when_its_setting_says_so(
    aws: Any, configured: dict[str, str], monkeypatch: pytest.MonkeyPatch, step_mode: str | None
) -> None:
    if step_mode is not None:
        monkeypatch.setenv("MAESTRO_STEP_MODE", step_mode)
    params = _sms("step mode", "hi")
    entry.inbound_handler(twilio_event("/twilio/sms", params), CONTEXT)  # type: ignore[arg-type]
    (signal,) = aws.client("sqs").receive_message(
        QueueUrl=configured["MAESTRO_DEBOUNCE_QUEUE_URL"], WaitTimeSeconds=2
    )["Messages"]
    flusher_entry.flusher_handler(  # type: ignore[arg-type]
        {"Records": [_sqs_record(signal["MessageId"], signal["Body"])]}, CONTEXT
    )
    sfn = aws.client("stepfunctions")
    (execution,) = sfn.list_executions(stateMachineArn=configured["MAESTRO_STATE_MACHINE_ARN"])[
        "executions"
    ]
    started = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    assert started["step"] is (step_mode == "true")


def _sqs_record(message_id: str, body: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": f"rh-{message_id}",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:debounce",
        "awsRegion": "us-east-1",
    }


def test_the_inbound_path_never_imports_the_model_sdk() -> None:
    """The webhook must answer fast: its whole import graph leaves anthropic out."""
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location(
            "inbound_handler", {str(ROOT / "functions" / "inbound_sms" / "handler.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        import maestro.ingest.webhooks, maestro.ingest.flusher
        print("anthropic" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


def test_the_tracer_is_built_on_the_first_invocation_not_at_import() -> None:
    """Building Powertools' Tracer loads the X-Ray SDK and opens its UDP emitter: a handler
    module only wraps, and the first call builds it (then reuses it)."""
    lazy = LazyTracer("maestro-test")

    @lazy.capture_lambda_handler(capture_response=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"seen": event["n"]}

    assert not lazy.built
    assert handler({"n": 1}, CONTEXT) == {"seen": 1}
    assert lazy.built
    built = lazy.get()
    assert handler({"n": 2}, CONTEXT) == {"seen": 2}
    assert lazy.get() is built
    assert handler.__name__ == "handler"


# -- a pipeline step's function: its row of tables, and nothing else ----------------------------


def _step_environment(aws: Any, step: str) -> dict[str, str]:
    """A step's environment as the CDK stack sets it: MAESTRO_STEP and the tables of its row."""
    env = {
        "MAESTRO_STEP": step,
        "MAESTRO_ON_CALL_PM_PHONE": "+14155550123",
        **{
            f"MAESTRO_{table.upper()}_TABLE": aws.table_names[table]
            for table in FUNCTION_TABLES[step]
        },
    }
    if step in EVENT_PUBLISHERS:
        env["MAESTRO_EVENT_BUS_NAME"] = "default"
    return env


@pytest.fixture
def step_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[dict[str, str]], None]]:
    for key in list(os.environ):
        if key.startswith("MAESTRO_"):
            monkeypatch.delenv(key)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline brain: no network

    def apply(env: dict[str, str]) -> None:
        for key, value in env.items():
            monkeypatch.setenv(key, value)

    pipeline_entry._cloud_handlers.cache_clear()
    yield apply
    pipeline_entry._cloud_handlers.cache_clear()


def test_a_step_runs_on_its_own_tables(aws: Any, step_env: Any) -> None:
    step_env(_step_environment(aws, "precheck"))  # its tables: conversations, parties
    state = json.loads(execution_input(package("I smell gas in the hallway")))
    result = pipeline_entry.precheck(state, CONTEXT)  # type: ignore[arg-type]
    assert result["route"] == "escalate"


def test_a_table_outside_the_steps_row_is_refused_by_name(aws: Any, step_env: Any) -> None:
    """Naive: every step was configured (and granted) every table, so precheck could have read
    or written the work-order store; now it is given no name for it, and a call says so. (It
    does read the directory: a number nobody knows costs no model call.)"""
    env = _step_environment(aws, "precheck")
    step_env(env)
    settings = PipelineSettings()
    assert settings.work_orders_table is None
    pipeline, _ = build_pipeline(settings, SystemClock(), key_from_env=False)
    with pytest.raises(UnconfiguredTableError, match="precheck used the work_orders table"):
        pipeline.deps.work_orders.get("WO-204")
    with pytest.raises(RuntimeError, match="precheck published 1 event"):
        pipeline.deps.bus.publish([_event()])
    pipeline.deps.bus.publish([])  # publishing nothing needs no bus
    # The table it does name still works through the same client.
    assert pipeline.deps.buffer.meta("conv-unknown") is None


def test_a_step_function_refuses_another_steps_settings(aws: Any, step_env: Any) -> None:
    step_env(_step_environment(aws, "lease"))
    state = json.loads(execution_input(package("the sink drips")))
    with pytest.raises(ValueError, match="functions/precheck runs precheck, but MAESTRO_STEP says"):
        pipeline_entry.precheck(state, CONTEXT)  # type: ignore[arg-type]


def _event() -> DomainEvent:
    return DomainEvent(
        event_id="pkg-1#decision.recorded",
        type="decision.recorded",
        package_id="pkg-1",
        subject_id="pkg-1",
        claim=claim_dict(
            "decision.recorded", {"decisions": 1, "appended": 1, "route": "reasoning"}
        ),
        occurred_at=T0,
    )


def test_the_webhook_signals_the_probe_queue_and_the_flusher_hands_a_stray_probe_on(
    aws: Any, configured: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the probe queue's setting, the webhook's probe signal goes there (not to the
    debounce queue); a probe signal that still reaches the flusher goes on to it too."""
    sqs = aws.client("sqs")
    probe_url = sqs.create_queue(QueueName="probe")["QueueUrl"]
    monkeypatch.setenv("MAESTRO_PROBE_QUEUE_URL", probe_url)
    monkeypatch.setenv("MAESTRO_SEVERITY_PROBE", "true")
    DynamoPartyDirectory(aws.dynamodb, configured["MAESTRO_PARTIES_TABLE"]).put(MARIA)
    entry._inbound.cache_clear()
    flusher_entry._flusher.cache_clear()
    params = _sms("probe queue", "the bathroom fan rattles all night")
    entry.inbound_handler(twilio_event("/twilio/sms", params), CONTEXT)  # type: ignore[arg-type]
    (probe,) = sqs.receive_message(QueueUrl=probe_url, WaitTimeSeconds=1)["Messages"]
    signal = DebounceSignal.model_validate_json(probe["Body"])
    assert signal.probe == params["MessageSid"]
    sqs.delete_message(QueueUrl=probe_url, ReceiptHandle=probe["ReceiptHandle"])
    debounce = sqs.receive_message(
        QueueUrl=configured["MAESTRO_DEBOUNCE_QUEUE_URL"], MaxNumberOfMessages=10
    ).get("Messages", [])
    assert all(DebounceSignal.model_validate_json(m["Body"]).probe is None for m in debounce)

    result = flusher_entry.flusher_handler(  # type: ignore[arg-type]
        {"Records": [_sqs_record("stray", signal.model_dump_json())]}, CONTEXT
    )
    assert result == {"batchItemFailures": []}
    (handed_on,) = sqs.receive_message(QueueUrl=probe_url, WaitTimeSeconds=1)["Messages"]
    assert DebounceSignal.model_validate_json(handed_on["Body"]) == signal


def test_the_flusher_never_imports_the_model_sdk() -> None:
    """The probes are the prober's: the flusher's import graph leaves anthropic (and the
    brain) out."""
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location(
            "flusher_handler", {str(ROOT / "functions" / "flusher" / "handler.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print("anthropic" in sys.modules, "maestro.brain.probe" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False False"
