"""The eval copy (infra/evals.py, docs/evals-in-the-cloud.md), from the session's one synth:
where it is deployed, that it shares nothing with the live stack, the eval executor's machine
and table, and each eval step's grants."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from infra_synth import ROOT, Synth, cdk_json_environments, policy_resource

from app import eval_copy_code
from infra.evals import EVAL_ASL, bundle
from maestro.access import placeholder
from maestro.stack_outputs import OUTPUT_EVAL_MACHINE, OUTPUT_EVAL_RUNS_TABLE
from maestro.tables import ALL_TABLES
from maestro_dev.eval_harness.cloud import STEP_TABLES
from maestro_dev.eval_harness.executor import HANDLERS
from maestro_dev.eval_harness.runs import EVAL_RUNS
from maestro_dev.local.numbers import ON_CALL_PM
from maestro_dev.local.twilio_loopback import LOCAL_ACCOUNT_SID

Template = dict[str, Any]


def _of(template: Template, kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def _wants_copy(env: str) -> bool:
    return bool(cdk_json_environments()[env].get("eval_executor", False))


def _copy(synth: Synth, env: str) -> Template:
    if not _wants_copy(env):
        pytest.skip(f"{env} deploys no eval copy")
    return synth.eval_templates[env]


def _eval_functions(template: Template) -> dict[str, tuple[str, dict[str, Any]]]:
    """Eval step → (logical id, properties) of its function."""
    found = {}
    for lid, fn in _of(template, "AWS::Lambda::Function").items():
        step = fn["Properties"].get("Environment", {}).get("Variables", {}).get("MAESTRO_EVAL_STEP")
        if step is not None:
            found[step] = (lid, fn["Properties"])
    return found


def _names(template: Template, kind: str, key: str) -> set[str]:
    return {r["Properties"][key] for r in _of(template, kind).values() if key in r["Properties"]}


def test_the_copy_is_where_the_setting_says_and_the_live_stacks_have_no_executor(
    synth: Synth, env: str
) -> None:
    assert (env in synth.eval_templates) == _wants_copy(env)
    assert _wants_copy("dev")
    assert _wants_copy("staging")
    assert not _wants_copy("prod")
    live = synth.templates[env]
    assert _eval_functions(live) == {}
    assert not any(
        "eval" in n for n in _names(live, "AWS::StepFunctions::StateMachine", "StateMachineName")
    )
    assert not any(OUTPUT_EVAL_MACHINE in o or OUTPUT_EVAL_RUNS_TABLE in o for o in live["Outputs"])
    key_names = {
        tuple(k["AttributeName"] for k in t["Properties"]["KeySchema"])
        for t in _of(live, "AWS::DynamoDB::Table").values()
    }
    assert (EVAL_RUNS.partition.name, EVAL_RUNS.sort_name) not in key_names


def test_the_copy_shares_no_named_resource_and_imports_nothing_from_the_live_stack(
    synth: Synth, env: str
) -> None:
    copy, live = _copy(synth, env), synth.templates[env]
    assert "Fn::ImportValue" not in json.dumps(copy)
    own = f"maestro-{env}-eval-"
    for kind, key in (
        ("AWS::Lambda::Function", "FunctionName"),
        ("AWS::StepFunctions::StateMachine", "StateMachineName"),
    ):
        names = _names(copy, kind, key)
        assert names
        assert all(n.startswith(own) for n in names), names
        assert not names & _names(live, kind, key)
    groups = _names(copy, "AWS::Logs::LogGroup", "LogGroupName")
    assert groups
    assert all(f"/maestro-{env}-eval-" in g or f"/{own}" in g for g in groups), groups
    # Tables, queues, the bus and the secrets are named by CloudFormation from this stack's
    # name: none is named by hand (which could point at the live one's).
    for kind, key in (
        ("AWS::DynamoDB::Table", "TableName"),
        ("AWS::SQS::Queue", "QueueName"),
        ("AWS::SecretsManager::Secret", "Name"),
    ):
        assert _of(copy, kind), kind
        assert not _names(copy, kind, key), kind
    assert len(_of(copy, "AWS::DynamoDB::Table")) == len(ALL_TABLES) + 1  # + eval runs
    assert len(_of(copy, "AWS::SQS::Queue")) == len(_of(live, "AWS::SQS::Queue"))


def test_the_copy_texts_and_pages_no_one_and_serves_the_scenarios_account(
    synth: Synth, env: str
) -> None:
    copy = _copy(synth, env)
    assert not _of(copy, "AWS::SNS::Subscription")
    for lid, fn in _of(copy, "AWS::Lambda::Function").items():
        variables = fn["Properties"].get("Environment", {}).get("Variables", {})
        account = variables.get("MAESTRO_TWILIO_ACCOUNT_SID")
        if fn["Properties"]["FunctionName"].endswith(("-inbound-sms", "-inbound-fallback")):
            assert account == LOCAL_ACCOUNT_SID, lid
        else:
            assert not account, lid  # the recording messenger
        if "MAESTRO_ON_CALL_PM_PHONE" in variables:
            assert variables["MAESTRO_ON_CALL_PM_PHONE"] == ON_CALL_PM, lid
        assert "ReservedConcurrentExecutions" not in fn["Properties"], lid


def test_the_eval_executor_is_the_asl_file_over_its_six_functions(synth: Synth, env: str) -> None:
    copy = _copy(synth, env)
    functions = _eval_functions(copy)
    assert set(functions) == set(HANDLERS)
    (machine,) = [
        m["Properties"]
        for m in _of(copy, "AWS::StepFunctions::StateMachine").values()
        if m["Properties"]["StateMachineName"] == f"maestro-{env}-eval-eval-executor"
    ]
    asset = synth.outdir / f"asset.{machine['DefinitionS3Location']['Key']}"
    assert asset.read_text() == (ROOT / "statemachines" / EVAL_ASL).read_text()
    by_lid = {lid: step for step, (lid, _) in functions.items()}
    substitutions = machine["DefinitionSubstitutions"]
    assert set(substitutions) == {placeholder(step) for step in HANDLERS}
    for step in HANDLERS:
        assert by_lid[substitutions[placeholder(step)]["Fn::GetAtt"][0]] == step
    # Its role invokes its six functions and nothing else.
    role = machine["RoleArn"]["Fn::GetAtt"][0]
    invoked = {
        target["Fn::GetAtt"][0]
        for policy in _of(copy, "AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement["Action"] == "lambda:InvokeFunction"
        for target in statement["Resource"]
    }
    assert invoked == set(by_lid)
    for step, (_, props) in functions.items():
        assert props["Handler"] == "index.handler"
        assert (
            props["Code"]["ZipFile"]
            == f"from maestro_dev.eval_harness.cloud import {step} as handler\n"
        )
        assert len(props["Layers"]) == 3  # dependencies, runtime, and the eval layer
    assert copy["Outputs"][OUTPUT_EVAL_MACHINE]
    assert copy["Outputs"][OUTPUT_EVAL_RUNS_TABLE]


def test_the_eval_runs_table_is_the_spec_the_local_stack_creates(synth: Synth, env: str) -> None:
    copy = _copy(synth, env)
    ref = copy["Outputs"][OUTPUT_EVAL_RUNS_TABLE]["Value"]["Ref"]
    table = copy["Resources"][ref]["Properties"]
    local = EVAL_RUNS.create_table_kwargs("t")
    assert table["KeySchema"] == local["KeySchema"]
    assert table["AttributeDefinitions"] == local["AttributeDefinitions"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["SSESpecification"] == {"SSEEnabled": True}


def _resource_name(value: Any) -> str:
    """What a policy resource names: '<machine id>:*' for a machine's executions, else as the
    other infra tests read it (a logical id, a table's for its indexes, or '*')."""
    parts = value.get("Fn::Join", ["", []])[1] if isinstance(value, dict) else []
    if parts and str(parts[-1]).endswith(":*"):
        (machine,) = [p["Fn::GetAtt"][0] for p in parts if "Fn::GetAtt" in p]
        return f"{machine}:*"
    return policy_resource(value)


def test_each_eval_step_is_granted_its_own_reads_and_writes_and_nothing_else(
    synth: Synth, env: str
) -> None:
    copy = _copy(synth, env)
    resources = copy["Resources"]
    outputs = copy["Outputs"]
    eval_runs = outputs[OUTPUT_EVAL_RUNS_TABLE]["Value"]["Ref"]
    table_ids = {
        name: outputs["".join(p.title() for p in name.split("_")) + "TableName"]["Value"]["Ref"]
        for name in (spec.logical_name for spec in ALL_TABLES)
    }
    machines = {
        m["Properties"]["StateMachineName"].removeprefix(f"maestro-{env}-eval-"): lid
        for lid, m in _of(copy, "AWS::StepFunctions::StateMachine").items()
    }
    (inbound,) = [
        lid
        for lid, f in _of(copy, "AWS::Lambda::Function").items()
        if f["Properties"]["FunctionName"] == f"maestro-{env}-eval-inbound-sms"
    ]
    for step, (_, props) in _eval_functions(copy).items():
        role = props["Role"]["Fn::GetAtt"][0]
        granted: dict[str, set[str]] = {}
        for policy in _of(copy, "AWS::IAM::Policy").values():
            if {"Ref": role} not in policy["Properties"]["Roles"]:
                continue
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                assert statement["Effect"] == "Allow"
                actions = statement["Action"]
                for action in actions if isinstance(actions, list) else [actions]:
                    targets = statement["Resource"]
                    for target in targets if isinstance(targets, list) else [targets]:
                        granted.setdefault(_resource_name(target), set()).add(action)
        assert granted.pop("*") == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}, step
        assert "dynamodb:PutItem" in granted.pop(eval_runs), step
        for name, access in STEP_TABLES[step].items():
            actions = granted.pop(table_ids[name])
            assert ("dynamodb:DeleteItem" in actions) == (access == "w"), (step, name)
            assert "dynamodb:Query" in actions
        assert granted.pop(inbound, set()) == (
            {"lambda:InvokeFunction"} if step in ("eval_setup", "eval_inject") else set()
        ), step
        machine = machines["package-pipeline"]
        lists = (
            {"states:ListExecutions"}
            if step in ("eval_setup", "eval_inject", "eval_settle")
            else set()
        )
        assert granted.pop(machine, set()) == lists, step
        executions = granted.pop(f"{machine}:*", set())
        assert executions == (
            set()
            if not lists
            else {"states:DescribeExecution"}
            | ({"states:StopExecution"} if step == "eval_setup" else set())
        ), step
        work_order = machines["work-order"]
        assert granted.pop(work_order, set()) == (
            {"states:ListExecutions"} if step == "eval_setup" else set()
        )
        granted.pop(f"{work_order}:*", None)
        # What is left: its log group, the secrets it signs with, the queues it watches.
        for lid, actions in granted.items():
            kind = resources[lid]["Type"]
            if kind == "AWS::Logs::LogGroup":
                assert actions == {"logs:CreateLogStream", "logs:PutLogEvents"}
            elif kind == "AWS::SecretsManager::Secret":
                assert step in ("eval_setup", "eval_inject")
                assert actions == {
                    "secretsmanager:GetSecretValue",
                    "secretsmanager:DescribeSecret",
                }
            elif kind == "AWS::SQS::Queue":
                # Set-up purges what a stale run left: a debounce signal, a probe not asked.
                purges = step == "eval_setup" and ("Debounce" in lid or "Probe" in lid)
                assert actions == {"sqs:GetQueueAttributes"} | (
                    {"sqs:PurgeQueue"} if purges else set()
                ), (step, lid)
            else:
                raise AssertionError(f"{step} is granted {actions} on {lid} ({kind})")


