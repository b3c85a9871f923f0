"""The package pipeline: one function per step and the Standard state machine that sequences
them, from ``statemachines/package_pipeline.asl.json`` itself.

The ``${Placeholder}`` substitutions come from the one list of both machines' steps
(``maestro.access.STATE_MACHINES``, each step's placeholder by ``maestro.access.placeholder``),
which the handlers and the embedded stack read too, so the cloud, the local stack and the ASL
cannot drift (a test compares the three against the synthesized template). The state
machine's role may invoke exactly these functions and put events on this bus (plus the log
delivery and X-Ray calls that logging ALL and tracing need).
"""

from __future__ import annotations

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
from maestro.access import STATE_MACHINES, placeholder

ASL_FILE, STEPS = STATE_MACHINES["package_pipeline"]
ASL_PATH = ROOT / "statemachines" / ASL_FILE
BUS_PLACEHOLDER = "EventBusName"


def asl_substitutions(function_arns: dict[str, str], bus_name: str) -> dict[str, str]:
    """Every ``${Placeholder}`` of the pipeline's ASL → its value in the cloud."""
    missing = sorted(set(STEPS) - set(function_arns))
    if missing:
        raise ValueError(f"no function for the steps {missing}")
    subs = {placeholder(step): function_arns[step] for step in STEPS}
    subs[BUS_PLACEHOLDER] = bus_name
    return subs


class Pipeline(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        steps: dict[str, lambda_.Function],
        bus: events.EventBus,
    ) -> None:
        super().__init__(scope, construct_id)
        self.steps = steps
        stack = cdk.Stack.of(self)
        self.log_group = logs.LogGroup(
            self,
            "ExecutionLogs",
            # The /aws/vendedlogs/ prefix keeps CloudWatch's resource policy small.
            log_group_name=f"/aws/vendedlogs/states/{stack.stack_name}-package-pipeline",
            retention=retention(config.log_retention_days),
            removal_policy=config.removal,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description="The package pipeline: invoke its step functions, put events on its bus",
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="InvokeThePipelineStepsOnly",
                actions=["lambda:InvokeFunction"],
                resources=[steps[step].function_arn for step in STEPS],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="PutEventsOnTheMaestroBus",
                actions=["events:PutEvents"],
                resources=[bus.event_bus_arn],
            )
        )
        self.state_machine = sfn.StateMachine(
            self,
            "PackagePipeline",
            state_machine_name=f"{stack.stack_name}-package-pipeline",
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(ASL_PATH)),
            definition_substitutions=asl_substitutions(
                {step: fn.function_arn for step, fn in steps.items()}, bus.event_bus_name
            ),
            role=self.role,
            tracing_enabled=True,
            # Every state's event is logged, without its input and output: they carry tenants'
            # phone numbers and words (#11). The console's execution history still shows them.
            logs=sfn.LogOptions(
                destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
            removal_policy=config.removal,
        )
        NagSuppressions.add_resource_suppressions(
            self.role,
            [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="Logging ALL needs CloudWatch Logs' log-delivery actions "
                    "(logs:CreateLogDelivery, PutResourcePolicy, …) and tracing needs X-Ray's "
                    "PutTraceSegments: neither supports resource-level permissions, so they "
                    "are granted on '*'. Lambda invoke and PutEvents are on exact ARNs.",
                    applies_to=["Resource::*"],
                )
            ],
            apply_to_children=True,
        )
