"""Properties of the synthesized templates, for every environment in cdk.json."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from infra_synth import Synth, cdk_environments, synthesized_environments
from infra_synth import policy_resource as _resource

from infra.api import MAX_REQUEST_BYTES, ROUTES, greater_than_pattern, waf_regex
from infra.config import DEFAULT_WEBHOOK_RATE_LIMIT_PER_IP
from infra.events import wo_created_pattern
from infra.layers import DEPENDENCY_LAYER_DIR, PYTHON_VERSION
from infra.observability import SHAME_METRIC, SHAME_RESOLVED_METRIC
from infra.pipeline import asl_path
from infra.stack import (
    COMPLETES_WAITS,
    MODEL_STEPS,
    OUTPUT_STATE_MACHINE,
    TEXTING_STEPS,
    table_output,
)
from maestro.access import (
    DISPATCH_STEPS,
    EVENT_PUBLISHERS,
    FUNCTION_TABLES,
    READ_ACTIONS,
    STATE_MACHINES,
    WRITE_ACTIONS,
    placeholder,
)
from maestro.adapters.eventbridge import EVENT_SOURCE
from maestro.adapters.webhook_auth import SIGNATURE_HEADER_PATTERNS, app_signature, twilio_signature
from maestro.observability import DAILY_CAP_METRIC, UNDELIVERABLE_PAGE_METRIC
from maestro.pipeline.entry import STEPS
from maestro.stack_outputs import OUTPUT_GATES_TABLE, OUTPUT_LEDGER_TABLE
from maestro.tables import ALL_TABLES, COMPLETION_SHARDS

CONFIG = synthesized_environments()  # cdk.json's, with staging's and prod's people


Template_ = dict[str, Any]


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
            if "DeadLetterConfig" in target:
                dlqs.add(target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0])
            else:  # the stranded sweep's schedule: a constant record on the debounce queue
                assert target["Arn"]["Fn::GetAtt"][0].startswith("QueuesDebounce"), target
    sources = [lid for lid, q in queues.items() if "RedrivePolicy" in q["Properties"]]
    # The debounce, probe, watcher, inbound fallback and wo-start queues.
    assert len(sources) == 5
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


def test_the_prober_consumes_the_probe_queue_and_the_flusher_calls_no_model(
    synth: Synth, env: str
) -> None:
    """The severity probe off the flusher's path (docs/headroom.md): the probe queue (with its
    DLQ, redrive and alarm) → the prober in batches of 10, partial failures, its own cap; the
    webhooks and the flusher may send to the probe queue, the prober to the debounce queue."""
    template = Template.from_json(synth.templates[env])
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "BatchSize": 10,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "ScalingConfig": {"MaximumConcurrency": CONFIG[env]["prober_max_concurrency"]},
            "EventSourceArn": {"Fn::GetAtt": [Match.string_like_regexp("QueuesProbe"), "Arn"]},
        },
    )
    queues = synth.resources(env, "AWS::SQS::Queue")
    (probe,) = [q for lid, q in queues.items() if re.fullmatch(r"QueuesProbe[0-9A-F]{8}", lid)]
    redrive = probe["Properties"]["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"]["Fn::GetAtt"][0].startswith("QueuesProbeDlq")
    assert "dlq-probe" in _alarms(synth, env)
    functions = _function_steps(synth, env)
    senders: dict[str, set[str]] = {"QueuesProbe": set(), "QueuesDebounce": set()}
    resources = synth.templates[env]["Resources"]
    roles = {
        fn["Properties"]["Role"]["Fn::GetAtt"][0]: functions[lid]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
    }
    for policy in synth.resources(env, "AWS::IAM::Policy").values():
        for role in policy["Properties"].get("Roles", []):
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                actions = statement["Action"]
                actions = actions if isinstance(actions, list) else [actions]
                if "sqs:SendMessage" not in actions:
                    continue
                targets = statement["Resource"]
                for target in targets if isinstance(targets, list) else [targets]:
                    arn = target.get("Fn::GetAtt", [""])[0] if isinstance(target, dict) else ""
                    for queue in senders:
                        if re.fullmatch(queue + r"[0-9A-F]{8}", arn) and role["Ref"] in roles:
                            senders[queue].add(roles[role["Ref"]])
    assert senders["QueuesProbe"] == {"inbound_sms", "inbound_fallback", "flusher"}
    assert senders["QueuesDebounce"] == {"inbound_sms", "inbound_fallback", "prober"}
    variables = {
        functions[lid]: fn["Properties"]["Environment"]["Variables"]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
    }
    assert "MAESTRO_CHEAP_MODEL_ID" not in variables["flusher"]
    assert "MAESTRO_ANTHROPIC_API_KEY_SECRET" not in variables["flusher"]
    assert variables["prober"]["MAESTRO_CHEAP_MODEL_ID"] == CONFIG[env]["cheap_model_id"]
    for name in ("inbound_sms", "inbound_fallback", "flusher"):
        url = variables[name]["MAESTRO_PROBE_QUEUE_URL"]
        assert url["Ref"].startswith("QueuesProbe"), name
        assert resources[url["Ref"]]["Type"] == "AWS::SQS::Queue"


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


def _machines(synth: Synth, env: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """``STATE_MACHINES`` name → (logical id, properties) of its state machine."""
    by_name = {
        m["Properties"]["StateMachineName"]: (lid, m["Properties"])
        for lid, m in synth.resources(env, "AWS::StepFunctions::StateMachine").items()
    }
    assert len(by_name) == len(STATE_MACHINES)
    return {
        machine: by_name[f"maestro-{env}-{machine.replace('_', '-')}"] for machine in STATE_MACHINES
    }


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_the_cloud_substitutes_every_placeholder_of_the_asl(
    synth: Synth, env: str, machine: str
) -> None:
    """Each machine is its ASL file, and every placeholder in it is substituted: a step's by
    that step's function, the bus only in the package pipeline (which puts events itself)."""
    _, props = _machines(synth, env)[machine]
    # The definition the stack deploys is the ASL file itself, staged as an asset.
    asset = synth.outdir / f"asset.{props['DefinitionS3Location']['Key']}"
    assert asset.read_text() == asl_path(machine).read_text()
    in_asl = _placeholders(asl_path(machine).read_text())
    cloud = set(props["DefinitionSubstitutions"])
    assert cloud == in_asl
    functions = _function_steps(synth, env)
    steps = STATE_MACHINES[machine][1]
    for step in steps:
        value = props["DefinitionSubstitutions"][placeholder(step)]
        assert functions[value["Fn::GetAtt"][0]] == step
        assert value["Fn::GetAtt"][1] == "Arn"
    others = cloud - {placeholder(step) for step in steps}
    if machine == "package_pipeline":
        assert others == {"EventBusName"}
        assert props["DefinitionSubstitutions"]["EventBusName"]["Ref"].startswith("EventsBus")
    else:
        assert others == set()