def test_the_eval_layer_holds_the_eval_code_and_worlds_and_imports_without_moto(
    tmp_path: Path,
) -> None:
    """The layer's tree as Lambda unpacks it in /opt: ``python/maestro_dev`` and the worlds at
    ``evals/worlds``, three levels above the loader. Its handlers import from it alone (the
    runtime layer beside it), with moto and the embedded stack unimportable."""
    bundle(tmp_path, eval_copy_code().package, requirements=[])
    assert (tmp_path / "python" / "maestro_dev" / "eval_harness" / "cloud.py").is_file()
    assert (tmp_path / "evals" / "worlds" / "maria.yaml").is_file()
    assert not list(tmp_path.rglob("__pycache__"))
    probe = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'moto' or name == 'maestro_dev.local.stack':\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import maestro_dev\n"
        "from maestro_dev.eval_harness import cloud\n"
        "from maestro_dev.local import world\n"
        "print(maestro_dev.__file__, callable(cloud.eval_setup), world.MARIA.party_id)\n"
    )
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path / "python"), str(ROOT / "layers" / "maestro" / "python")]
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    where, handler, maria = done.stdout.split()
    assert where.startswith(str(tmp_path))
    assert handler == "True"
    assert maria == "tenant-maria"


def test_cdk_nag_finds_nothing_open_in_the_copy_and_every_suppression_says_why(
    synth: Synth, env: str
) -> None:
    copy = _copy(synth, env)
    report = synth.outdir / f"AwsSolutions--maestro-{env}-eval-NagReport.csv"
    with report.open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    assert [r["Rule ID"] for r in rows if r["Compliance"] == "Non-Compliant"] == []
    for resource in copy["Resources"].values():
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
            assert len(rule["reason"]) >= 80, rule
