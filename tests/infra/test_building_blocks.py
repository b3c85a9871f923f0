"""The infra's own helpers, without a synth: settings checks, the body-size pattern, the
dependency layer's pip command, the ASL substitutions, the environments."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from infra_synth import ROOT

from infra.api import MAX_REQUEST_BYTES, ROUTE_AUTH, greater_than_pattern, route_pattern, waf_regex
from infra.config import CONTEXT_KEY, EnvConfig, NotReachingAPersonError
from infra.functions import Bound, FunctionSpec, settings_environment
from infra.layers import PLATFORMS, PYTHON_VERSION, pip_command, runtime_requirements
from infra.pipeline import asl_path, asl_substitutions
from maestro.access import STATE_MACHINES, placeholder
from maestro.adapters.webhook_auth import SIGNATURE_HEADER_PATTERNS, app_signature, twilio_signature
from maestro.ingest.webhooks import MAX_MESSAGE_BYTES
from maestro.settings import FlusherSettings, PipelineSettings


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
        "MAESTRO_STATE_MACHINE_ARN": "arn:sm",
    }
    with pytest.raises(ValueError, match="required settings not provided"):
        settings_environment(_flusher(conversations_table="c"))
    with pytest.raises(ValueError, match="has no setting"):
        settings_environment(
            _flusher(
                conversations_table="c",
                state_machine_arn="a",
                queue_url="typo",
            )
        )
    with pytest.raises(ValueError, match="max_wait_seconds"):  # the model's own validation
        settings_environment(
            _flusher(
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


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_substitutions_cover_the_asl_and_refuse_a_missing_step(machine: str) -> None:
    """Each machine's: every placeholder of its ASL file, and the bus only where it puts events
    itself (the package pipeline's decision.recorded)."""
    steps = STATE_MACHINES[machine][1]
    bus = "bus" if machine == "package_pipeline" else None
    subs = asl_substitutions(machine, {step: f"arn:{step}" for step in steps}, bus)
    assert set(subs) == set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", asl_path(machine).read_text()))
    assert {subs[placeholder(step)] for step in steps} == {f"arn:{step}" for step in steps}
    with pytest.raises(ValueError, match=steps[1]):
        asl_substitutions(machine, {step: "arn" for step in steps if step != steps[1]}, bus)


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
    # Only dev says it is a development environment; the others keep placeholders nobody here
    # can replace, so they are refused until an operator does.
    assert [c.name for c in configs if c.development] == ["dev"]
    for config in configs:
        problems = config.not_reaching_a_person()
        if config.development:
            assert problems == []
        else:
            assert [p.split(" ")[0] for p in problems] == ["alarm_email", "on_call_pm_phone"]


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


def _context(**environments: dict[str, object]) -> dict[str, object]:
    context: dict[str, object] = json.loads((ROOT / "cdk.json").read_text())["context"]
    raw: dict[str, dict[str, object]] = dict(context[CONTEXT_KEY])  # type: ignore[call-overload]
    for name, values in environments.items():
        raw[name] = {**raw[name], **values}
    return {**context, CONTEXT_KEY: raw}


REAL = {"alarm_email": "pm-oncall@maestro-ops.net", "on_call_pm_phone": "+16175550342"}


def test_env_context_picks_environments_and_defaults_to_the_development_ones() -> None:
    import aws_cdk as cdk

    from infra.config import environments

    context = _context()
    assert [c.name for c in environments(cdk.App(context=context))] == ["dev"]
    (dev,) = environments(cdk.App(context={**context, "env": "dev", "step_mode": "true"}))
    assert dev.name == "dev"
    assert dev.step_mode is True
    with pytest.raises(ValueError, match="unknown env 'qa'"):
        environments(cdk.App(context={**context, "env": "qa"}))
    reachable = _context(staging=REAL, prod=REAL)
    picked = environments(cdk.App(context={**reachable, "env": "prod,staging"}))
    assert [c.name for c in picked] == ["staging", "prod"]  # cdk.json's order
    # Step mode is for development environments only: prod would keep every package waiting.
    with pytest.raises(NotReachingAPersonError, match="step_mode is true"):
        environments(cdk.App(context={**reachable, "env": "prod", "step_mode": "true"}))


def test_staging_and_prod_are_refused_until_they_reach_a_person() -> None:
    """Naive: staging and prod synthesized with no alarm subscriber, paging Twilio's test
    number +15005550006 from ten functions."""
    import aws_cdk as cdk

    from infra.config import environments

    for env in ("staging", "prod"):
        with pytest.raises(NotReachingAPersonError) as refused:
            environments(cdk.App(context={**_context(), "env": env}))
        assert refused.value.env == env
        assert [p.split(" ")[0] for p in refused.value.problems] == [
            "alarm_email",
            "on_call_pm_phone",
        ]
        message = str(refused.value)
        assert f"'{env}'" in message
        assert f"{CONTEXT_KEY} → {env}" in message
        assert '"development": true' in message


@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ({}, []),
        ({"alarm_email": ""}, ["alarm_email is empty"]),
        ({"alarm_email": "ops@example.com"}, ["alarm_email ops@example.com is a placeholder"]),
        ({"alarm_email": "ops@pager.example"}, ["alarm_email ops@pager.example is a placeholder"]),
        ({"alarm_email": "someone@team.test"}, ["alarm_email someone@team.test is a placeholder"]),
        ({"on_call_pm_phone": "+15005550006"}, ["on_call_pm_phone +15005550006 is one of Twilio"]),
        ({"on_call_pm_phone": "+15005550001"}, ["on_call_pm_phone +15005550001 is one of Twilio"]),
        ({"on_call_pm_phone": "+12125550142"}, ["on_call_pm_phone +12125550142 is a number res"]),
        ({"alarm_sms": "+15005550009"}, ["alarm_sms +15005550009 is one of Twilio"]),
        ({"alarm_sms": "+33611223344"}, []),
        ({"on_call_pm_phone": "+12125550242"}, []),  # 555-0242: not a fictional number
        # No fallback number: only with the directory's on-call declared (docs/on-call.md).
        ({"on_call_pm_phone": ""}, ["on_call_pm_phone is empty and on_call_from_directory"]),
        ({"on_call_pm_phone": "", "on_call_from_directory": True}, []),
        (
            {"on_call_pm_phone": "+15005550006", "on_call_from_directory": True},
            ["on_call_pm_phone +15005550006 is one of Twilio"],
        ),
        ({"step_mode": True}, ["step_mode is true"]),
    ],
)
def test_what_reaches_no_one(values: dict[str, object], refused: list[str]) -> None:
    raw = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]["prod"]
    config = EnvConfig(name="prod", **{**raw, **REAL, **values})
    problems = config.not_reaching_a_person()
    assert [p[: len(r)] for p, r in zip(problems, refused, strict=False)] == refused
    assert len(problems) == len(refused)
    # The same values in a development environment are its own business.
    assert EnvConfig(**{**config.model_dump(), "development": True}).not_reaching_a_person() == []


