"""Properties of the synthesized templates, for every environment in cdk.json."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from infra_synth import ROOT, Synth, cdk_environments

from infra.api import MAX_REQUEST_BYTES, ROUTES, greater_than_pattern
from infra.config import CONTEXT_KEY
from infra.layers import DEPENDENCY_LAYER_DIR, PYTHON_VERSION
from infra.observability import SHAME_METRIC
from infra.stack import MODEL_STEPS, OUTPUT_STATE_MACHINE, TEXTING_STEPS, table_output
from maestro.adapters.eventbridge import EVENT_SOURCE
from maestro.pipeline.entry import STEPS
from maestro.tables import ALL_TABLES
from maestro_dev.cloud import OUTPUT_GATES_TABLE, OUTPUT_LEDGER_TABLE
from maestro_dev.local.stack import ASL_PATH, PLACEHOLDER_FOR_STEP, asl_substitutions

CONFIG = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _function_steps(synth: Synth, env: str) -> dict[str, str]:
    """Function logical id → its functions/<name> directory name (from its function name)."""
    prefix = f"maestro-{env}-"
    return {
        lid: fn["Properties"]["FunctionName"].removeprefix(prefix).replace("-", "_")
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
    }


def _statements(synth: Synth, env: str, role_id: str) -> list[dict[str, Any]]:
    found = []
    for policy in synth.resources(env, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def test_every_environment_is_synthesized(synth: Synth) -> None:
    assert set(synth.templates) == set(cdk_environments()) == {"dev", "staging", "prod"}
    assert (synth.outdir / "manifest.json").is_file()


# -- queues ------------------------------------------------------------------------------------


def test_every_queue_has_a_dlq_or_is_one_and_all_enforce_ssl(synth: Synth, env: str) -> None:
    queues = synth.resources(env, "AWS::SQS::Queue")
    dlqs = {
        q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    }
    for rule in synth.resources(env, "AWS::Events::Rule").values():
        for target in rule["Properties"]["Targets"]:
            dlqs.add(target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0])
    sources = [lid for lid, q in queues.items() if "RedrivePolicy" in q["Properties"]]
    assert len(sources) == 2  # the debounce and watcher queues
    assert set(queues) == set(sources) | dlqs, "a queue is neither redriven nor a DLQ"
    for lid in sources:
        assert queues[lid]["Properties"]["RedrivePolicy"]["maxReceiveCount"] == 5
    secure: set[str] = set()
    for policy in synth.resources(env, "AWS::SQS::QueuePolicy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement.get("Condition") == {
                "Bool": {"aws:SecureTransport": "false"}
            }:
                secure |= {q["Ref"] for q in policy["Properties"]["Queues"]}
    assert secure == set(queues), "a queue does not refuse plain HTTP"
    for queue in queues.values():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True


def test_the_flusher_consumes_the_debounce_queue_in_batches_with_partial_failures(
    synth: Synth, env: str
) -> None:
    Template.from_json(synth.templates[env]).has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "BatchSize": 10,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "ScalingConfig": {"MaximumConcurrency": CONFIG[env]["flusher_max_concurrency"]},
            "EventSourceArn": {"Fn::GetAtt": [Match.string_like_regexp("QueuesDebounce"), "Arn"]},
        },
    )


def test_the_watcher_consumes_the_watcher_queue_and_alone_writes_the_ledger(
    synth: Synth, env: str
) -> None:
    functions = _function_steps(synth, env)
    (watcher,) = [lid for lid, name in functions.items() if name == "watcher"]
    (mapping,) = [
        m["Properties"]
        for m in synth.resources(env, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": watcher}
    ]
    assert mapping["EventSourceArn"]["Fn::GetAtt"][0].startswith("QueuesWatcher")
    assert (mapping["BatchSize"], mapping["FunctionResponseTypes"]) == (
        10,
        ["ReportBatchItemFailures"],
    )
    ledger = synth.templates[env]["Outputs"][table_output("ledger")]["Value"]["Ref"]
    writers = set()
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
        for statement in _statements(synth, env, role):
            resources = [_table_of(r) for r in _list(statement["Resource"])]
            if ledger in resources and "dynamodb:PutItem" in _list(statement["Action"]):
                writers.add(functions[lid])
    assert writers == {"watcher", "sweeper"}
    # The watcher only reads the surfaces it verifies.
    role = synth.resources(env, "AWS::Lambda::Function")[watcher]["Properties"]["Role"]
    writes = {
        _table_of(r)
        for s in _statements(synth, env, role["Fn::GetAtt"][0])
        if "dynamodb:PutItem" in _list(s["Action"])
        for r in _list(s["Resource"])
    }
    assert writes - {None} == {ledger}


def _table_of(resource: Any) -> str | None:
    """The logical id a policy resource names by ``Fn::GetAtt`` (a table's ARN), if any."""
    if isinstance(resource, dict) and "Fn::GetAtt" in resource:
        return str(resource["Fn::GetAtt"][0])
    return None


# -- tables ------------------------------------------------------------------------------------


def test_tables_come_from_the_same_specs_as_the_local_stack(synth: Synth, env: str) -> None:
    tables = synth.resources(env, "AWS::DynamoDB::Table")
    assert len(tables) == len(ALL_TABLES)
    outputs = synth.templates[env]["Outputs"]
    for spec in ALL_TABLES:
        lid = outputs[table_output(spec.logical_name)]["Value"]["Ref"]
        props = tables[lid]["Properties"]
        local = spec.create_table_kwargs("local")
        assert props["KeySchema"] == local["KeySchema"]
        assert sorted(props["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
            local["AttributeDefinitions"], key=lambda a: a["AttributeName"]
        )
        assert props.get("GlobalSecondaryIndexes", []) == local.get("GlobalSecondaryIndexes", [])
        assert props["BillingMode"] == local["BillingMode"]
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["SSESpecification"] == {"SSEEnabled": True}
        if spec.ttl_attribute:
            assert props["TimeToLiveSpecification"] == {
                "AttributeName": spec.ttl_attribute,
                "Enabled": True,
            }
        else:
            assert "TimeToLiveSpecification" not in props
        retain = CONFIG[env]["removal_policy"] == "retain"
        assert tables[lid]["DeletionPolicy"] == ("Retain" if retain else "Delete")
        assert props.get("DeletionProtectionEnabled", False) is retain


# -- the pipeline ------------------------------------------------------------------------------


def _placeholders(text: str) -> set[str]:
    return set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", text))


def test_asl_placeholders_equal_the_cloud_and_the_local_substitutions(
    synth: Synth, env: str
) -> None:
    machines = synth.resources(env, "AWS::StepFunctions::StateMachine")
    assert len(machines) == 1
    (machine,) = machines.values()
    props = machine["Properties"]
    # The definition the stack deploys is the ASL file itself, staged as an asset.
    asset = synth.outdir / f"asset.{props['DefinitionS3Location']['Key']}"
    assert asset.read_text() == ASL_PATH.read_text()
    in_asl = _placeholders(ASL_PATH.read_text())
    cloud = set(props["DefinitionSubstitutions"])
    assert cloud == in_asl == set(asl_substitutions("bus"))
    functions = _function_steps(synth, env)
    for step in STEPS:
        value = props["DefinitionSubstitutions"][PLACEHOLDER_FOR_STEP[step]]
        assert functions[value["Fn::GetAtt"][0]] == step
        assert value["Fn::GetAtt"][1] == "Arn"
    assert props["DefinitionSubstitutions"]["EventBusName"]["Ref"].startswith("EventsBus")


def test_state_machine_is_standard_logged_all_and_traced(synth: Synth, env: str) -> None:
    Template.from_json(synth.templates[env]).has_resource_properties(
        "AWS::StepFunctions::StateMachine",
        {
            "StateMachineType": "STANDARD",
            "TracingConfiguration": {"Enabled": True},
            "LoggingConfiguration": {
                "Level": "ALL",
                # No execution data in the logs: states carry phone numbers and message bodies.
                "IncludeExecutionData": False,
                "Destinations": [Match.any_value()],
            },
        },
    )


def test_state_machine_role_invokes_exactly_the_pipeline_functions(synth: Synth, env: str) -> None:
    (machine,) = synth.resources(env, "AWS::StepFunctions::StateMachine").values()
    role_id = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    role = synth.templates[env]["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role
    assert "Policies" not in role
    functions = _function_steps(synth, env)
    invoke: set[str] = set()
    put_events: list[Any] = []
    for statement in _statements(synth, env, role_id):
        actions = set(_list(statement["Action"]))
        resources = _list(statement["Resource"])
        if actions == {"lambda:InvokeFunction"}:
            invoke |= {functions[r["Fn::GetAtt"][0]] for r in resources}
        elif actions == {"events:PutEvents"}:
            put_events += resources
        else:  # log delivery and X-Ray: no resource-level permissions exist for them
            assert resources == ["*"]
            assert all(a.startswith(("logs:", "xray:")) for a in actions), actions
    assert invoke == set(STEPS)
    assert len(put_events) == 1
    assert put_events[0]["Fn::GetAtt"][0].startswith("EventsBus")


# -- functions ---------------------------------------------------------------------------------


def test_every_function_is_arm64_traced_layered_and_logged(synth: Synth, env: str) -> None:
    resources = synth.templates[env]["Resources"]
    functions = synth.resources(env, "AWS::Lambda::Function")
    assert set(_function_steps(synth, env).values()) == {
        *STEPS,
        "inbound_sms",
        "flusher",
        "watcher",
        "sweeper",
    }
    for lid, fn in functions.items():
        props = fn["Properties"]
        assert props["Architectures"] == ["arm64"], lid
        assert props["Runtime"] == f"python{PYTHON_VERSION}", lid
        assert tuple(map(int, PYTHON_VERSION.split("."))) >= (3, 12)
        assert props["TracingConfig"] == {"Mode": "Active"}, lid
        assert props["Handler"] == "handler.handler"
        assert len(props["Layers"]) == 2
        variables = props["Environment"]["Variables"]
        assert variables["POWERTOOLS_SERVICE_NAME"] == "maestro"
        assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "Maestro"
        group = resources[props["LoggingConfig"]["LogGroup"]["Ref"]]
        assert group["Properties"]["RetentionInDays"] == CONFIG[env]["log_retention_days"]
        role = resources[props["Role"]["Fn::GetAtt"][0]]["Properties"]
        assert "ManagedPolicyArns" not in role, f"{lid}: a managed policy on its role"


def test_secrets_reach_functions_by_arn_only(synth: Synth, env: str) -> None:
    secrets = synth.resources(env, "AWS::SecretsManager::Secret")
    assert len(secrets) == 3
    functions = _function_steps(synth, env)
    readers: dict[str, set[str]] = {lid: set() for lid in secrets}
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        variables = fn["Properties"]["Environment"]["Variables"]
        for name, value in variables.items():
            if "SECRET" in name or "TOKEN" in name or name.endswith("_KEY"):
                assert isinstance(value, dict), (lid, name)
                assert value["Ref"] in secrets, (lid, name)
                readers[value["Ref"]].add(functions[lid])
    by_name = {lid.split("Secrets", 1)[1]: who for lid, who in readers.items()}
    twilio = next(v for k, v in by_name.items() if k.startswith("TwilioAuthToken"))
    app = next(v for k, v in by_name.items() if k.startswith("AppSigningSecret"))
    anthropic = next(v for k, v in by_name.items() if k.startswith("AnthropicApiKey"))
    assert app == {"inbound_sms"}
    # Twilio's token: the webhook checks signatures with it; the steps that text and the
    # watcher (which reads texts back) call Twilio with it.
    assert twilio == {"inbound_sms", *TEXTING_STEPS, "watcher"}
    assert anthropic == set(MODEL_STEPS) | {"flusher"}  # the flusher runs the severity probe
    # ... and only those functions' roles may read them.
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        role_id = fn["Properties"]["Role"]["Fn::GetAtt"][0]
        readable = {
            r["Ref"]
            for s in _statements(synth, env, role_id)
            if "secretsmanager:GetSecretValue" in _list(s["Action"])
            for r in _list(s["Resource"])
        }
        assert readable == {s for s, who in readers.items() if functions[lid] in who}, lid


def test_reserved_concurrency_protects_the_model_api_where_configured(
    synth: Synth, env: str
) -> None:
    functions = _function_steps(synth, env)
    reserved = {
        functions[lid]: fn["Properties"]["ReservedConcurrentExecutions"]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
        if "ReservedConcurrentExecutions" in fn["Properties"]
    }
    expected = CONFIG[env].get("brain_reserved_concurrency")
    assert reserved == ({"brain": expected} if expected else {})


def test_settings_reach_the_functions(synth: Synth, env: str) -> None:
    functions = _function_steps(synth, env)
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        variables = fn["Properties"]["Environment"]["Variables"]
        if functions[lid] in ("inbound_sms", "flusher"):
            assert variables["MAESTRO_IDLE_WINDOW_SECONDS"] == str(
                CONFIG[env]["idle_window_seconds"]
            )
            assert variables["MAESTRO_MAX_WAIT_SECONDS"] == str(CONFIG[env]["max_wait_seconds"])
            if functions[lid] == "flusher":
                assert variables["MAESTRO_STEP_MODE"] == str(CONFIG[env]["step_mode"]).lower()
                assert variables["MAESTRO_CHEAP_MODEL_ID"] == CONFIG[env]["cheap_model_id"]
            else:
                assert variables["MAESTRO_SEVERITY_PROBE"] == "true"
                # The webhooks accept the configured account's alone.
                assert variables["MAESTRO_TWILIO_ACCOUNT_SID"] == CONFIG[env]["twilio_account_sid"]
        elif functions[lid] in ("watcher", "sweeper"):
            assert "MAESTRO_LEDGER_TABLE" in variables
            assert "MAESTRO_STRONG_MODEL_ID" not in variables  # read-verify calls no model
        else:
            assert variables["MAESTRO_ON_CALL_PM_PHONE"] == CONFIG[env]["on_call_pm_phone"]
            has_model = "MAESTRO_STRONG_MODEL_ID" in variables
            assert has_model == (functions[lid] in MODEL_STEPS)
            texts = "MAESTRO_TWILIO_STATUS_CALLBACK_URL" in variables
            assert texts == (functions[lid] in TEXTING_STEPS)
            if texts:
                assert variables["MAESTRO_TWILIO_ACCOUNT_SID"] == CONFIG[env]["twilio_account_sid"]
                assert variables["MAESTRO_TWILIO_FROM_NUMBER"] == CONFIG[env]["twilio_from_number"]
                # Status callbacks go to this stack's own webhook: the API's URL + twilio/status.
                callback = json.dumps(variables["MAESTRO_TWILIO_STATUS_CALLBACK_URL"])
                assert "twilio/status" in callback
                assert "WebhooksApi" in callback
            if has_model:
                assert variables["MAESTRO_STRONG_MODEL_ID"] == CONFIG[env]["strong_model_id"]


# -- the webhook API ---------------------------------------------------------------------------


def test_the_routes_exist_with_their_signature_headers(synth: Synth, env: str) -> None:
    resources = synth.resources(env, "AWS::ApiGateway::Resource")
    parent_of = {
        lid: (r["Properties"]["ParentId"], r["Properties"]["PathPart"])
        for lid, r in resources.items()
    }

    def path(lid: str) -> str:
        parts = []
        while lid in parent_of:
            parent, part = parent_of[lid]
            parts.append(part)
            lid = parent.get("Ref", "") if "Ref" in parent else ""
        return "/" + "/".join(reversed(parts))

    methods = {
        path(m["Properties"]["ResourceId"]["Ref"]): m["Properties"]
        for m in synth.resources(env, "AWS::ApiGateway::Method").values()
    }
    assert set(methods) == set(ROUTES)
    for route, props in methods.items():
        assert props["HttpMethod"] == "POST"
        assert props["Integration"]["Type"] == "AWS_PROXY"
        assert props["RequestParameters"] == {
            f"method.request.header.{h}": True for h in ROUTES[route]
        }
        assert "RequestValidatorId" in props


def test_stage_throttling_access_logs_and_tracing(synth: Synth, env: str) -> None:
    Template.from_json(synth.templates[env]).has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "TracingEnabled": True,
            "AccessLogSetting": {"DestinationArn": Match.any_value(), "Format": Match.any_value()},
            "MethodSettings": [
                Match.object_like(
                    {
                        "ThrottlingRateLimit": CONFIG[env]["api_rate_limit"],
                        "ThrottlingBurstLimit": CONFIG[env]["api_burst_limit"],
                        "DataTraceEnabled": False,
                    }
                )
            ],
        },
    )


def test_the_edge_refuses_bodies_the_handler_could_never_accept(synth: Synth, env: str) -> None:
    (patterns,) = synth.resources(env, "AWS::WAFv2::RegexPatternSet").values()
    (pattern,) = patterns["Properties"]["RegularExpressionList"]
    assert pattern == greater_than_pattern(MAX_REQUEST_BYTES)
    assert re.match(pattern, str(MAX_REQUEST_BYTES + 1))
    assert not re.match(pattern, str(MAX_REQUEST_BYTES))
    (acl,) = synth.resources(env, "AWS::WAFv2::WebACL").values()
    rule = acl["Properties"]["Rules"][0]
    assert rule["Action"]["Block"]["CustomResponse"]["ResponseCode"] == 413
    header = rule["Statement"]["RegexPatternSetReferenceStatement"]["FieldToMatch"]
    assert header == {"SingleHeader": {"Name": "content-length"}}
    assert len(synth.resources(env, "AWS::WAFv2::WebACLAssociation")) == 1


# -- events and observability ------------------------------------------------------------------


def test_domain_events_go_to_the_watcher_queue_and_the_archive(synth: Synth, env: str) -> None:
    rules = synth.resources(env, "AWS::Events::Rule").values()
    (rule,) = [r for r in rules if "EventPattern" in r["Properties"]]
    assert rule["Properties"]["EventPattern"] == {"source": [EVENT_SOURCE]}
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"]["Fn::GetAtt"][0].startswith("QueuesWatcher")
    (archive,) = synth.resources(env, "AWS::Events::Archive").values()
    assert archive["Properties"]["EventPattern"] == {"source": [EVENT_SOURCE]}
    assert archive["Properties"]["RetentionDays"] == CONFIG[env]["archive_retention_days"]


def test_the_sweeper_runs_every_five_minutes_with_a_dlq(synth: Synth, env: str) -> None:
    functions = _function_steps(synth, env)
    (sweeper,) = [lid for lid, name in functions.items() if name == "sweeper"]
    (rule,) = [
        r["Properties"]
        for r in synth.resources(env, "AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
    ]
    assert rule["ScheduleExpression"] == "rate(5 minutes)"
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [sweeper, "Arn"]}
    assert "DeadLetterConfig" in target
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2


def test_the_alarms_exist_and_notify_the_topic(synth: Synth, env: str) -> None:
    alarms = {
        a["Properties"]["AlarmName"].removeprefix(f"maestro-{env}-"): a["Properties"]
        for a in synth.resources(env, "AWS::CloudWatch::Alarm").values()
    }
    assert set(alarms) == {
        "dlq-debounce",
        "dlq-watcher",
        "dlq-event-delivery",
        "dlq-sweep-delivery",
        "send-failures",
        "failed-executions",
        "fail-open",
        "fallback-rate",
        "shame-rows",
    }
    (topic_id,) = synth.resources(env, "AWS::SNS::Topic")
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["TreatMissingData"] == "notBreaching"
    assert alarms["fallback-rate"]["Threshold"] == CONFIG[env]["fallback_rate_threshold"]
    shame = alarms["shame-rows"]
    assert shame["MetricName"] == SHAME_METRIC
    assert shame["Namespace"] == "Maestro"
    assert len(synth.resources(env, "AWS::CloudWatch::Dashboard")) == 1


def test_outputs_for_the_operators(synth: Synth, env: str) -> None:
    outputs = synth.templates[env]["Outputs"]
    assert OUTPUT_STATE_MACHINE in outputs
    assert table_output("gates") == OUTPUT_GATES_TABLE  # what `maestro step --stack` reads
    assert table_output("ledger") == OUTPUT_LEDGER_TABLE  # what `maestro ledger --stack` reads
    assert "TwilioSmsWebhookUrl" in outputs
    for spec in ALL_TABLES:
        assert table_output(spec.logical_name) in outputs


# -- the layers --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def layers(synth: Synth) -> dict[str, Any]:
    return dict(synth.resources("dev", "AWS::Lambda::LayerVersion").items())


def test_the_runtime_layer_holds_runtime_code_only(synth: Synth, layers: dict[str, Any]) -> None:
    (runtime,) = [layer for lid, layer in layers.items() if lid.startswith("LayersRuntime")]
    staged = synth.outdir / runtime["Metadata"]["aws:asset:path"]
    package = staged / "python" / "maestro"
    assert (package / "pipeline" / "entry.py").is_file()
    for dev_only in ("local", "cli.py", "demo.py", "lanes/fakes.py"):
        assert not (package / dev_only).exists(), dev_only
    assert not list(staged.rglob("__pycache__"))
    assert not list(staged.rglob("*.egg-info"))
    assert not (staged / "python" / "maestro_dev").exists()
    for source in package.rglob("*.py"):
        text = source.read_text()
        assert not re.search(r"^\s*(import|from)\s+(moto|maestro_dev)\b", text, re.M), source


def test_tests_bundle_nothing(synth: Synth, layers: dict[str, Any]) -> None:
    """Bundling is skipped: the dependency layer's asset is its source directory, unbuilt."""
    (deps,) = [layer for lid, layer in layers.items() if lid.startswith("LayersDependencies")]
    assert (synth.outdir / deps["Metadata"]["aws:asset:path"]).resolve() == DEPENDENCY_LAYER_DIR
    assert "not bundled" in synth.stderr
