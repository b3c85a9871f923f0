"""The state machines: each a Standard state machine from its own ASL file
(``statemachines/<file>.asl.json``, ``maestro.access.STATE_MACHINES``) over one function per
step, made by the same code for both: the package pipeline and the work order machine.

The ``${Placeholder}`` substitutions are the contract's map (``maestro.access.STATE_MACHINES``
and ``asl_substitutions``), the one the embedded stack substitutes with too; a unit test holds
the map to the ASL files, and ``tests/infra`` the synthesized template to the map.
A machine's role may invoke exactly its own functions, and put events on the bus only when its
ASL puts them itself (the package pipeline's ``decision.recorded``), plus the log delivery and
X-Ray calls that logging ALL and tracing need.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.config import ROOT, EnvConfig
from infra.functions import retention
from maestro.access import STATE_MACHINES
from maestro.access import asl_substitutions as substitutions_of


def asl_path(machine: str) -> Path:
    """``statemachines/<its file>``."""
    return ROOT / "statemachines" / STATE_MACHINES[machine][0]


Definition = tuple[str, tuple[str, ...]]
"""A machine's ASL file (``statemachines/``) and the steps its Task states invoke."""


def asl_substitutions(
    machine: str,
    function_arns: Mapping[str, str],
    bus_name: str | None = None,
    definition: Definition | None = None,
) -> dict[str, str]:
    """Every ``${Placeholder}`` of the machine's ASL → its value in the cloud: each step's
    function ARN, and the bus's name for a machine whose ASL puts events itself."""
    steps = (definition or STATE_MACHINES[machine])[1]
    missing = sorted(set(steps) - set(function_arns))
    if missing:
        raise ValueError(f"{machine}: no function for the steps {missing}")
    return substitutions_of(steps, function_arns.__getitem__, bus_name)


def _camel(machine: str) -> str:
    return "".join(part.capitalize() for part in machine.split("_"))


class Pipeline(Construct):
    """One of ``STATE_MACHINES``: its functions (``steps``, one per step of its list), its
    role, its execution logs and the Standard state machine from its ASL file."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        machine: str,
        description: str,
        steps: Mapping[str, lambda_.Function],
        bus: events.IEventBus | None = None,
        definition: Definition | None = None,
    ) -> None:
        """``definition``: a machine outside ``STATE_MACHINES`` (the eval executor, which only
        the eval copy deploys: infra/evals.py)."""
        super().__init__(scope, construct_id)
        asl_file, own = definition or STATE_MACHINES[machine]
        self.machine = machine
        self.steps = dict(steps)
        stack = cdk.Stack.of(self)
        name = f"{stack.stack_name}-{machine.replace('_', '-')}"
        if set(steps) != set(own):  # a function no state invokes would be granted for nothing
            raise ValueError(f"{machine}: functions {sorted(steps)}, its steps {sorted(own)}")
        self.log_group = logs.LogGroup(
            self,
            "ExecutionLogs",
            # The /aws/vendedlogs/ prefix keeps CloudWatch's resource policy small.
            log_group_name=f"/aws/vendedlogs/states/{name}",
            retention=retention(config.log_retention_days),
            removal_policy=config.removal,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=f"{description}: invoke its step functions"
            + (", put events on its bus" if bus is not None else ""),
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid=f"Invoke{_camel(machine)}StepsOnly",
                actions=["lambda:InvokeFunction"],
                resources=[steps[step].function_arn for step in own],
            )
        )
        if bus is not None:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    sid="PutEventsOnTheMaestroBus",
                    actions=["events:PutEvents"],
                    resources=[bus.event_bus_arn],
                )
            )
        self.state_machine = sfn.StateMachine(
            self,
            _camel(machine),
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(ROOT / "statemachines" / asl_file)),
            definition_substitutions=asl_substitutions(
                machine,
                {step: fn.function_arn for step, fn in steps.items()},
                bus.event_bus_name if bus is not None else None,
                (asl_file, own),
            ),
            role=self.role,
            tracing_enabled=True,
            # Logged without the states' input and output: they carry tenants' phone numbers
            # and words (#11). The console's execution history still shows them. ALL logs every
            # state's event; ERROR (a setting, for cost) only the failures.
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel[config.state_machine_log_level],
                include_execution_data=False,
            ),
            removal_policy=config.removal,
        )
        NagSuppressions.add_resource_suppressions(
            self.role,
            [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="Logging needs CloudWatch Logs' log-delivery actions "
                    "(logs:CreateLogDelivery, PutResourcePolicy, …) and tracing needs X-Ray's "
                    "PutTraceSegments: neither supports resource-level permissions, so they "
                    "are granted on '*'. Lambda invoke (and PutEvents, where granted) are on "
                    "exact ARNs.",
                    applies_to=["Resource::*"],
                )
            ],
            apply_to_children=True,
        )
        if config.state_machine_log_level != "ALL":
            NagSuppressions.add_resource_suppressions(
                self.state_machine,
                [
                    NagPackSuppression(
                        id="AwsSolutions-SF1",
                        reason="state_machine_log_level ERROR, for cost: every state's event "
                        "logged is about 24 KB per package, most of the logs' cost "
                        "(docs/cost.md); failures are still logged, and the console's "
                        "execution history keeps every state of every execution for 90 days.",
                    )
                ],
            )