def test_the_work_order_machine_has_the_consoles_state_names(synth: Synth, env: str) -> None:
    """Named for the Step Functions console (docs/dispatch.md): a gather, a judge, an offer to
    each of the three vendors by number, the on-call PM's page; its waits time out."""
    _, props = _machines(synth, env)["work_order"]
    asset = synth.outdir / f"asset.{props['DefinitionS3Location']['Key']}"
    states: dict[str, Any] = json.loads(asset.read_text())["States"]
    names = set(states)
    assert any(n.startswith("Gather: ") for n in names)
    assert any(n.startswith("Judge: ") for n in names)
    for n in (1, 2, 3):
        assert f"Dispatch: offer to vendor {n} of 3" in names
        offer = states[f"Dispatch: offer to vendor {n} of 3"]
        assert offer["Resource"].endswith(".waitForTaskToken")
        assert "TimeoutSecondsPath" in offer or "TimeoutSeconds" in offer
    assert "Dispatch: page the on-call PM" in names
    assert "Stopped: the work order closed" in names
    # Every wait on a person has a deadline: none may wait forever.
    for name, state in states.items():
        if str(state.get("Resource", "")).endswith(".waitForTaskToken"):
            assert "TimeoutSecondsPath" in state or "TimeoutSeconds" in state, name


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_state_machines_are_standard_logged_and_traced(
    synth: Synth, env: str, machine: str
) -> None:
    _, props = _machines(synth, env)[machine]
    assert props["StateMachineType"] == "STANDARD"
    assert props["TracingConfiguration"] == {"Enabled": True}
    logging = props["LoggingConfiguration"]
    # Every state's event, unless the environment logs failures only, for cost (prod).
    assert logging["Level"] == CONFIG[env].get("state_machine_log_level", "ALL")
    # No execution data in the logs: states carry phone numbers and message bodies.
    assert logging["IncludeExecutionData"] is False
    (destination,) = logging["Destinations"]
    group = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    retention = synth.templates[env]["Resources"][group]["Properties"]["RetentionInDays"]
    assert retention == CONFIG[env]["log_retention_days"]


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_a_state_machines_role_invokes_exactly_its_own_functions(
    synth: Synth, env: str, machine: str
) -> None:
    """Naive: one role for both machines, or ``lambda:InvokeFunction`` on every function: the
    work order machine could run the package pipeline's steps, and the other way round."""
    _, props = _machines(synth, env)[machine]
    role_id = props["RoleArn"]["Fn::GetAtt"][0]
    others = {m for m, (_, p) in _machines(synth, env).items() if p["RoleArn"] != props["RoleArn"]}
    assert others == set(STATE_MACHINES) - {machine}, "a role shared by two machines"
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
    assert invoke == set(STATE_MACHINES[machine][1])
    if machine == "package_pipeline":
        assert len(put_events) == 1
        assert put_events[0]["Fn::GetAtt"][0].startswith("EventsBus")
    else:  # its steps publish their events themselves
        assert put_events == []


def test_only_the_starter_starts_work_orders_and_only_the_answering_steps_complete_waits(
    synth: Synth, env: str
) -> None:
    """wo_start alone may start the work order machine (and nothing else); act alone (its lanes
    answer the waits) may send task success, on the work order machine only (never the package
    pipeline's step gates: those are released by the operator's credentials)."""
    machines = _machines(synth, env)
    wo_machine, _ = machines["work_order"]
    functions = _function_steps(synth, env)
    starters: dict[str, set[str]] = {}
    answerers: dict[str, set[str]] = {}
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        for statement in _statements(synth, env, fn["Properties"]["Role"]["Fn::GetAtt"][0]):
            for action in _list(statement["Action"]):
                if not action.startswith("states:"):
                    continue
                on = {_resource(r) for r in _list(statement["Resource"])}
                if action == "states:StartExecution":
                    starters.setdefault(functions[lid], set()).update(on)
                elif action == "states:SendTaskSuccess":
                    answerers.setdefault(functions[lid], set()).update(on)
                else:
                    raise AssertionError(f"{functions[lid]}: {action}")
    assert starters["wo_start"] == {wo_machine}
    assert set(starters) == {"wo_start", "flusher"}
    assert starters["flusher"] == {machines["package_pipeline"][0]}
    assert answerers == {step: {wo_machine} for step in COMPLETES_WAITS}
    assert set(answerers) == {"act"}
    (starter,) = [lid for lid, name in functions.items() if name == "wo_start"]
    variables = synth.resources(env, "AWS::Lambda::Function")[starter]["Properties"]["Environment"][
        "Variables"
    ]
    assert variables["MAESTRO_WORK_ORDER_MACHINE_ARN"] == {"Ref": wo_machine}


