"""One pydantic settings model per function, read from the environment at invocation.

Settings hold table names, queue URLs, windows and the *names or ARNs* of secrets, never secret
values. Each handler validates its settings on its first invocation (not at import), so a
misconfigured function fails with a clear error in its own logs instead of at cold start.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, HttpUrl, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from maestro.access import DISPATCH_STEPS, EVENT_PUBLISHERS, FUNCTION_TABLES, PIPELINE_STEPS
from maestro.tables import COMPLETION_SHARDS, RETENTION_DAYS

TWILIO_ACCOUNT_SID_PATTERN = r"^AC[0-9a-fA-F]{32}$"


class _Base(BaseSettings):
    # Built at the first instantiation, not at import: a function builds its own settings model
    # on its first invocation and never the others (about 20 ms of every cold start).
    model_config = SettingsConfigDict(
        env_prefix="MAESTRO_", extra="ignore", frozen=True, defer_build=True
    )

    region: str | None = Field(default=None, description="Defaults to the Lambda's own region")


class RetentionSettings(_Base):
    """How long what people wrote is kept, per table, in days (0: until erased). DynamoDB's TTL
    deletes an item within days of its expiry: a bound, not a schedule (see
    docs/erase-and-retention.md)."""

    messages_retention_days: int = Field(
        default=RETENTION_DAYS["messages"],
        ge=0,
        description="Inbound and outbound messages (bodies, numbers) and the buffered copies",
    )
    decisions_retention_days: int = Field(
        default=RETENTION_DAYS["decisions"],
        ge=0,
        description="The decision log: the audit trail, kept longer than the messages",
    )
    ledger_retention_days: int = Field(
        default=RETENTION_DAYS["ledger"], ge=0, description="Evidence and Shame rows"
    )


class CompletionShardSettings(_Base):
    """The shards of the completions index's day key (``maestro.tables.COMPLETION_SHARDS``):
    the same number for the steps that write completion lines and the sweeper that reads them
    (cdk.json's ``completion_shards`` sets it for all three)."""

    completion_shards: int = Field(
        default=COMPLETION_SHARDS,
        ge=1,
        le=64,
        description="Partitions a day's completion lines spread over (raise it, never lower it)",
    )


class _Windows(_Base):
    idle_window_seconds: int = Field(default=300, ge=1, le=900)
    urgent_idle_window_seconds: int = Field(
        default=60,
        ge=1,
        le=900,
        description="The idle window of a conversation with something urgent outstanding in "
        "memory (an emergency being handled, a vendor due today): docs/flush-triggers.md. "
        "One at or above idle_window_seconds shortens nothing",
    )
    max_wait_seconds: int = Field(default=900, ge=1, le=900)

    @model_validator(mode="after")
    def _max_wait_covers_idle(self) -> _Windows:
        if self.max_wait_seconds < self.idle_window_seconds:
            raise ValueError("max_wait_seconds must be at least idle_window_seconds")
        return self


class InboundSettings(_Windows, RetentionSettings):
    """functions/inbound_sms: the webhooks (Twilio SMS, status, transcripts; in-app; kickoff)."""

    messages_table: str
    conversations_table: str
    parties_table: str
    debounce_queue_url: str
    twilio_auth_token_secret: str = Field(description="Secret name or ARN of the auth token")
    twilio_account_sid: str | None = Field(
        default=None,
        pattern=TWILIO_ACCOUNT_SID_PATTERN,
        description="The Twilio account whose webhooks are accepted (each names its AccountSid). "
        "Empty: no account, and the Twilio routes answer 503 (the in-app routes still work)",
    )
    app_signing_secret: str = Field(description="Secret name or ARN for in-app/kickoff HMAC")
    public_base_url: HttpUrl | None = Field(
        default=None,
        description="The URL Twilio is configured with, up to the stage (or custom domain). When "
        "unset, it is rebuilt from the request: X-Forwarded-Proto, Host, stage and path.",
    )
    app_signature_tolerance_seconds: int = Field(default=300, ge=1)
    severity_probe: bool = Field(
        default=False, description="Signal a probe of each new message (a model is set)"
    )
    probe_queue_url: str = Field(
        default="",
        description="The probe queue (the prober reads it): each new message's probe signal goes "
        "there. Empty: to the debounce queue, and the flusher probes (as before the prober)",
    )

    @field_validator("twilio_account_sid", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value


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
    daily_judgment_calls: int = Field(
        default=30,
        ge=1,
        description="Per conversation per UTC day, the bounded judgments' calls (3 per judgment); "
        "past it a judgment takes its default (re-validation: ask, never act)",
    )
    account_daily_model_calls: int = Field(
        default=5000,
        ge=1,
        description="The whole account's model calls per UTC day; past it every stage takes its "
        "deterministic default (recorded fallback=true)",
    )
    compose_replies: bool = Field(
        default=True,
        description="With a model, the assistant's reply is composed by the cheap model and "
        "checked before it is sent (docs/composed-replies.md); off: its fixed texts. No effect "
        "without a model",
    )


class SendCapSettings(_Base):
    """The account-wide daily caps on what is sent (per UTC day; see docs/unknown-senders.md).
    Past the page cap an emergency from a known sender still pages, and any other page becomes
    a line of the hourly digest; past the text cap a text is not sent (recorded as not sent),
    except safety advice, which always goes."""

    account_daily_pages: int = Field(default=100, ge=1, description="Pages to the on-call PM")
    account_daily_texts: int = Field(default=2000, ge=1, description="Texts to anyone else")
    digest_max_lines: int = Field(
        default=8, ge=1, le=30, description="Lines of the hourly digest page, then 'and N more'"
    )


TWILIO_API_URL = "https://api.twilio.com"


class TwilioSettings(RetentionSettings):
    """Which messenger texts: **Twilio** when an account SID and its auth token are configured,
    else the **recording** messenger, which writes each message to the messages table and sends
    nothing (named as such wherever it answers). The auth token is a secret (its name or ARN)."""

    twilio_account_sid: str | None = Field(
        default=None, pattern=TWILIO_ACCOUNT_SID_PATTERN, description="Empty: no Twilio account"
    )
    twilio_auth_token_secret: str | None = Field(
        default=None, description="Secret name or ARN of the account's auth token"
    )
    twilio_from_number: str | None = Field(
        default=None, pattern=r"^\+[1-9]\d{6,14}$", description="The number maestro texts from"
    )
    twilio_status_callback_url: str | None = Field(
        default=None,
        description="Where Twilio posts status callbacks: the webhook API's URL + twilio/status "
        "(a plain string: in the stack it is known only at deploy)",
    )
    twilio_api_base_url: HttpUrl = Field(
        default=HttpUrl(TWILIO_API_URL),
        description="The Twilio API the SDK's HTTP client calls: Twilio's own, unless a local "
        "stack points it at its loopback Twilio",
    )
    twilio_timeout_seconds: float = Field(default=10.0, gt=0, le=60)
    twilio_send_attempts: int = Field(default=4, ge=1, le=8)
    twilio_retry_base_seconds: float = Field(default=0.5, ge=0, le=10)

    @field_validator(
        "twilio_account_sid",
        "twilio_auth_token_secret",
        "twilio_from_number",
        "twilio_status_callback_url",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @model_validator(mode="after")
    def _twilio_needs_its_number(self) -> TwilioSettings:
        if self.messenger == "twilio" and self.twilio_from_number is None:
            raise ValueError("a Twilio account needs twilio_from_number: the number it texts from")
        return self

    @property
    def messenger(self) -> Literal["twilio", "recording"]:
        """Twilio when the account SID and its token are configured; else the recording
        messenger (it sends nothing)."""
        if self.twilio_account_sid and self.twilio_auth_token_secret:
            return "twilio"
        return "recording"


class FlusherSettings(_Windows):
    """functions/flusher: the debounce queue's consumer. It calls no model: the severity probe
    is the prober's (``ProberSettings``)."""

    conversations_table: str
    state_machine_arn: str
    work_orders_table: str | None = Field(
        default=None, description="The urgency in memory: the sender's open WOs"
    )
    state_table: str | None = Field(
        default=None,
        description="The urgency in memory (MaestroState): with work_orders_table, the urgent "
        "idle window applies",
    )
    step_mode: bool = Field(
        default=False,
        description="Start every execution in step mode: it pauses at each step gate until "
        "released (`maestro step`) or timed out. For debugging a dev stack, as `maestro serve "
        "--step` does locally; never in production.",
    )
    probe_queue_url: str = Field(
        default="",
        description="The probe queue: a probe signal that came to the debounce queue (sent "
        "before the webhook had the probe queue's setting) is handed on to it. Empty: such a "
        "signal is counted (ProbeSignalsUnrouted) and dropped; the idle window flushes",
    )


class ProberSettings(ModelSettings):
    """functions/prober: the probe queue's consumer (the severity probe, docs/headroom.md)."""

    messages_table: str
    conversations_table: str = Field(description="The buffered copies and the model budgets")
    parties_table: str
    work_orders_table: str = Field(description="The sender's open contexts")
    debounce_queue_url: str = Field(description="Where an emergency reading sends its expedite")


_FALLBACK_PHONE = r"^(\+[1-9]\d{6,14})?$"
_FALLBACK_DOC = (
    "The account's fallback number for pages, after the directory's on-call and default PMs "
    "(docs/on-call.md); empty: none (a page with no one to go to is recorded, and alarmed)"
)

PIPELINE_TABLES = (
    "messages",
    "sends",
    "conversations",
    "parties",
    "directory",
    "work_orders",
    "timeline",
    "pending",
    "decisions",
    "state",
    "gates",
    "idempotency",
    "dispatch",
)
"""The tables a pipeline step may use: each is a ``<name>_table`` setting of PipelineSettings."""


class PipelineSettings(ModelSettings, TwilioSettings, SendCapSettings, CompletionShardSettings):
    """functions/<step> for each of ``maestro.pipeline.entry.STEPS``.

    With ``step`` set (the cloud: one function per step), the settings name exactly the tables
    of the step's row in ``maestro.access.FUNCTION_TABLES``, and the event bus only for a step
    that publishes: a missing one and an extra one are both refused, at synth and at the first
    invocation. Without ``step`` (the embedded stack runs every step in one process), they name
    every table and the bus.
    """

    step: str | None = Field(
        default=None, description="The one step this function runs; unset: all of them"
    )
    messages_table: str | None = None
    sends_table: str | None = None
    conversations_table: str | None = None
    parties_table: str | None = None
    directory_table: str | None = None
    work_orders_table: str | None = None
    timeline_table: str | None = None
    pending_table: str | None = None
    decisions_table: str | None = None
    state_table: str | None = None
    gates_table: str | None = None
    idempotency_table: str | None = None
    dispatch_table: str | None = None
    event_bus_name: str | None = None
    on_call_pm_phone: str = Field(default="", pattern=_FALLBACK_PHONE, description=_FALLBACK_DOC)
    samples: int = Field(default=5, ge=1, le=20, description="The most reasoning samples")
    lease_ttl_seconds: int = Field(default=900, ge=30)
    unknown_emergency_fold_minutes: int = Field(
        default=30,
        ge=1,
        le=24 * 60,
        description="After an unknown number's emergency page, its repeats within this many "
        "minutes fold into that page: no new page, no new safety text",
    )

    @field_validator("step", "event_bus_name", *(f"{t}_table" for t in PIPELINE_TABLES))
    @classmethod
    def _empty_is_unset_too(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _the_steps_tables_exactly(self) -> PipelineSettings:
        if self.step is None:
            needed, publishes = set(PIPELINE_TABLES), True
        else:
            if self.step not in PIPELINE_STEPS:
                raise ValueError(f"step {self.step!r} is not one of {list(PIPELINE_STEPS)}")
            needed = set(FUNCTION_TABLES[self.step])
            publishes = self.step in EVENT_PUBLISHERS
        named = {t for t in PIPELINE_TABLES if self.table(t) is not None}
        problems = [f"{t}_table is required" for t in sorted(needed - named)]
        problems += [
            f"{t}_table is not one of the step's tables (maestro.access.FUNCTION_TABLES)"
            for t in sorted(named - needed)
        ]
        if publishes and self.event_bus_name is None:
            problems.append("event_bus_name is required")
        if not publishes and self.event_bus_name is not None:
            problems.append("event_bus_name is set, but the step publishes no events")
        if problems:
            raise ValueError(f"{self.step or 'the pipeline'}: " + "; ".join(problems))
        return self

    def table(self, logical_name: str) -> str | None:
        """The configured name of one of :data:`PIPELINE_TABLES`, or None."""
        name: str | None = getattr(self, f"{logical_name}_table")
        return name


class DigestSettings(TwilioSettings, SendCapSettings):
    """functions/digest: on a schedule (hourly), one page per closed hour listing the unknown
    numbers that texted and the pages a daily cap held back."""

    conversations_table: str
    messages_table: str
    sends_table: str
    directory_table: str = Field(description="Who is on call for every property (the page's)")
    event_bus_name: str
    on_call_pm_phone: str = Field(default="", pattern=_FALLBACK_PHONE, description=_FALLBACK_DOC)
    digest_lookback_hours: int = Field(
        default=24, ge=1, le=168, description="How far back a run looks for an hour not sent"
    )


class WatcherSettings(TwilioSettings):
    """functions/watcher: reads each claimed surface back (the messenger's surface by the same
    choice as the pipeline's messenger, the WO store and timelines, the pending store, the
    decision log, the work orders' dispatch runs) and writes the ledger."""

    ledger_table: str
    messages_table: str
    work_orders_table: str
    timeline_table: str
    pending_table: str
    decisions_table: str
    dispatch_table: str


class SweeperSettings(RetentionSettings, CompletionShardSettings):
    """functions/sweeper: on a schedule, packages completed since its watermark and more than
    ``window`` ago whose recorded effects no event claimed (``missing_event``)."""

    decisions_table: str
    ledger_table: str
    sweep_window_seconds: int = Field(
        default=600, ge=60, description="How long the watcher has to see an effect's event"
    )
    sweep_lookback_seconds: int = Field(
        default=3600,
        ge=300,
        description="Where the first sweep starts (past the window), before any watermark",
    )
    sweep_concurrency: int = Field(
        default=8, ge=1, le=64, description="Packages a sweep checks at once"
    )
    sweep_max_packages: int = Field(
        default=100_000,
        ge=1,
        description="Packages one sweep checks at most; a backlog takes several sweeps",
    )


DISPATCH_TABLES = (
    "dispatch",
    "work_orders",
    "timeline",
    "state",
    "directory",
    "parties",
    "conversations",
    "messages",
    "sends",
)
"""The tables a work order machine step may use: each is a ``<name>_table`` of DispatchSettings."""


class DispatchPolicySettings(_Base):
    """The account's dispatch policy (docs/dispatch.md): what a property's own (the directory's
    ``nte_usd``/``approval_over_usd``) does not say. Seconds, US dollars, local hours."""

    offer_timeout_emergency_seconds: int = Field(default=600, ge=60, le=86_400)
    offer_timeout_urgent_seconds: int = Field(default=1800, ge=60, le=86_400)
    offer_timeout_routine_seconds: int = Field(default=14_400, ge=60, le=7 * 86_400)
    gather_deadline_seconds: int = Field(
        default=7200, ge=60, le=7 * 86_400, description="How long gather waits for the tenant"
    )
    approval_timeout_seconds: int = Field(
        default=3600, ge=60, le=7 * 86_400, description="How long the PM's approval is awaited"
    )
    nte_emergency_usd: int = Field(default=1500, ge=0, description="Not to exceed, emergency")
    nte_urgent_usd: int = Field(default=600, ge=0, description="Not to exceed, urgent")
    nte_routine_usd: int = Field(default=300, ge=0, description="Not to exceed, routine")
    approval_over_usd: int = Field(
        default=500,
        ge=0,
        description="A job whose not-to-exceed is above this needs the PM's approval (never "
        "an emergency's)",
    )
    business_hours_start: int = Field(default=8, ge=0, le=23, description="Local hour, from")
    business_hours_end: int = Field(default=18, ge=1, le=24, description="Local hour, until")
    business_days: tuple[int, ...] = Field(
        default=(0, 1, 2, 3, 4), description="Weekdays open, Monday = 0"
    )

    @model_validator(mode="after")
    def _hours_in_order(self) -> DispatchPolicySettings:
        if self.business_hours_end <= self.business_hours_start:
            raise ValueError("business_hours_end must come after business_hours_start")
        return self


class DispatchSettings(DispatchPolicySettings, TwilioSettings, SendCapSettings):
    """functions/wo_<step> for each of ``maestro.access.DISPATCH_STEPS`` (the work order
    machine). As PipelineSettings: with ``step`` set, exactly the tables of its row; without it
    (the embedded stack), every table of :data:`DISPATCH_TABLES`."""

    step: str | None = Field(
        default=None, description="The one step this function runs; unset: all of them"
    )
    dispatch_table: str | None = None
    work_orders_table: str | None = None
    timeline_table: str | None = None
    state_table: str | None = None
    directory_table: str | None = None
    parties_table: str | None = None
    conversations_table: str | None = None
    messages_table: str | None = None
    sends_table: str | None = None
    event_bus_name: str | None = None
    on_call_pm_phone: str = Field(default="", pattern=_FALLBACK_PHONE, description=_FALLBACK_DOC)

    @field_validator("step", "event_bus_name", *(f"{t}_table" for t in DISPATCH_TABLES))
    @classmethod
    def _empty_is_unset_too(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _the_steps_tables_exactly(self) -> DispatchSettings:
        if self.step is None:
            needed = set(DISPATCH_TABLES)
        else:
            if self.step not in DISPATCH_STEPS:
                raise ValueError(f"step {self.step!r} is not one of {list(DISPATCH_STEPS)}")
            needed = set(FUNCTION_TABLES[self.step])
        named = {t for t in DISPATCH_TABLES if self.table(t) is not None}
        problems = [f"{t}_table is required" for t in sorted(needed - named)]
        problems += [
            f"{t}_table is not one of the step's tables (maestro.access.FUNCTION_TABLES)"
            for t in sorted(named - needed)
        ]
        if self.event_bus_name is None:  # every step of the machine publishes its wo.* event
            problems.append("event_bus_name is required")
        if problems:
            raise ValueError(f"{self.step or 'the work order machine'}: " + "; ".join(problems))
        return self

    def table(self, logical_name: str) -> str | None:
        """The configured name of one of :data:`DISPATCH_TABLES`, or None."""
        name: str | None = getattr(self, f"{logical_name}_table")
        return name


class WoStartSettings(_Base):
    """functions/wo_start: the wo-start queue's consumer (the ``wo.created`` rule's target)
    starts each new WO's execution of the work order machine, named by the WO id."""

    work_order_machine_arn: str = Field(min_length=1)