def test_settings_refuse_what_is_not_an_address_or_a_number() -> None:
    raw = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]["dev"]
    for bad in (
        {"alarm_email": "oncall"},
        {"alarm_sms": "555-0100"},
        {"on_call_pm_phone": "5550100"},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            EnvConfig(name="dev", **{**raw, **bad})


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"messages_retention_days": -1}, "messages_retention_days"),
        ({"messages_retention_days": 7}, "messages_retention_days 7 is under 14"),
        ({"decisions_retention_days": 36500}, "decisions_retention_days"),
        (
            {"decisions_retention_days": 180, "ledger_retention_days": 365},
            "ledger_retention_days 365 outlives decisions_retention_days 180",
        ),
        (
            {"decisions_retention_days": 730, "ledger_retention_days": 0},
            "ledger_retention_days 0 outlives",
        ),
    ],
)
def test_a_retention_that_cannot_hold_refuses_synthesis(
    values: dict[str, object], named: str
) -> None:
    import aws_cdk as cdk

    from infra.config import environments

    context = {**_context(dev=values), "env": "dev"}
    with pytest.raises(ValueError, match=re.escape(named)) as refused:
        environments(cdk.App(context=context))
    assert f"{CONTEXT_KEY} → dev" in str(refused.value)


@pytest.mark.parametrize(
    ("values", "named"),
    [
        (
            {"reserved_concurrency": {"sweepr": 1}},
            "reserved_concurrency names no function: ['sweepr']",
        ),
        ({"reserved_concurrency": {"brain": 20}}, "set brain_reserved_concurrency instead"),
        ({"reserved_concurrency": {"watcher": 0}}, "below 1 for ['watcher']"),
    ],
)
def test_a_reservation_for_no_function_refuses_synthesis(
    values: dict[str, object], named: str
) -> None:
    import aws_cdk as cdk

    from infra.config import environments

    context = {**_context(dev=values), "env": "dev"}
    with pytest.raises(ValueError, match=re.escape(named)):
        environments(cdk.App(context=context))


def test_a_retention_of_0_keeps_until_erased_and_the_log_may_outlive_the_ledger() -> None:
    import aws_cdk as cdk

    from infra.config import environments

    for values in (
        {"messages_retention_days": 0, "decisions_retention_days": 0, "ledger_retention_days": 0},
        {"decisions_retention_days": 0, "ledger_retention_days": 30},
        {
            "messages_retention_days": 14,
            "decisions_retention_days": 30,
            "ledger_retention_days": 30,
        },
    ):
        (dev,) = environments(cdk.App(context={**_context(dev=values), "env": "dev"}))
        assert dev.model_dump(include=set(values)) == values


# -- the signature headers' shapes, for WAF's regex engine ----------------------------------------