def test_wo_created_goes_to_the_wo_start_queue_and_its_starter(synth: Synth, env: str) -> None:
    """Naive: every domain event starts an execution, or the starter reads the watcher's queue
    (each event consumed once: the watcher would miss them)."""
    rules = [
        r["Properties"]
        for r in synth.resources(env, "AWS::Events::Rule").values()
        if r["Properties"].get("EventPattern", {}).get("detail-type")
    ]
    (rule,) = rules
    assert rule["EventPattern"] == {"source": [EVENT_SOURCE], "detail-type": ["wo.created"]}
    assert wo_created_pattern().detail_type == ["wo.created"]
    (bus,) = synth.resources(env, "AWS::Events::EventBus")
    assert rule["EventBusName"] == {"Ref": bus}
    (target,) = rule["Targets"]
    queue = target["Arn"]["Fn::GetAtt"][0]
    assert queue.startswith("QueuesWoStart")
    # EventBridge's own failures to deliver go to a DLQ of their own (alarmed).
    delivery_dlq = target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
    assert delivery_dlq.startswith("EventsWoCreatedDeliveryDlq")
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 185
    queues = synth.resources(env, "AWS::SQS::Queue")
    redrive = queues[queue]["Properties"]["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"]["Fn::GetAtt"][0].startswith("QueuesWoStartDlq")
    assert redrive["maxReceiveCount"] == 5
    functions = _function_steps(synth, env)
    (mapping,) = [
        m["Properties"]
        for m in synth.resources(env, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["EventSourceArn"]["Fn::GetAtt"][0] == queue
    ]
    assert functions[mapping["FunctionName"]["Ref"]] == "wo_start"
    assert (mapping["BatchSize"], mapping["FunctionResponseTypes"]) == (
        10,
        ["ReportBatchItemFailures"],
    )
    # AWS's advice for an event source: visibility at least six times the function's timeout.
    (starter,) = [lid for lid, name in functions.items() if name == "wo_start"]
    timeout = synth.resources(env, "AWS::Lambda::Function")[starter]["Properties"]["Timeout"]
    assert queues[queue]["Properties"]["VisibilityTimeout"] >= 6 * timeout


# -- functions ---------------------------------------------------------------------------------


def test_every_function_is_arm64_traced_layered_and_logged(synth: Synth, env: str) -> None:
    resources = synth.templates[env]["Resources"]
    functions = synth.resources(env, "AWS::Lambda::Function")
    assert set(_function_steps(synth, env).values()) == {
        *STEPS,
        *DISPATCH_STEPS,
        "wo_start",
        "inbound_sms",
        "inbound_fallback",
        "flusher",
        "prober",
        "watcher",
        "sweeper",
        "digest",
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
    assert app == {"inbound_sms", "inbound_fallback"}  # the drain runs the same route
    # Twilio's token: the webhook and the fallback drain check signatures with it; the steps
    # that text and the watcher (which reads texts back) call Twilio with it.
    assert twilio == {"inbound_sms", "inbound_fallback", *TEXTING_STEPS, "watcher", "digest"}
    assert anthropic == set(MODEL_STEPS) | {"prober"}  # the prober runs the severity probe
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


# -- least privilege: every role's policy is its row of maestro.access, and nothing more -------

_SEND = {"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"}
_CONSUME = {
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",
    "sqs:ReceiveMessage",
}
_SECRET = {"secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}


def _granted(synth: Synth, env: str, role_id: str) -> set[tuple[str, str]]:
    pairs = set()
    for statement in _statements(synth, env, role_id):
        assert statement["Effect"] == "Allow", statement
        assert set(statement) == {"Action", "Effect", "Resource"}, statement  # no NotAction…
        for action in _list(statement["Action"]):
            pairs |= {(action, _resource(r)) for r in _list(statement["Resource"])}
    return pairs


def _expected(synth: Synth, env: str, lid: str, name: str) -> set[tuple[str, str]]:
    """What the function's role may do: its own log group and X-Ray, its row of tables (read or
    read-write), the bus if it publishes, and the secrets, queue and state machine its settings
    name (the queue it consumes as an event source)."""
    template = synth.templates[env]
    props = template["Resources"][lid]["Properties"]
    group = props["LoggingConfig"]["LogGroup"]["Ref"]
    expected = {
        ("logs:CreateLogStream", group),
        ("logs:PutLogEvents", group),
        ("xray:PutTelemetryRecords", "*"),
        ("xray:PutTraceSegments", "*"),
    }
    for table, access in FUNCTION_TABLES[name].items():
        table_id = template["Outputs"][table_output(table)]["Value"]["Ref"]
        actions = READ_ACTIONS | (WRITE_ACTIONS if access == "write" else frozenset())
        expected |= {(action, table_id) for action in actions}
    if name in EVENT_PUBLISHERS:
        (bus,) = synth.resources(env, "AWS::Events::EventBus")
        expected.add(("events:PutEvents", bus))
    secrets = synth.resources(env, "AWS::SecretsManager::Secret")
    queues = synth.resources(env, "AWS::SQS::Queue")
    machines = synth.resources(env, "AWS::StepFunctions::StateMachine")
    for value in props["Environment"]["Variables"].values():
        named = value.get("Ref") if isinstance(value, dict) else None
        if named in secrets:
            expected |= {(action, named) for action in _SECRET}
        elif named in queues:
            expected |= {(action, named) for action in _SEND}
        elif named in machines:
            expected.add(("states:StartExecution", named))
    if name in COMPLETES_WAITS:  # a wait's answer comes through the package pipeline
        expected.add(("states:SendTaskSuccess", _machines(synth, env)["work_order"][0]))
    for mapping in synth.resources(env, "AWS::Lambda::EventSourceMapping").values():
        if mapping["Properties"]["FunctionName"] == {"Ref": lid}:
            queue = _resource(mapping["Properties"]["EventSourceArn"])
            expected |= {(action, queue) for action in _CONSUME}
    return expected


def test_every_role_is_granted_its_row_of_tables_and_nothing_more(synth: Synth, env: str) -> None:
    """Naive: every pipeline step's role could read and write every pipeline table, PutItem
    and DeleteItem on the party directory included."""
    functions = _function_steps(synth, env)
    assert set(functions.values()) == set(FUNCTION_TABLES)
    for lid, name in functions.items():
        role = synth.resources(env, "AWS::Lambda::Function")[lid]["Properties"]["Role"]
        granted = _granted(synth, env, role["Fn::GetAtt"][0])
        expected = _expected(synth, env, lid, name)
        assert granted - expected == set(), f"{name}: granted beyond its row"
        assert expected - granted == set(), f"{name}: its row is not granted"
    parties = synth.templates[env]["Outputs"][table_output("parties")]["Value"]["Ref"]
    for lid, name in functions.items():
        role = synth.resources(env, "AWS::Lambda::Function")[lid]["Properties"]["Role"]
        on_parties = {a for a, r in _granted(synth, env, role["Fn::GetAtt"][0]) if r == parties}
        assert not on_parties & WRITE_ACTIONS, name


def test_each_step_is_configured_with_its_row_and_says_which_step_it_is(
    synth: Synth, env: str
) -> None:
    for lid, name in _function_steps(synth, env).items():
        variables = synth.resources(env, "AWS::Lambda::Function")[lid]["Properties"]["Environment"][
            "Variables"
        ]
        tables = {
            key.removeprefix("MAESTRO_").removesuffix("_TABLE").lower()
            for key in variables
            if key.endswith("_TABLE")
        }
        assert tables == set(FUNCTION_TABLES[name]), name
        if name in STEPS or name in DISPATCH_STEPS:
            assert variables["MAESTRO_STEP"] == name
            assert ("MAESTRO_EVENT_BUS_NAME" in variables) == (name in EVENT_PUBLISHERS), name


def test_reserved_concurrency_protects_the_model_api_where_configured(
    synth: Synth, env: str
) -> None:
    functions = _function_steps(synth, env)
    reserved = {
        functions[lid]: fn["Properties"]["ReservedConcurrentExecutions"]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
        if "ReservedConcurrentExecutions" in fn["Properties"]
    }
    brain = CONFIG[env].get("brain_reserved_concurrency")
    expected = {
        **CONFIG[env].get("reserved_concurrency", {}),
        **({"brain": brain} if brain else {}),
    }
    assert reserved == expected


def test_the_sweeper_gets_its_reservation_and_fan_out_where_configured(
    synth: Synth, env: str
) -> None:
    functions = _function_steps(synth, env)
    (sweeper,) = [
        fn["Properties"]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
        if functions[lid] == "sweeper"
    ]
    reserved = CONFIG[env].get("reserved_concurrency", {}).get("sweeper")
    assert sweeper.get("ReservedConcurrentExecutions") == reserved
    fan_out = CONFIG[env].get("sweep_concurrency")
    assert sweeper["Environment"]["Variables"].get("MAESTRO_SWEEP_CONCURRENCY") == (
        str(fan_out) if fan_out else None
    )
    if env == "staging":  # the one that sets them (tests/infra/infra_synth.py)
        assert (reserved, fan_out) == (1, 16)


def test_settings_reach_the_functions(synth: Synth, env: str) -> None:
    functions = _function_steps(synth, env)
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        variables = fn["Properties"]["Environment"]["Variables"]
        if functions[lid] in ("inbound_sms", "inbound_fallback", "flusher"):
            assert variables["MAESTRO_IDLE_WINDOW_SECONDS"] == str(
                CONFIG[env]["idle_window_seconds"]
            )
            assert variables["MAESTRO_MAX_WAIT_SECONDS"] == str(CONFIG[env]["max_wait_seconds"])
            if functions[lid] == "flusher":
                assert variables["MAESTRO_STEP_MODE"] == str(CONFIG[env]["step_mode"]).lower()
                assert "MAESTRO_CHEAP_MODEL_ID" not in variables  # the prober probes
            else:
                assert variables["MAESTRO_SEVERITY_PROBE"] == "true"
                # The webhooks accept the configured account's alone.
                assert variables["MAESTRO_TWILIO_ACCOUNT_SID"] == CONFIG[env]["twilio_account_sid"]
        elif functions[lid] == "prober":
            assert variables["MAESTRO_CHEAP_MODEL_ID"] == CONFIG[env]["cheap_model_id"]
            assert "MAESTRO_ON_CALL_PM_PHONE" not in variables  # it pages no one
        elif functions[lid] == "wo_start":  # the machine it starts, and nothing else
            assert {k for k in variables if k.startswith("MAESTRO_")} == {
                "MAESTRO_WORK_ORDER_MACHINE_ARN"
            }
        elif functions[lid] in ("watcher", "sweeper"):
            assert "MAESTRO_LEDGER_TABLE" in variables
            assert "MAESTRO_STRONG_MODEL_ID" not in variables  # read-verify calls no model
        else:
            assert variables["MAESTRO_ON_CALL_PM_PHONE"] == CONFIG[env]["on_call_pm_phone"]
            has_model = "MAESTRO_STRONG_MODEL_ID" in variables
            assert has_model == (functions[lid] in MODEL_STEPS)
            texts = "MAESTRO_TWILIO_STATUS_CALLBACK_URL" in variables
            assert texts == (functions[lid] in {*TEXTING_STEPS, "digest"})
            if texts:
                assert variables["MAESTRO_TWILIO_ACCOUNT_SID"] == CONFIG[env]["twilio_account_sid"]
                assert variables["MAESTRO_TWILIO_FROM_NUMBER"] == CONFIG[env]["twilio_from_number"]
                # Status callbacks go to this stack's own webhook: the API's URL + twilio/status.
                callback = json.dumps(variables["MAESTRO_TWILIO_STATUS_CALLBACK_URL"])
                assert "twilio/status" in callback
                assert "WebhooksApi" in callback
            if has_model:
                assert variables["MAESTRO_STRONG_MODEL_ID"] == CONFIG[env]["strong_model_id"]
                composes = CONFIG[env].get("compose_replies", True)
                assert variables["MAESTRO_COMPOSE_REPLIES"] == str(composes).lower()


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

    webhook_api = next(
        lid
        for lid, api in synth.resources(env, "AWS::ApiGateway::RestApi").items()
        if api["Properties"]["Name"].endswith("-webhooks")
    )
    methods = {
        path(m["Properties"]["ResourceId"]["Ref"]): m["Properties"]
        for m in synth.resources(env, "AWS::ApiGateway::Method").values()
        if m["Properties"]["RestApiId"] == {"Ref": webhook_api}
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
    # One web ACL in front of both stages: the webhook API's and the fallback API's.
    associations = synth.resources(env, "AWS::WAFv2::WebACLAssociation").values()
    assert len(associations) == 2
    assert {json.dumps(a["Properties"]["WebACLArn"]) for a in associations} == {
        json.dumps({"Fn::GetAtt": [next(iter(synth.resources(env, "AWS::WAFv2::WebACL"))), "Arn"]})
    }


# -- the web ACL, evaluated: which requests it lets through --------------------------------------


def _field(field: dict[str, Any], request: dict[str, Any]) -> str | None:
    if "UriPath" in field:
        return str(request["path"])
    header: str = field["SingleHeader"]["Name"]
    value = request["headers"].get(header.lower())
    return None if value is None else str(value)


def _matches(statement: dict[str, Any], request: dict[str, Any], template: Template_) -> bool:
    """AWS WAF's verdict on one statement, for the kinds this ACL uses (a regex matches anywhere
    in the field, as WAF's does; an absent header matches nothing)."""
    if "AndStatement" in statement:
        return all(_matches(s, request, template) for s in statement["AndStatement"]["Statements"])
    if "OrStatement" in statement:
        return any(_matches(s, request, template) for s in statement["OrStatement"]["Statements"])
    if "NotStatement" in statement:
        return not _matches(statement["NotStatement"]["Statement"], request, template)
    if "RegexMatchStatement" in statement:
        regex = statement["RegexMatchStatement"]
        value = _field(regex["FieldToMatch"], request)
        return value is not None and re.search(regex["RegexString"], value) is not None
    if "RegexPatternSetReferenceStatement" in statement:
        ref = statement["RegexPatternSetReferenceStatement"]
        patterns = template["Resources"][ref["Arn"]["Fn::GetAtt"][0]]["Properties"]
        value = _field(ref["FieldToMatch"], request)
        return value is not None and any(
            re.search(p, value) for p in patterns["RegularExpressionList"]
        )
    if "RateBasedStatement" in statement or "ManagedRuleGroupStatement" in statement:
        return False  # one request from an address with no reputation
    raise AssertionError(f"a statement this test cannot evaluate: {list(statement)}")


def _answer(synth: Synth, env: str, path: str, **headers: str) -> int | None:
    """The status the web ACL answers a POST with, or None when it lets it through."""
    (acl,) = synth.resources(env, "AWS::WAFv2::WebACL").values()
    request = {
        "path": path,
        "headers": {k.lower().replace("_", "-"): v for k, v in headers.items()},
    }
    for rule in sorted(acl["Properties"]["Rules"], key=lambda r: r["Priority"]):
        if _matches(rule["Statement"], request, synth.templates[env]):
            if "Block" not in rule.get("Action", {}):
                continue
            custom = rule["Action"]["Block"].get("CustomResponse", {})
            return int(custom.get("ResponseCode", 403))
    return None


TWILIO_OK = {"x_twilio_signature": twilio_signature("a-token", "https://h/v1/twilio/sms", {})}
SHA256_OK = {"x_twilio_signature": base64.b64encode(bytes(range(32))).decode()}
APP_OK = {
    "x_maestro_signature": app_signature("a-secret", "1781704800", "{}"),
    "x_maestro_timestamp": "1781704800",
}


@pytest.mark.parametrize(
    ("path", "headers", "answer"),
    [
        ("/v1/twilio/sms", TWILIO_OK, None),
        ("/v1/twilio/status", SHA256_OK, None),
        ("/v1/twilio/transcript", TWILIO_OK, None),
        ("/v1/app/messages", APP_OK, None),
        ("/v1/assistant/kickoff", APP_OK, None),
        # A Twilio route: no signature, a junk one, the app's headers instead.
        ("/v1/twilio/sms", {}, 403),
        ("/v1/twilio/sms", {"x_twilio_signature": "anything"}, 403),
        ("/v1/twilio/sms", {"x_twilio_signature": "A" * 27 + "=="}, 403),
        ("/v1/twilio/status", {"x_twilio_signature": "-" * 27 + "="}, 403),  # base64url
        ("/v1/twilio/transcript", APP_OK, 403),
        ("/v1/twilio/sms/", {"x_twilio_signature": "x"}, 403),  # a trailing slash
        # An app route: a malformed signature or timestamp, or Twilio's header instead.
        ("/v1/app/messages", {**APP_OK, "x_maestro_timestamp": "1e9"}, 403),
        ("/v1/app/messages", {**APP_OK, "x_maestro_signature": "v1=" + "A" * 64}, 403),
        ("/v1/assistant/kickoff", {"x_maestro_signature": APP_OK["x_maestro_signature"]}, 403),
        ("/v1/assistant/kickoff", TWILIO_OK, 403),
        # Any other path: no signer's headers at all.
        ("/v1/twilio//sms", {}, 403),
        ("/v1/admin", {"x_twilio_signature": "not-base64!"}, 403),
        ("/v1/admin", TWILIO_OK, None),  # well formed: API Gateway answers (no such route)
        # The body limit comes first, whatever the signature.
        ("/v1/twilio/sms", {**TWILIO_OK, "content_length": str(MAX_REQUEST_BYTES + 1)}, 413),
        ("/v1/twilio/sms", {**TWILIO_OK, "content_length": str(MAX_REQUEST_BYTES)}, None),
    ],
)
def test_the_web_acl_refuses_requests_without_their_signers_well_formed_headers(
    synth: Synth, path: str, headers: dict[str, str], answer: int | None
) -> None:
    """Naive: any X-Twilio-Signature value (or none at all, until API Gateway's validator)
    passed the edge and reached the handler."""
    for env in cdk_environments():
        assert _answer(synth, env, path, **headers) == answer, (env, path, headers)


def test_the_web_acl_limits_each_source_address(synth: Synth, env: str) -> None:
    (acl,) = synth.resources(env, "AWS::WAFv2::WebACL").values()
    rules = sorted(acl["Properties"]["Rules"], key=lambda r: r["Priority"])
    assert [r["Name"] for r in rules] == [
        "RequestBodyTooLarge",
        "AWSManagedRulesAmazonIpReputationList",
        "RateLimitPerSourceIp",
        "TwilioSignatureMalformed",
        "AppSignatureMalformed",
        "Unsigned",
    ]
    rate = rules[2]
    assert rate["Statement"]["RateBasedStatement"] == {
        "AggregateKeyType": "IP",
        "Limit": CONFIG[env].get("webhook_rate_limit_per_ip", DEFAULT_WEBHOOK_RATE_LIMIT_PER_IP),
        "EvaluationWindowSec": 300,
    }
    assert rate["Action"]["Block"]["CustomResponse"]["ResponseCode"] == 429
    assert "ScopeDownStatement" not in rate["Statement"]["RateBasedStatement"]  # every route
    # The shapes are the handler's own, translated for WAF (no capturing groups).
    regexes = {
        s["RegexMatchStatement"]["FieldToMatch"]["SingleHeader"]["Name"]: s["RegexMatchStatement"][
            "RegexString"
        ]
        for s in _statements_of(rules[3]["Statement"]) + _statements_of(rules[4]["Statement"])
        if "SingleHeader" in s.get("RegexMatchStatement", {}).get("FieldToMatch", {})
    }
    assert regexes == {
        header.lower(): waf_regex(pattern)
        for headers in SIGNATURE_HEADER_PATTERNS.values()
        for header, pattern in headers.items()
    }


def _statements_of(statement: dict[str, Any]) -> list[dict[str, Any]]:
    """Every leaf statement under ``statement``."""
    for kind in ("AndStatement", "OrStatement"):
        if kind in statement:
            return [leaf for s in statement[kind]["Statements"] for leaf in _statements_of(s)]
    if "NotStatement" in statement:
        return _statements_of(statement["NotStatement"]["Statement"])
    return [statement]


# -- events and observability ------------------------------------------------------------------


def test_domain_events_go_to_the_watcher_queue_and_the_archive(synth: Synth, env: str) -> None:
    rules = synth.resources(env, "AWS::Events::Rule").values()
    (rule,) = [
        r
        for r in rules
        if "EventPattern" in r["Properties"]
        and "detail-type" not in r["Properties"]["EventPattern"]  # not wo.created's alone
    ]
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
        and r["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [sweeper, "Arn"]}
    ]
    assert rule["ScheduleExpression"] == "rate(5 minutes)"
    (target,) = rule["Targets"]
    assert "DeadLetterConfig" in target
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2


def test_the_digest_runs_every_hour_with_a_dlq(synth: Synth, env: str) -> None:
    functions = _function_steps(synth, env)
    (digest,) = [lid for lid, name in functions.items() if name == "digest"]
    (rule,) = [
        r["Properties"]
        for r in synth.resources(env, "AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
        and r["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [digest, "Arn"]}
    ]
    assert rule["ScheduleExpression"] == "rate(1 hour)"
    (target,) = rule["Targets"]
    assert "DeadLetterConfig" in target
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2


def test_the_daily_caps_reach_what_they_cap(synth: Synth, env: str) -> None:
    """An environment's caps reach the functions that send (pages, texts) and the ones that call
    a model; without them, the settings' defaults stand (nothing is set)."""
    config = CONFIG[env]
    functions = _function_steps(synth, env)
    for lid, fn in synth.resources(env, "AWS::Lambda::Function").items():
        variables = fn["Properties"]["Environment"]["Variables"]
        name = functions[lid]
        sends = name in {*TEXTING_STEPS, "digest"}
        models = name in {*MODEL_STEPS, "prober"}
        for key, setting, applies in (
            ("daily_page_cap", "MAESTRO_ACCOUNT_DAILY_PAGES", sends),
            ("daily_text_cap", "MAESTRO_ACCOUNT_DAILY_TEXTS", sends),
            ("daily_model_call_cap", "MAESTRO_ACCOUNT_DAILY_MODEL_CALLS", models),
        ):
            expected = str(config[key]) if applies and config.get(key) else None
            assert variables.get(setting) == expected, (name, setting)


# Who writes items that expire, per table (docs/erase-and-retention.md): the texts (inbound by the
# webhooks, outbound by whatever texts), the decision log's rows, the ledger's.
RETENTION_WRITERS = {
    "messages_retention_days": {
        "inbound_sms",
        "inbound_fallback",
        "escalate",
        "act",
        "fail_open",
        "digest",
        "wo_ask",
        "wo_record",
        "wo_assign",
        "wo_page",
    },
    # (wo_judge records its judgment on the dispatch run, not in the decision log.)
    "decisions_retention_days": {"escalate", "dispose", "act", "persist", "fail_open"},
    "ledger_retention_days": {"watcher", "sweeper"},
}


def test_retention_reaches_exactly_the_functions_that_write_the_table(
    synth: Synth, env: str
) -> None:
    functions = _function_steps(synth, env)
    for key, writers in RETENTION_WRITERS.items():
        found = {
            functions[lid]: fn["Properties"]["Environment"]["Variables"][f"MAESTRO_{key.upper()}"]
            for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
            if f"MAESTRO_{key.upper()}" in fn["Properties"]["Environment"]["Variables"]
        }
        assert found == dict.fromkeys(writers, str(CONFIG[env][key])), key


def test_completion_shards_reach_the_writers_of_completion_lines_and_their_reader(
    synth: Synth, env: str
) -> None:
    """persist and fail-open write by the shards the sweeper reads: one number for all three."""
    functions = _function_steps(synth, env)
    found = {
        functions[lid]: variables["MAESTRO_COMPLETION_SHARDS"]
        for lid, fn in synth.resources(env, "AWS::Lambda::Function").items()
        if "MAESTRO_COMPLETION_SHARDS"
        in (variables := fn["Properties"]["Environment"]["Variables"])
    }
    expected = str(CONFIG[env].get("completion_shards", COMPLETION_SHARDS))
    assert found == dict.fromkeys(("persist", "fail_open", "sweeper"), expected)


def _alarms(synth: Synth, env: str) -> dict[str, dict[str, Any]]:
    return {
        a["Properties"]["AlarmName"].removeprefix(f"maestro-{env}-"): a["Properties"]
        for a in synth.resources(env, "AWS::CloudWatch::Alarm").values()
    }


def _watches(alarm: dict[str, Any]) -> dict[str, Any]:
    """The one metric an alarm watches (stated inline, or as its only metric with a label)."""
    if "MetricName" in alarm:
        return {k: alarm[k] for k in ("Namespace", "MetricName", "Dimensions") if k in alarm}
    (metric,) = alarm["Metrics"]
    return dict(metric["MetricStat"]["Metric"])


def test_the_alarms_exist_and_notify_the_topic(synth: Synth, env: str) -> None:
    alarms = _alarms(synth, env)
    assert set(alarms) == {
        "api-5xx",
        "api-4xx-rate",
        "api-429",
        "waf-rate-limited",
        "errors-inbound-sms",
        "errors-inbound-fallback",
        "errors-flusher",
        "errors-prober",
        "errors-watcher",
        "errors-sweeper",
        "errors-digest",
        "errors-wo-start",
        "daily-cap",
        "undeliverable-pages",
        "dlq-debounce",
        "dlq-probe",
        "dlq-watcher",
        "dlq-inbound-fallback",
        "dlq-wo-start",
        "fallback-api-5xx",
        "fallback-api-429",
        "stranded-flushes",
        "dlq-event-delivery",
        "dlq-sweep-delivery",
        "dlq-digest-delivery",
        "dlq-wo-created-delivery",
        "send-failures",
        "failed-executions",
        "failed-wo-executions",
        "fail-open",
        "fallback-rate",
        "shame-rows",
    }
    (topic_id,) = synth.resources(env, "AWS::SNS::Topic")
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["TreatMissingData"] == "notBreaching"
    assert alarms["fallback-rate"]["Threshold"] == CONFIG[env]["fallback_rate_threshold"]
    # Shame that stands: the rows written less those a late event resolved (one metric each).
    shame = {
        m["MetricStat"]["Metric"]["MetricName"]: m["MetricStat"]["Metric"]["Namespace"]
        for m in alarms["shame-rows"]["Metrics"]
        if "MetricStat" in m
    }
    assert shame == {SHAME_METRIC: "Maestro", SHAME_RESOLVED_METRIC: "Maestro"}
    cap = alarms["daily-cap"]  # the seam: whatever enforces a daily cap counts this metric
    assert (cap["MetricName"], cap["Namespace"], cap["Threshold"]) == (
        DAILY_CAP_METRIC,
        "Maestro",
        1,
    )
    assert cap["Dimensions"] == [{"Name": "service", "Value": "maestro"}]
    # A page with no one to go to (docs/on-call.md): the metric the pages count, alarmed at once.
    nobody = alarms["undeliverable-pages"]
    assert (nobody["MetricName"], nobody["Namespace"], nobody["Threshold"]) == (
        UNDELIVERABLE_PAGE_METRIC,
        "Maestro",
        1,
    )
    assert len(synth.resources(env, "AWS::CloudWatch::Dashboard")) == 1


def _alarm_metrics(alarm: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """A math alarm's metrics: id → (metric name, the resource its dimension names)."""
    return {
        m["Id"]: (
            m["MetricStat"]["Metric"]["MetricName"],
            m["MetricStat"]["Metric"]["Dimensions"][0]["Value"]["Ref"],
        )
        for m in alarm["Metrics"]
        if "MetricStat" in m
    }


def test_failed_executions_alarm_per_machine_and_the_wo_queues_dlqs(synth: Synth, env: str) -> None:
    """Each machine's failed, timed-out and aborted executions raise its own alarm (a broken
    dispatch is not a broken package); a wo.created that never started an execution (the
    wo-start DLQ, or EventBridge's delivery DLQ) raises one too."""
    alarms = _alarms(synth, env)
    machines = _machines(synth, env)
    for name, machine in (
        ("failed-executions", "package_pipeline"),
        ("failed-wo-executions", "work_order"),
    ):
        alarm = alarms[name]
        (expression,) = [m["Expression"] for m in alarm["Metrics"] if "Expression" in m]
        assert expression == "failed + timedout + aborted"
        assert _alarm_metrics(alarm) == {
            "failed": ("ExecutionsFailed", machines[machine][0]),
            "timedout": ("ExecutionsTimedOut", machines[machine][0]),
            "aborted": ("ExecutionsAborted", machines[machine][0]),
        }
        assert alarm["Threshold"] == 1
    for name, prefix in (
        ("dlq-wo-start", "QueuesWoStartDlq"),
        ("dlq-wo-created-delivery", "EventsWoCreatedDeliveryDlq"),
    ):
        alarm = alarms[name]
        assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
        (dimension,) = alarm["Dimensions"]
        assert dimension["Value"]["Fn::GetAtt"][0].startswith(prefix)


def test_the_topic_reaches_the_configured_people(synth: Synth, env: str) -> None:
    (topic_id,) = synth.resources(env, "AWS::SNS::Topic")
    subscribed = sorted(
        (s["Properties"]["Protocol"], s["Properties"]["Endpoint"])
        for s in synth.resources(env, "AWS::SNS::Subscription").values()
        if s["Properties"]["TopicArn"] == {"Ref": topic_id}
    )
    config = CONFIG[env]
    expected = [("email", config["alarm_email"])] if config["alarm_email"] else []
    expected += [("sms", config["alarm_sms"])] if config.get("alarm_sms") else []
    assert subscribed == sorted(expected)
    if not config.get("development"):
        assert any(protocol == "email" for protocol, _ in subscribed)


def test_an_environment_that_must_reach_people_but_texts_no_one_is_warned_of(
    synth: Synth,
) -> None:
    """No Twilio account: the recording messenger answers, so a page reaches no one. Not an
    error (a staging stack may text no one on purpose), but said at every synthesis."""
    for env in cdk_environments():
        warned = f"{env}: no twilio_account_sid, so the recording messenger answers" in (
            synth.stderr
        )
        texts = bool(CONFIG[env]["twilio_account_sid"]) or CONFIG[env].get("development", False)
        assert warned != texts, env


def test_the_edge_alarms_watch_the_webhooks(synth: Synth, env: str) -> None:
    alarms = _alarms(synth, env)
    api_name = f"maestro-{env}-webhooks"
    assert api_name in {
        api["Properties"]["Name"]
        for api in synth.resources(env, "AWS::ApiGateway::RestApi").values()
    }
    five_xx = alarms["api-5xx"]
    assert (five_xx["Namespace"], five_xx["MetricName"], five_xx["Threshold"]) == (
        "AWS/ApiGateway",
        "5XXError",
        1,
    )
    assert five_xx["Dimensions"] == [{"Name": "ApiName", "Value": api_name}]
    rate = alarms["api-4xx-rate"]
    assert rate["Threshold"] == CONFIG[env]["api_4xx_rate_threshold"]
    (expression,) = [m for m in rate["Metrics"] if "Expression" in m]
    assert expression["Expression"] == "IF(requests >= 10, errors / requests, 0)"
    used = {
        m["Id"]: m["MetricStat"]["Metric"]["MetricName"]
        for m in rate["Metrics"]
        if "MetricStat" in m
    }
    assert used == {"errors": "4XXError", "requests": "Count"}
    # 429s: a metric filter on the JSON access log's status (API Gateway has no 429 metric).
    (stage,) = [
        s
        for lid, s in synth.resources(env, "AWS::ApiGateway::Stage").items()
        if lid.startswith("WebhooksApi")
    ]
    access_log = stage["Properties"]["AccessLogSetting"]
    assert '"status":"$context.status"' in access_log["Format"]
    (flt,) = [
        f
        for lid, f in synth.resources(env, "AWS::Logs::MetricFilter").items()
        if lid.startswith("ObservabilityWebhook429s")
    ]
    group = flt["Properties"]["LogGroupName"]  # the stage's access log group
    assert group in access_log["DestinationArn"]["Fn::Join"][1]
    assert flt["Properties"]["FilterPattern"] == '{ $.status = "429" }'
    (transform,) = flt["Properties"]["MetricTransformations"]
    throttled = alarms["api-429"]
    assert _watches(throttled) == {
        "Namespace": transform["MetricNamespace"],
        "MetricName": transform["MetricName"],
    }
    assert transform["MetricValue"] == "1"
    waf = alarms["waf-rate-limited"]
    (acl,) = synth.resources(env, "AWS::WAFv2::WebACL").values()
    (rule,) = [r for r in acl["Properties"]["Rules"] if r["Name"] == "RateLimitPerSourceIp"]
    watched = _watches(waf)
    dimensions = {d["Name"]: d["Value"] for d in watched["Dimensions"]}
    assert dimensions["WebACL"] == acl["Properties"]["Name"]
    assert dimensions["Rule"] == rule["VisibilityConfig"]["MetricName"]
    assert (watched["Namespace"], watched["MetricName"]) == ("AWS/WAFV2", "BlockedRequests")


def test_every_function_outside_the_state_machine_alarms_on_its_errors(
    synth: Synth, env: str
) -> None:
    alarms = _alarms(synth, env)
    functions = _function_steps(synth, env)
    watched = {
        functions[a["Dimensions"][0]["Value"]["Ref"]]
        for a in alarms.values()
        if a.get("MetricName") == "Errors" and a.get("Namespace") == "AWS/Lambda"
    }
    # The machines' steps are their machine's to retry and catch (its failed-executions alarm).
    assert watched == set(functions.values()) - set(STEPS) - set(DISPATCH_STEPS)
    assert "wo_start" in watched
    assert "inbound_sms" in watched


def test_outputs_for_the_operators(synth: Synth, env: str) -> None:
    outputs = synth.templates[env]["Outputs"]
    assert OUTPUT_STATE_MACHINE in outputs
    assert "WorkOrderStateMachineArn" in outputs  # `maestro wo show --env` finds executions
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


@pytest.mark.parametrize("env", synthesized_environments())
def test_the_runtime_layer_ships_runtime_code_only(synth: Synth, env: str) -> None:
    """The shared layer every function loads holds the runtime package alone: no eval code
    (scenarios, lenses, metrics), no scripted model, no test double, no dev package."""
    (layer,) = [
        props
        for props in (
            r["Properties"] for r in synth.resources(env, "AWS::Lambda::LayerVersion").values()
        )
        if "runtime only" in props.get("Description", "")
    ]
    asset = synth.outdir / f"asset.{layer['Content']['S3Key'].removesuffix('.zip')}"
    files = [p.relative_to(asset).as_posix() for p in asset.rglob("*.py")]
    assert "python/maestro/domain/dispose.py" in files  # the layer it is, as staged
    assert not [f for f in files if not f.startswith("python/maestro/")]
    assert not [f for f in files if "/evals/" in f or f.endswith("scripted.py")]
    doubles = re.compile(r"^class (?:Fake|Stub|Scripted|Mock)\w*", re.M)
    assert not [f for f in files if doubles.search((asset / f).read_text())]
