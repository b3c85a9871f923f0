"""The one Lambda factory: every maestro function is made here, the same way.

A function is ``functions/<name>/handler.py`` (thin) on the two shared layers, Python 3.13 on
arm64, with Powertools' environment, active X-Ray tracing, its own log group (retention per
environment) and its own role. Its ``MAESTRO_*`` environment comes from its pydantic settings
model: the factory refuses, at synth, a setting the model does not have or a required one that
is missing, and validates the values. **Grants follow settings**: a function may touch a table,
queue, bus, secret or state machine only if its settings name it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct
from pydantic_settings import BaseSettings

from infra.config import ROOT, EnvConfig
from infra.layers import ARCHITECTURE, RUNTIME, Layers

FUNCTIONS_DIR = ROOT / "functions"
SERVICE = "maestro"  # maestro.observability.SERVICE
METRICS_NAMESPACE = "Maestro"  # maestro.observability.NAMESPACE
ENV_PREFIX = "MAESTRO_"
_TABLE_INDEXES = r"/^Resource::<.*Table[0-9A-F]{8}\.Arn>\/index\/\*$/g"


@dataclass(frozen=True)
class Bound:
    """A setting's value and the grant that lets a function use what it names."""

    value: str
    grant: Callable[[iam.IGrantable], object]


Setting = str | Bound


@dataclass(frozen=True)
class FunctionSpec:
    name: str  # functions/<name>/handler.py
    description: str
    settings_model: type[BaseSettings]
    settings: Mapping[str, Setting]
    timeout: cdk.Duration = field(default_factory=lambda: cdk.Duration.seconds(30))
    memory_mb: int = 512
    reserved_concurrency: int | None = None
    # A function whose code is in a layer of its own (the eval copy's executor, infra/evals.py):
    # its one-line entry (inline, ``index.handler``) and that layer. None: functions/<name>.
    inline_entry: str | None = None
    extra_layers: tuple[lambda_.ILayerVersion, ...] = ()


def settings_environment(spec: FunctionSpec) -> dict[str, str]:
    """``MAESTRO_*`` variables for the spec, checked against its settings model."""
    fields = spec.settings_model.model_fields
    unknown = sorted(set(spec.settings) - set(fields))
    if unknown:
        raise ValueError(f"{spec.name}: {spec.settings_model.__name__} has no setting {unknown}")
    missing = sorted(
        name for name, info in fields.items() if info.is_required() and name not in spec.settings
    )
    if missing:
        raise ValueError(f"{spec.name}: required settings not provided: {missing}")
    values = {k: v.value if isinstance(v, Bound) else v for k, v in spec.settings.items()}
    # Validates types and patterns now (a token stands in for a name known only at deploy).
    spec.settings_model.model_validate(values)
    return {ENV_PREFIX + key.upper(): value for key, value in sorted(values.items())}


class FunctionFactory(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: EnvConfig, layers: Layers
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._layers = layers
        self.functions: dict[str, lambda_.Function] = {}

    def make(self, spec: FunctionSpec) -> lambda_.Function:
        if spec.name in self.functions:
            raise ValueError(f"function {spec.name} made twice")
        if spec.inline_entry is None and not (FUNCTIONS_DIR / spec.name / "handler.py").is_file():
            raise FileNotFoundError(f"functions/{spec.name}/handler.py")
        stack = cdk.Stack.of(self)
        function_name = f"{stack.stack_name}-{spec.name.replace('_', '-')}"
        scope = Construct(self, spec.name)
        log_group = logs.LogGroup(
            scope,
            "Logs",
            log_group_name=f"/aws/lambda/{function_name}",
            retention=retention(self._config.log_retention_days),
            removal_policy=self._config.removal,
        )
        role = iam.Role(
            scope,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{function_name}: its log group, X-Ray, and what its settings name",
        )
        # Its own log group only: no AWSLambdaBasicExecutionRole (logs:* on every group).
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        environment = {
            "POWERTOOLS_SERVICE_NAME": SERVICE,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "POWERTOOLS_LOGGER_LOG_EVENT": "false",  # events carry tenants' words
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
            "POWERTOOLS_TRACER_CAPTURE_ERROR": "true",
            **settings_environment(spec),
        }
        function = lambda_.Function(
            scope,
            "Function",
            function_name=function_name,
            description=spec.description,
            code=lambda_.Code.from_asset(
                str(FUNCTIONS_DIR / spec.name), exclude=["**/__pycache__", "**/*.pyc"]
            )
            if spec.inline_entry is None
            else lambda_.Code.from_inline(spec.inline_entry),
            handler="handler.handler" if spec.inline_entry is None else "index.handler",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            layers=[self._layers.dependencies, self._layers.runtime, *spec.extra_layers],
            memory_size=spec.memory_mb,
            timeout=spec.timeout,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            role=role,
            environment=environment,
            reserved_concurrent_executions=(
                spec.reserved_concurrency or self._config.reserved_concurrency.get(spec.name)
            ),
        )
        for setting in spec.settings.values():
            if isinstance(setting, Bound):
                setting.grant(function)
        NagSuppressions.add_resource_suppressions(
            function,
            [
                NagPackSuppression(
                    id="AwsSolutions-L1",
                    reason=f"{RUNTIME.name}, not the newest Python runtime: it is the newest "
                    "one every runtime dependency declares support for (twilio 9.x declares "
                    "3.13 at most), and the dependency layer's wheels are built for it. Move "
                    "both together (infra/layers.py RUNTIME, PYTHON_VERSION).",
                )
            ],
        )
        NagSuppressions.add_resource_suppressions(
            role,
            [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="X-Ray's PutTraceSegments and PutTelemetryRecords support no "
                    "resource-level permissions (active tracing adds them on '*'); a DynamoDB "
                    "grant adds '<table ARN>/index/*' so the function can query that table's "
                    "own indexes, and no other table's.",
                    applies_to=["Resource::*", RegexAppliesTo(regex=_TABLE_INDEXES)],
                )
            ],
            apply_to_children=True,
        )
        self.functions[spec.name] = function
        return function


_RETENTION = {
    1: "ONE_DAY",
    3: "THREE_DAYS",
    5: "FIVE_DAYS",
    7: "ONE_WEEK",
    14: "TWO_WEEKS",
    30: "ONE_MONTH",
    60: "TWO_MONTHS",
    90: "THREE_MONTHS",
    120: "FOUR_MONTHS",
    150: "FIVE_MONTHS",
    180: "SIX_MONTHS",
    365: "ONE_YEAR",
    400: "THIRTEEN_MONTHS",
    545: "EIGHTEEN_MONTHS",
    731: "TWO_YEARS",
    1096: "THREE_YEARS",
    1827: "FIVE_YEARS",
    2192: "SIX_YEARS",
    2557: "SEVEN_YEARS",
    2922: "EIGHT_YEARS",
    3288: "NINE_YEARS",
    3653: "TEN_YEARS",
}


def retention(days: int) -> logs.RetentionDays:
    """CloudWatch Logs offers only some retention periods; anything else is refused at synth."""
    if days not in _RETENTION:
        raise ValueError(
            f"log_retention_days {days} is not one CloudWatch offers: {sorted(_RETENTION)}"
        )
    member: logs.RetentionDays = getattr(logs.RetentionDays, _RETENTION[days])
    return member
