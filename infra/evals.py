"""The eval executor in the cloud (docs/evals-in-the-cloud.md).

Seed 002 runs a scenario on the real workflows, "physically isolated from real customers'
queues". Here that copy is a second stack per environment that sets ``eval_executor``:
``maestro-<env>-eval``, a :class:`infra.stack.MaestroStack` made by the same code as the live
one (so the copy cannot drift from what it tests) on its own tables, queues, bus, secrets and
state machines, with :func:`eval_copy_config`'s differences, plus :class:`EvalExecutor`:

- the eval-runs table, from the one spec the embedded stack uses (:class:`EvalCopyCode`);
- the eval executor state machine from ``statemachines/eval_executor.asl.json`` (the same ASL
  moto runs), over six functions, one per Task state;
- those functions: a one-line inline entry each, their code in a layer of its own (the eval
  layer: the dev package with the eval worlds, never the runtime layer), each granted only what
  its step reads and writes on the copy.

The executor's code and its rules are dev tooling, which deploy code never imports (an import
contract in pyproject.toml): ``app.py`` hands them in as an :class:`EvalCopyCode`, the package
as a folder and its handlers as a module's name.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import aws_cdk as cdk
import jsii
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct
from pydantic_settings import BaseSettings

from infra.config import ROOT, EnvConfig
from infra.functions import Bound, FunctionFactory, FunctionSpec, Setting
from infra.layers import (
    ARCHITECTURE,
    LAMBDA_UNZIPPED_LIMIT_BYTES,
    RUNTIME,
    built_here,
    directory_size,
    pip_command,
)
from infra.pipeline import Pipeline
from infra.tables import make_table
from maestro.tables import TableSpec

__all__ = [
    "EVAL_ASL",
    "EvalCopyCode",
    "EvalExecutor",
    "bundle",
    "eval_copy_config",
]

EVAL_ASL = "eval_executor.asl.json"
LONG_STEPS = frozenset({"eval_setup", "eval_inject", "eval_settle", "eval_grade"})
"""The steps that let real time pass or wait for what it started: Lambda's longest timeout."""
LONG_TIMEOUT = cdk.Duration.seconds(900)
EVAL_WORLDS = ROOT / "evals" / "worlds"
EVAL_LAYER_REQUIREMENTS = ("pyyaml",)  # the worlds' loader; the rest is the runtime's layers
_COPIED = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache")


@dataclass(frozen=True)
class EvalCopyCode:
    """What the eval copy deploys from the dev tooling, handed in by ``app.py``."""

    package: Path
    """The dev package's folder: the eval layer's ``python/<its name>``."""
    handlers_module: str
    """The module each eval function's inline entry takes its step's handler from."""
    steps: tuple[str, ...]
    """The eval executor's steps, one function each (the Task states of its ASL)."""
    step_tables: Mapping[str, Mapping[str, str]]
    """Each step's tables of the copy: ``r`` (read) or ``w`` (read and write)."""
    sends_webhooks: frozenset[str]
    """The copy's inbound function, and the Twilio token and app secret they sign with."""
    reads_executions: frozenset[str]
    """The package pipeline's executions (set-up also stops them, and the WO machine's)."""
    lets_time_pass: frozenset[str]
    """The debounce queue's depth (what a wait started)."""
    waits_for_the_watcher: frozenset[str]
    """The watcher queue's depth."""
    real_time_budget_seconds: int
    """How long one long step may let real time pass (under Lambda's 900 s)."""
    settings_model: type[BaseSettings]
    """The eval functions' settings (``MAESTRO_*``)."""
    runs_table: TableSpec
    """The eval-runs table: the same spec the embedded stack uses."""
    on_call_pm: str
    """The scenarios' on-call PM: the copy pages this test number."""
    webhook_account: str
    """The Twilio account the copy's inbound route serves: the one the scenarios' signed
    webhooks name, signed with the copy's own TwilioAuthToken secret."""

    @property
    def sources(self) -> tuple[Path, ...]:
        """The eval layer's sources: the dev package and the eval worlds."""
        return (self.package, EVAL_WORLDS)


