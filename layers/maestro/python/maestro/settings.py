"""One pydantic settings model per function, read from the environment at invocation.

Settings hold table names, queue URLs, windows and the *names or ARNs* of secrets, never secret
values. Each handler validates its settings on its first invocation (not at import), so a
misconfigured function fails with a clear error in its own logs instead of at cold start.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, HttpUrl, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class _Base(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MAESTRO_", extra="ignore", frozen=True)

    region: str | None = Field(default=None, description="Defaults to the Lambda's own region")


class _Windows(_Base):
    idle_window_seconds: int = Field(default=300, ge=1, le=900)
    max_wait_seconds: int = Field(default=900, ge=1, le=900)

    @model_validator(mode="after")
    def _max_wait_covers_idle(self) -> _Windows:
        if self.max_wait_seconds < self.idle_window_seconds:
            raise ValueError("max_wait_seconds must be at least idle_window_seconds")
        return self


class InboundSettings(_Windows):
    """functions/inbound_sms: the webhooks (Twilio SMS, status, transcripts; in-app; kickoff)."""

    messages_table: str
    conversations_table: str
    parties_table: str
    debounce_queue_url: str
    twilio_auth_token_secret: str = Field(description="Secret name or ARN of the auth token")
    app_signing_secret: str = Field(description="Secret name or ARN for in-app/kickoff HMAC")
    public_base_url: HttpUrl | None = Field(
        default=None,
        description="The URL Twilio is configured with, up to the stage (or custom domain). When "
        "unset, it is rebuilt from the request: X-Forwarded-Proto, Host, stage and path.",
    )
    app_signature_tolerance_seconds: int = Field(default=300, ge=1)
    severity_probe: bool = Field(
        default=False, description="Signal the flusher to probe each new message (a model is set)"
    )


class ModelSettings(_Base):
    """Which model answers. Anthropic when a key is configured (the secret's name or ARN in the
    cloud, ``ANTHROPIC_API_KEY`` locally), else none: every stage takes its deterministic path
    (the offline brain), named in every output."""

    anthropic_api_key_secret: str | None = Field(
        default=None, description="Secret name or ARN of the Anthropic API key"
    )
    cheap_model_id: str = "claude-haiku-5-5"
    strong_model_id: str = "claude-sonnet-5-5"
    model_timeout_seconds: float = Field(default=20.0, gt=0)
    model_max_retries: int = Field(default=2, ge=0, le=5)
    package_model_calls: int = Field(default=16, ge=1)
    package_model_tokens: int = Field(default=120_000, ge=1)
    daily_model_calls: int = Field(default=150, ge=1, description="Per conversation per day")
    daily_model_tokens: int = Field(default=900_000, ge=1)


class FlusherSettings(_Windows, ModelSettings):
    """functions/flusher: the debounce queue's consumer (and the severity probe)."""

    messages_table: str
    conversations_table: str
    state_machine_arn: str
    parties_table: str | None = Field(default=None, description="For the probe's contexts")
    work_orders_table: str | None = Field(default=None, description="For the probe's contexts")
    step_mode: bool = Field(
        default=False,
        description="Start every execution in step mode: it pauses at each step gate until "
        "released (`maestro step`) or timed out. For debugging a dev stack, as `maestro serve "
        "--step` does locally; never in production.",
    )


class PipelineSettings(ModelSettings):
    """functions/{lease,precheck,brain,dispose,act,persist,fail_open,step_gate}."""

    messages_table: str
    conversations_table: str
    parties_table: str
    work_orders_table: str
    timeline_table: str
    pending_table: str
    decisions_table: str
    state_table: str
    gates_table: str
    idempotency_table: str
    event_bus_name: str
    on_call_pm_phone: str = Field(pattern=r"^\+[1-9]\d{6,14}$")
    messenger: Literal["recording"] = Field(
        default="recording",
        description="Until the Twilio adapter (#6) the only messenger records messages and sends "
        "nothing; it must be chosen explicitly so no deployment believes it texts anyone.",
    )
    samples: int = Field(default=5, ge=1, le=20, description="The most reasoning samples")
    lease_ttl_seconds: int = Field(default=900, ge=30)
