"""The infra's own helpers, without a synth: settings checks, the body-size pattern, the
dependency layer's pip command, the ASL substitutions, the environments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from infra_synth import ROOT

from infra.api import MAX_REQUEST_BYTES, greater_than_pattern
from infra.config import CONTEXT_KEY, EnvConfig
from infra.functions import Bound, FunctionSpec, settings_environment
from infra.layers import PLATFORMS, PYTHON_VERSION, pip_command, runtime_requirements
from infra.pipeline import asl_substitutions
from maestro.ingest.webhooks import MAX_MESSAGE_BYTES
from maestro.pipeline.entry import STEPS
from maestro.settings import FlusherSettings, PipelineSettings
from maestro_dev.local.stack import ASL_PATH


@pytest.fixture(autouse=True)
def _sockets_off(socket_disabled: None) -> None:
    """Nothing here may reach a network."""


@given(limit=st.integers(min_value=0, max_value=10**9), value=st.integers(0, 10**10))
@example(limit=MAX_REQUEST_BYTES, value=MAX_REQUEST_BYTES)
@example(limit=MAX_REQUEST_BYTES, value=MAX_REQUEST_BYTES + 1)
@example(limit=899_999, value=900_000)
@example(limit=999, value=1000)
def test_greater_than_pattern_matches_exactly_the_larger_numbers(limit: int, value: int) -> None:
    pattern = re.compile(greater_than_pattern(limit))
    assert bool(pattern.match(str(value))) == (value > limit)
    assert bool(pattern.match("00" + str(value))) == (value > limit)
    assert len(pattern.pattern) <= 200  # WAF's limit for one regular expression


def test_the_edge_limit_is_derived_from_the_handlers() -> None:
    # A message at the handler's limit, fully percent-encoded, still passes the edge.
    assert MAX_REQUEST_BYTES > 3 * MAX_MESSAGE_BYTES
    assert MAX_REQUEST_BYTES < 10 * 1024 * 1024  # API Gateway's own hard limit


def _flusher(**settings: str | Bound) -> FunctionSpec:
    return FunctionSpec(
        name="flusher", description="", settings_model=FlusherSettings, settings=settings
    )


def test_settings_environment_is_checked_against_the_settings_model() -> None:
    env = settings_environment(
        _flusher(
            messages_table="m",
            conversations_table="c",
            state_machine_arn=Bound("arn:sm", lambda _who: None),
            idle_window_seconds="300",
            max_wait_seconds="900",
        )
    )
    assert env == {
        "MAESTRO_CONVERSATIONS_TABLE": "c",
        "MAESTRO_IDLE_WINDOW_SECONDS": "300",
        "MAESTRO_MAX_WAIT_SECONDS": "900",
        "MAESTRO_MESSAGES_TABLE": "m",
        "MAESTRO_STATE_MACHINE_ARN": "arn:sm",
    }
    with pytest.raises(ValueError, match="required settings not provided"):
        settings_environment(_flusher(messages_table="m"))
    with pytest.raises(ValueError, match="has no setting"):
        settings_environment(
            _flusher(
                messages_table="m",
                conversations_table="c",
                state_machine_arn="a",
                queue_url="typo",
            )
        )
    with pytest.raises(ValueError, match="max_wait_seconds"):  # the model's own validation
        settings_environment(
            _flusher(
                messages_table="m",
                conversations_table="c",
                state_machine_arn="a",
                idle_window_seconds="600",
                max_wait_seconds="300",
            )
        )


def test_the_anthropic_key_is_a_secret_name_setting() -> None:
    field = PipelineSettings.model_fields["anthropic_api_key_secret"]
    assert field.default is None
    assert not field.is_required()


def test_substitutions_cover_the_asl_and_refuse_a_missing_step() -> None:
    subs = asl_substitutions({step: f"arn:{step}" for step in STEPS}, "bus")
    assert set(subs) == set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", ASL_PATH.read_text()))
    with pytest.raises(ValueError, match="brain"):
        asl_substitutions({step: "arn" for step in STEPS if step != "brain"}, "bus")


def test_the_dependency_layer_is_built_for_lambda_arm64_without_docker(tmp_path: Path) -> None:
    requirements = runtime_requirements()
    names = {re.split(r"[\[=<>]", r)[0] for r in requirements}
    assert {"aws-lambda-powertools", "pydantic", "pydantic-settings", "twilio"} <= names
    assert "aws-lambda-powertools[tracer]" in {r.split("==")[0] for r in requirements}
    assert all("==" in r for r in requirements), "pinned to the versions the tests ran with"
    command = pip_command(requirements, tmp_path)
    assert command[1:4] == ["-m", "pip", "install"]
    for platform in PLATFORMS:
        assert platform.endswith("aarch64")
        assert command[command.index(platform) - 1] == "--platform"
    assert command[command.index("--python-version") + 1] == PYTHON_VERSION
    assert "--only-binary=:all:" in command
    assert command[command.index("--target") + 1] == str(tmp_path)


def test_environments_in_cdk_json_are_valid() -> None:
    raw = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]
    configs = [EnvConfig(name=name, **values) for name, values in raw.items()]
    assert [c.name for c in configs] == ["dev", "staging", "prod"]
    assert next(c for c in configs if c.name == "prod").retain
    for config in configs:
        assert config.max_wait_seconds >= config.idle_window_seconds


def test_a_twilio_account_needs_its_number_and_none_means_the_recording_messenger() -> None:
    raw = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]["dev"]
    assert raw["twilio_account_sid"] == ""  # nobody is texted until an account is configured
    account = "AC" + "0" * 32
    with pytest.raises(ValueError, match="twilio_from_number"):
        EnvConfig(name="dev", **{**raw, "twilio_account_sid": account})
    configured = EnvConfig(
        name="dev", **{**raw, "twilio_account_sid": account, "twilio_from_number": "+14155550000"}
    )
    assert configured.twilio_from_number == "+14155550000"


def test_env_context_picks_one_environment_and_step_mode_overrides() -> None:
    import aws_cdk as cdk

    from infra.config import environments

    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    assert [c.name for c in environments(cdk.App(context=context))] == ["dev", "staging", "prod"]
    (dev,) = environments(cdk.App(context={**context, "env": "dev", "step_mode": "true"}))
    assert dev.name == "dev"
    assert dev.step_mode is True
    with pytest.raises(ValueError, match="unknown env 'qa'"):
        environments(cdk.App(context={**context, "env": "qa"}))