def eval_copy_config(config: EnvConfig, code: EvalCopyCode) -> EnvConfig:
    """The copy's settings: the environment's, except what would reach a person or hold the
    account's resources. It pages and texts no one (the recording messenger; the on-call PM is
    the scenarios' test number), its alarms have no subscriber (an eval that fails open on
    purpose must not page the on-call team), it reserves no concurrency and it is destroyed
    with its stack."""
    return config.model_copy(
        update={
            "alarm_email": "",
            "alarm_sms": "",
            "on_call_pm_phone": code.on_call_pm,
            "on_call_from_directory": False,
            "twilio_account_sid": "",
            "twilio_from_number": "",
            "step_mode": False,
            "removal_policy": "destroy",
            "brain_reserved_concurrency": None,
            "reserved_concurrency": {},
        }
    )


def eval_layer_hash(sources: Iterable[Path], requirements: Iterable[str] = ()) -> str:
    """The layer's asset hash: its files' paths and contents and the pinned requirements."""
    digest = hashlib.sha256()
    for source in sources:
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(ROOT)).encode())
                digest.update(path.read_bytes())
    for requirement in requirements:
        digest.update(requirement.encode())
    return digest.hexdigest()


def pinned(names: Iterable[str]) -> list[str]:
    return [f"{name}=={importlib.metadata.version(name)}" for name in names]


@jsii.implements(cdk.ILocalBundling)
class EvalLayerBundling:
    """``python/<the dev package>`` (the eval code), ``evals/worlds`` beside ``python/`` (the
    loader finds them three levels above itself: /opt/evals/worlds in the Lambda) and the
    worlds' YAML parser for Lambda's arm64 Python. Never Docker."""

    def __init__(self, package: Path, requirements: list[str]) -> None:
        self.package = package
        self.requirements = requirements

    def try_bundle(self, output_dir: str, options: cdk.BundlingOptions) -> bool:  # noqa: ARG002
        bundle(Path(output_dir), self.package, self.requirements)
        return True


def bundle(out: Path, package: Path, requirements: list[str]) -> None:
    """Writes the eval layer's tree into ``out``: ``package`` (the dev package's folder) and
    the eval worlds (tests call it with no requirements)."""
    python = out / "python"
    shutil.copytree(package, python / package.name, ignore=_COPIED)
    shutil.copytree(EVAL_WORLDS, out / "evals" / "worlds", ignore=_COPIED)
    if requirements:
        import subprocess

        subprocess.run(pip_command(requirements, python), check=True)
        shutil.rmtree(python / "bin", ignore_errors=True)
    if directory_size(out) > LAMBDA_UNZIPPED_LIMIT_BYTES // 4:
        raise RuntimeError("the eval layer is over a quarter of Lambda's unzipped limit")


