"""What the session's synthesis produced, for the infra tests (the fixtures are in conftest)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The jsii kernel runs on Node; the machine's Node 20 is past its end of life for jsii, which
# says so on every start. The tests do not need the banner.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

Template = dict[str, Any]


@dataclass(frozen=True)
class Synth:
    outdir: Path
    templates: dict[str, Template]  # env name → template
    seconds: float
    stderr: str
    # env name → its eval copy's template (maestro-<env>-eval), where the env deploys one.
    eval_templates: dict[str, Template] = field(default_factory=dict)

    def resources(self, env: str, kind: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.templates[env]["Resources"].items() if r["Type"] == kind}


# What an operator would put in cdk.json for the environments that must reach a person (the
# committed cdk.json keeps placeholders, which synthesis refuses): the tests synthesize with
# these, given as context.
REACHABLE = {
    "staging": {
        "alarm_email": "oncall-staging@maestro-ops.net",
        "on_call_pm_phone": "+16175550342",
        # Reserved concurrency for a function besides the brain, and the sweep's fan-out.
        "reserved_concurrency": {"sweeper": 1},
        "sweep_concurrency": 16,
    },
    "prod": {
        "alarm_email": "oncall@maestro-ops.net",
        "alarm_sms": "+16175550343",
        "on_call_pm_phone": "+16175550344",
        # An environment that sets its account-wide daily caps (the others keep the defaults).
        "daily_page_cap": 40,
        "daily_text_cap": 1500,
        "daily_model_call_cap": 3000,
        # Retention of its own (cdk.json's prod keeps the defaults).
        "messages_retention_days": 60,
        "ledger_retention_days": 400,
    },
}


def cdk_environments() -> list[str]:
    return list(cdk_json_environments())


def cdk_json_environments() -> dict[str, dict[str, Any]]:
    """cdk.json's ``maestro:environments``, as committed."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    environments: dict[str, dict[str, Any]] = context["maestro:environments"]
    return environments


def synthesized_environments() -> dict[str, dict[str, Any]]:
    """What the session's synthesis was given: cdk.json's, with :data:`REACHABLE`'s values."""
    return {
        name: {**values, **REACHABLE.get(name, {})}
        for name, values in cdk_json_environments().items()
    }


def policy_resource(value: Any) -> str:
    """The logical id a policy resource names ("*" for "*"); a table's "<ARN>/index/*" names
    that table (its own indexes)."""
    if value == "*":
        return "*"
    if "Ref" in value:
        return str(value["Ref"])
    if "Fn::GetAtt" in value:
        return str(value["Fn::GetAtt"][0])
    parts = value.get("Fn::Join", ["", []])[1]
    if len(parts) == 2 and parts[1] == "/index/*":
        return policy_resource(parts[0])
    raise AssertionError(f"a resource this test cannot name: {value}")