_TWILIO = SIGNATURE_HEADER_PATTERNS["twilio"]["X-Twilio-Signature"]
_SIGNATURE = SIGNATURE_HEADER_PATTERNS["app"]["X-Maestro-Signature"]
_TIMESTAMP = SIGNATURE_HEADER_PATTERNS["app"]["X-Maestro-Timestamp"]
SAMPLES = {
    _TWILIO: [
        twilio_signature("token-1", "https://h/v1/twilio/sms", {"Body": "the sink drips"}),
        base64.b64encode(hashlib.sha256(b"payload").digest()).decode(),  # SHA-256: 44 chars
        base64.b64encode(b"\xfb\xff" * 10).decode(),  # + and /
        "",
        "abc",
        "A" * 28,
        "A" * 27 + "==",
        "A" * 43,
        "A" * 44 + "=",
        "-" * 27 + "=",  # base64url
        "_" * 43 + "=",
        " " + "A" * 27 + "=",
        "A" * 26 + " =",
        "Ａ" * 27 + "=",  # full-width letters
        "٣" * 27 + "=",  # Arabic-Indic digits
        "v1=" + "a" * 64,
    ],
    _SIGNATURE: [
        app_signature("secret", "1781704800", '{"message_id": "m1"}'),
        "v1=" + "0" * 64,
        "v1=" + "A" * 64,
        "v2=" + "a" * 64,
        "v1=" + "a" * 63,
        "v1=" + "a" * 65,
        "v1:" + "a" * 64,
        "V1=" + "a" * 64,
        "v1=" + "٣" * 64,
        "",
    ],
    _TIMESTAMP: [
        "1781704800",
        "0",
        "999999999999",
        "1000000000000",
        "-1781704800",
        "1e9",
        "17817.04800",
        "",
        " 1781704800",
        "١٧٨١٧٠٤٨٠٠",  # Arabic-Indic digits: Python's \d would take them, [0-9] does not
        "0x6a",
    ],
}


@pytest.mark.parametrize("pattern", list(SAMPLES))
def test_the_waf_pattern_matches_what_the_handlers_pattern_does(pattern: str) -> None:
    translated = waf_regex(pattern)
    assert re.compile(translated).groups == 0  # WAF supports no capturing group
    matched = [v for v in SAMPLES[pattern] if re.fullmatch(pattern, v)]
    assert len(matched) >= 1
    assert len(matched) < len(SAMPLES[pattern])
    for value in SAMPLES[pattern]:
        # WAF's regex match statement matches anywhere in the header's value.
        assert bool(re.search(translated, value)) == bool(re.fullmatch(pattern, value)), value


@pytest.mark.skipif(
    subprocess.run(["grep", "-P", "x"], input="x", text=True, capture_output=True).returncode,
    reason="this grep has no PCRE (-P)",
)
@pytest.mark.parametrize("pattern", list(SAMPLES))
def test_pcre_agrees_with_python_on_the_translated_patterns(pattern: str) -> None:
    """WAF's engine is PCRE's: GNU grep -P runs the translated pattern through PCRE itself."""
    values = SAMPLES[pattern]
    done = subprocess.run(
        ["grep", "-P", "-n", waf_regex(pattern)],
        input="\n".join(values) + "\n",
        text=True,
        capture_output=True,
        env={"LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", "")},
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: no line matched
    by_pcre = {int(line.split(":", 1)[0]) - 1 for line in done.stdout.splitlines()}
    assert by_pcre == {i for i, v in enumerate(values) if re.fullmatch(pattern, v)}


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"(a)\1", "backreference"),
        (r"(?=a)b", "lookahead"),
        (r"(?<!a)b", "lookbehind"),
        (r"(?P<n>a)", "named group"),
        (r"(?i)abc", "inline flag"),
        (r"(?>a)", "atomic group"),
        (r"a*+", "possessive"),
        (r"a{2}+", "possessive"),
        (r"\d{4}", "Unicode digit"),
        (r"\w+", "Unicode in Python"),
        (r"a\Kb", "match reset"),
    ],
)
def test_what_waf_cannot_run_is_refused_by_name(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        waf_regex(pattern)


@pytest.mark.parametrize(
    ("pattern", "translated"),
    [
        (r"^(a|b)$", r"^(?:a|b)$"),
        (r"^(?:a)(b(c))$", r"^(?:a)(?:b(?:c))$"),
        (r"[(]x[)]", r"[(]x[)]"),  # parentheses in a class are characters
        (r"[]a(]", r"[]a(]"),
        (r"[^]a(]", r"[^]a(]"),
        (r"\(x\)", r"\(x\)"),
        (r"a\+\+", r"a\+\+"),  # escaped pluses are no quantifier
        (r"a+?", r"a+?"),  # lazy is supported
        (r"[\b]", r"[\b]"),  # a backspace in a class, not a word boundary
    ],
)
def test_capturing_groups_become_non_capturing_and_the_rest_is_kept(
    pattern: str, translated: str
) -> None:
    assert waf_regex(pattern) == translated


def test_the_route_pattern_matches_the_routes_after_any_prefix() -> None:
    twilio = route_pattern([p for p, signer in ROUTE_AUTH.items() if signer == "twilio"])
    for path in ("/v1/twilio/sms", "/v1/twilio/status/", "/twilio/transcript", "/b/twilio/sms"):
        assert re.search(twilio, path), path
    for path in ("/v1/app/messages", "/v1/twilio/sms/x", "/v1/twilio/smsx", "/v1/twilio"):
        assert not re.search(twilio, path), path