class EvalExecutor(Construct):
    """The eval-runs table, the eval layer, the six step functions and the state machine, on
    the copy's own resources (``inbound``, ``tables``, ``machines``, ``queues``, ``secrets``)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        code: EvalCopyCode,
        factory: FunctionFactory,
        inbound: lambda_.Function,
        tables: Mapping[str, dynamodb.Table],
        package_machine: sfn.StateMachine,
        work_order_machine: sfn.StateMachine,
        debounce: sqs.Queue,
        probe: sqs.Queue,
        watcher: sqs.Queue,
        twilio_auth_token: Bound,
        app_signing_secret: Bound,
    ) -> None:
        super().__init__(scope, construct_id)
        self.table = make_table(self, "EvalRunsTable", code.runs_table, config)
        requirements = pinned(EVAL_LAYER_REQUIREMENTS)
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            code=built_here(
                code.package.parent,
                eval_layer_hash(code.sources, requirements),
                EvalLayerBundling(code.package, requirements),
                exclude=["**/__pycache__", "**/*.pyc", "**/*.egg-info"],
            ),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description=f"maestro's eval executor (the eval copy only): {code.package.name}, "
            "eval worlds",
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )

        def invoke_inbound(grantee: iam.IGrantable) -> object:
            return grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["lambda:InvokeFunction"], resources=[inbound.function_arn]
                )
            )

        def queue_depth(queue: sqs.Queue, *, purge: bool = False) -> Bound:
            actions = ["sqs:GetQueueAttributes", *(["sqs:PurgeQueue"] * purge)]
            return Bound(queue.queue_url, lambda g: queue.grant(g, *actions))

        def executions(machine: sfn.StateMachine, *, stop: bool) -> Bound:
            def grant(grantee: iam.IGrantable) -> object:
                principal = grantee.grant_principal
                principal.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["states:ListExecutions"], resources=[machine.state_machine_arn]
                    )
                )
                name = machine.state_machine_name
                execution = cdk.Stack.of(self).format_arn(
                    service="states",
                    resource="execution",
                    resource_name=f"{name}:*",
                    arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                )
                actions = ["states:DescribeExecution", *(["states:StopExecution"] * stop)]
                return principal.add_to_principal_policy(
                    iam.PolicyStatement(actions=actions, resources=[execution])
                )

            return Bound(machine.state_machine_arn, grant)

        def grant_tables(own: Mapping[str, str]) -> Callable[[iam.IGrantable], object]:
            def grant(grantee: iam.IGrantable) -> object:
                for name, access in sorted(own.items()):
                    table = tables[name]
                    if access == "w":
                        table.grant_read_write_data(grantee)
                    else:
                        table.grant_read_data(grantee)
                return grantee

            return grant

        def settings(step: str) -> dict[str, Setting]:
            made: dict[str, Setting] = {
                "eval_step": step,
                "eval_runs_table": Bound(self.table.table_name, self.table.grant_read_write_data),
                "idle_window_seconds": str(config.idle_window_seconds),
                "max_wait_seconds": str(config.max_wait_seconds),
            }
            own = code.step_tables[step]
            if own:
                names = json.dumps({name: tables[name].table_name for name in sorted(own)})
                made["eval_copy_tables"] = Bound(names, grant_tables(own))
            if step in code.sends_webhooks:
                made["inbound_function_name"] = Bound(inbound.function_name, invoke_inbound)
                made["twilio_auth_token_secret"] = twilio_auth_token
                made["app_signing_secret"] = app_signing_secret
            if step in code.reads_executions:
                made["package_machine_arn"] = executions(package_machine, stop=step == "eval_setup")
            if step == "eval_setup":
                made["work_order_machine_arn"] = executions(work_order_machine, stop=True)
            if step in code.lets_time_pass:
                made["debounce_queue_url"] = queue_depth(debounce, purge=step == "eval_setup")
                made["probe_queue_url"] = queue_depth(probe, purge=step == "eval_setup")
            if step in code.waits_for_the_watcher:
                made["watcher_queue_url"] = queue_depth(watcher)
            if step in LONG_STEPS:
                made["real_time_budget_seconds"] = str(code.real_time_budget_seconds)
            return made

        self.functions = {
            step: factory.make(
                FunctionSpec(
                    name=step,
                    description=f"Eval executor (the eval copy): {step.removeprefix('eval_')}",
                    settings_model=code.settings_model,
                    settings=settings(step),
                    timeout=LONG_TIMEOUT if step in LONG_STEPS else cdk.Duration.seconds(30),
                    inline_entry=f"from {code.handlers_module} import {step} as handler\n",
                    extra_layers=(self.layer,),
                )
            )
            for step in code.steps
        }
        for function in self.functions.values():
            NagSuppressions.add_resource_suppressions(
                cast(iam.IRole, function.role),
                [
                    NagPackSuppression(
                        id="AwsSolutions-IAM5",
                        reason="An eval step reads (and set-up stops) the executions of the "
                        "copy's own state machines: executions are named at run time, so the "
                        "grant is on '<the copy's machine's execution ARN>:*', that machine "
                        "only.",
                        applies_to=[
                            RegexAppliesTo(
                                regex=r"/^Resource::arn:<AWS::Partition>:states:.*:\*$/g"
                            )
                        ],
                    )
                ],
                apply_to_children=True,
            )
        self.pipeline = Pipeline(
            self,
            "Machine",
            config=config,
            machine="eval_executor",
            description="The eval executor",
            steps=self.functions,
            definition=(EVAL_ASL, code.steps),
        )
        self.state_machine = self.pipeline.state_machine
