"""Per-environment settings, read from cdk.json's context (``maestro:environments``).

``cdk deploy -c env=dev`` synthesizes the dev stack alone; without ``env`` every environment in
cdk.json is synthesized, one stack (and one template) each, named ``maestro-<env>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import aws_cdk as cdk
from pydantic import BaseModel, ConfigDict, Field, model_validator

from maestro_dev.cloud import stack_for_env

ROOT = Path(__file__).resolve().parents[1]
CONTEXT_KEY = "maestro:environments"


def stack_name(env: str) -> str:
    """``maestro-<env>``: the same name `maestro executions --env <env>` looks for."""
    return stack_for_env(env)


class EnvConfig(BaseModel):
    """One environment. Every number here reaches a resource or a function's settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,20}$")
    idle_window_seconds: int = Field(ge=1, le=900, description="MAESTRO_IDLE_WINDOW_SECONDS")
    max_wait_seconds: int = Field(ge=1, le=900, description="MAESTRO_MAX_WAIT_SECONDS")
    step_mode: bool = Field(
        default=False,
        description="Every execution pauses at its step gates (debugging a dev stack); "
        "`cdk deploy -c env=dev -c step_mode=true` turns it on for one deploy",
    )
    cheap_model_id: str = Field(
        description="The cheap model: the severity probe, the pre-check, decide()'s judgments"
    )
    strong_model_id: str = Field(description="The strong model: reasoning and the manage agent")
    alarm_email: str = Field(description="Where alarms go; empty: the topic has no subscriber")
    on_call_pm_phone: str = Field(description="E.164; the pipeline pages it")
    twilio_account_sid: str = Field(
        default="",
        pattern=r"^(AC[0-9a-fA-F]{32})?$",
        description="The Twilio account maestro texts from; empty: the recording messenger "
        "(it texts no one). Its auth token is the TwilioAuthToken secret.",
    )
    twilio_from_number: str = Field(
        default="",
        pattern=r"^(\+[1-9]\d{6,14})?$",
        description="E.164: the Twilio number maestro texts from (needed with an account)",
    )
    log_retention_days: int = Field(ge=1)
    removal_policy: Literal["destroy", "retain"] = Field(
        description="Tables, secrets, key and log groups on `cdk destroy`: kept or deleted"
    )
    api_rate_limit: float = Field(gt=0, description="Stage throttling: steady requests/s")
    api_burst_limit: int = Field(gt=0, description="Stage throttling: burst")
    archive_retention_days: int = Field(ge=1, description="The event archive, for replays")
    brain_reserved_concurrency: int | None = Field(
        default=None,  # JSON null: the CDK drops null context values
        ge=1,
        description="Caps concurrent brain steps, so the model API's rate limit and the token "
        "budget hold under a burst. None: no reservation (accounts whose concurrency quota is "
        "still the new-account 10 cannot reserve any).",
    )
    flusher_max_concurrency: int = Field(
        ge=2, le=1000, description="The debounce queue's event source: concurrent flushers"
    )
    fallback_rate_threshold: float = Field(gt=0, le=1, description="Alarm: fallbacks / packages")

    @model_validator(mode="after")
    def _an_account_needs_its_number(self) -> EnvConfig:
        if self.twilio_account_sid and not self.twilio_from_number:
            raise ValueError(f"{self.name}: twilio_account_sid needs twilio_from_number")
        return self

    @property
    def removal(self) -> cdk.RemovalPolicy:
        return (
            cdk.RemovalPolicy.RETAIN
            if self.removal_policy == "retain"
            else cdk.RemovalPolicy.DESTROY
        )

    @property
    def retain(self) -> bool:
        return self.removal_policy == "retain"


def environments(app: cdk.App) -> list[EnvConfig]:
    """The environments to synthesize: ``-c env=NAME`` picks one, else all of cdk.json's."""
    raw: dict[str, dict[str, Any]] = app.node.try_get_context(CONTEXT_KEY) or {}
    if not raw:
        raise ValueError(f"cdk.json has no {CONTEXT_KEY!r} context")
    chosen = app.node.try_get_context("env")
    if chosen is not None and chosen not in raw:
        raise ValueError(f"unknown env {chosen!r}: cdk.json has {sorted(raw)}")
    step_mode = app.node.try_get_context("step_mode")  # -c step_mode=true: a string
    configs = []
    for name, values in raw.items():
        if chosen is not None and name != chosen:
            continue
        if step_mode is not None:
            values = {**values, "step_mode": str(step_mode).lower() == "true"}
        configs.append(EnvConfig(name=name, **values))
    return configs
