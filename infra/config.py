"""Per-environment settings, read from cdk.json's context (``maestro:environments``).

``cdk deploy -c env=prod`` synthesizes the prod stack alone (``-c env=staging,prod``: those two);
without ``env``, the development environments (``"development": true``; dev here). One stack
(and one template) each, named ``maestro-<env>``.

An environment that does not declare itself a development one must reach a person: it is not
synthesized without an alarm subscriber, or with a placeholder or test number for the on-call
PM (:meth:`EnvConfig.not_reaching_a_person`); the error names the environment and the key to set.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import aws_cdk as cdk
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from maestro.stack_outputs import stack_for_env
from maestro.tables import COMPLETION_SHARDS, RETENTION_DAYS

ROOT = Path(__file__).resolve().parents[1]
CONTEXT_KEY = "maestro:environments"
E164 = r"^\+[1-9]\d{6,14}$"
MIN_MESSAGES_RETENTION_DAYS = 14
"""Step Functions redrives a failed execution for 14 days, and a redriven act must find its send
record (which holds the text, so it is kept no longer than the messages: 30 days at most)."""
MAX_RETENTION_DAYS = 3650
DEFAULT_WEBHOOK_RATE_LIMIT_PER_IP = 300
"""Requests per source address per 5 minutes (one a second, on average) before WAF answers 429."""

# Numbers that reach no one: Twilio's magic test numbers (+1 500 555 xxxx, answered by Twilio's
# test credentials only) and the North American numbers reserved for fiction (555-0100..0199).
_TEST_NUMBERS = (
    (re.compile(r"^\+1500555\d{4}$"), "one of Twilio's magic test numbers (+1 500 555 xxxx)"),
    (
        re.compile(r"^\+1[2-9]\d{2}55501\d{2}$"),
        "a number reserved for fiction (NANP 555-0100 to 555-0199)",
    ),
)
# Domains reserved for documentation and tests (RFC 2606, RFC 6761): no one reads their mail.
_PLACEHOLDER_DOMAIN = re.compile(
    r"@(?:.+\.)?(?:example\.(?:com|net|org)|example|test|invalid|localhost)$", re.IGNORECASE
)


class NotReachingAPersonError(ValueError):
    """An environment that is not a development one would alarm or page no one."""

    def __init__(self, env: str, problems: list[str]) -> None:
        self.env = env
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"cannot synthesize {env!r}: it is not a development environment, so its alarms "
            f"and pages must reach a person. In cdk.json, context {CONTEXT_KEY} → {env}:\n"
            f"{lines}\n(An environment where no one needs to be reached says so with "
            '"development": true.)'
        )


def stack_name(env: str) -> str:
    """``maestro-<env>``: the same name `maestro executions --env <env>` looks for."""
    return stack_for_env(env)


class EnvConfig(BaseModel):
    """One environment. Every number here reaches a resource or a function's settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,20}$")
    development: bool = Field(
        default=False,
        description="True for a development environment: it may be synthesized without an "
        "alarm subscriber and with a test on-call number, and may run in step mode. Any "
        "other environment (the default: false) must reach a person: its synthesis fails "
        "until alarm_email is a real address, pages have somewhere to go (a real "
        "on_call_pm_phone, or on_call_from_directory), and on_call_pm_phone and alarm_sms, if "
        "set, are real numbers. Declared by this key, never inferred from the name.",
    )
    idle_window_seconds: int = Field(ge=1, le=900, description="MAESTRO_IDLE_WINDOW_SECONDS")
    urgent_idle_window_seconds: int = Field(
        default=60,
        ge=1,
        le=900,
        description="MAESTRO_URGENT_IDLE_WINDOW_SECONDS: the idle window while something urgent "
        "is outstanding in memory (docs/flush-triggers.md)",
    )
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
    compose_replies: bool = Field(
        default=True,
        description="MAESTRO_COMPOSE_REPLIES: with a model key, the assistant's reply is composed "
        "by the cheap model and checked before it is sent (docs/composed-replies.md); false: "
        "its fixed texts. No effect without a key",
    )
    alarm_email: str = Field(
        default="",
        pattern=r"^([^@\s]+@[^@\s]+\.[^@\s]+)?$",
        description="Subscribed to the alarm topic by e-mail (the address confirms once, from "
        "SNS's message). Required unless development; empty: the topic has no subscriber.",
    )
    alarm_sms: str = Field(
        default="",
        pattern=r"^(\+[1-9]\d{6,14})?$",
        description="E.164, optional: the alarm topic also texts this number (SNS SMS: the "
        "account's SMS sandbox and spending limit apply). Checked like on_call_pm_phone.",
    )
    on_call_pm_phone: str = Field(
        default="",
        pattern=r"^(\+[1-9]\d{6,14})?$",
        description="E.164: the account's fallback number for pages (emergencies, fail-open, "
        "the digest), paged when the directory has no on-call or default PM for the page's "
        "property (docs/on-call.md). Empty: none. Unless development, not a test or "
        "placeholder number, and required unless on_call_from_directory.",
    )
    on_call_from_directory: bool = Field(
        default=False,
        description="The directory imported into this environment holds its on-call shifts "
        "(and PMs): a non-development environment may then leave on_call_pm_phone empty. A "
        "page that still finds no one is recorded and fires the undeliverable-pages alarm.",
    )
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
    messages_retention_days: int = Field(
        default=RETENTION_DAYS["messages"],
        ge=0,
        le=MAX_RETENTION_DAYS,
        description="Days the messages table keeps inbound and outbound texts (bodies, numbers) "
        "and the conversations table its buffered copies (MAESTRO_MESSAGES_RETENTION_DAYS of "
        "the functions that write them); 0: until erased, else at least "
        f"{MIN_MESSAGES_RETENTION_DAYS}. Send records expire with them (30 days at most).",
    )
    decisions_retention_days: int = Field(
        default=RETENTION_DAYS["decisions"],
        ge=0,
        le=MAX_RETENTION_DAYS,
        description="Days the decision log keeps a row (MAESTRO_DECISIONS_RETENTION_DAYS); 0: "
        "until erased. Not shorter than the ledger's: a ledger row checks a decision's claim.",
    )
    ledger_retention_days: int = Field(
        default=RETENTION_DAYS["ledger"],
        ge=0,
        le=MAX_RETENTION_DAYS,
        description="Days the ledger keeps an Evidence or Shame row "
        "(MAESTRO_LEDGER_RETENTION_DAYS of the watcher and the sweeper); 0: until erased.",
    )
    removal_policy: Literal["destroy", "retain"] = Field(
        description="Tables, secrets, key and log groups on `cdk destroy`: kept or deleted"
    )
    daily_page_cap: int | None = Field(
        default=None,
        ge=1,
        description="Account-wide pages to the on-call PM per UTC day (MAESTRO_ACCOUNT_DAILY_"
        "PAGES; none: its default, 100). Past it a known sender's emergency still pages; any "
        "other page becomes a line of the hourly digest (docs/unknown-senders.md).",
    )
    daily_text_cap: int | None = Field(
        default=None,
        ge=1,
        description="Account-wide texts (other than pages and safety advice) per UTC day "
        "(MAESTRO_ACCOUNT_DAILY_TEXTS; none: 2,000). Past it a text is recorded as not sent.",
    )
    daily_model_call_cap: int | None = Field(
        default=None,
        ge=1,
        description="Account-wide model calls per UTC day (MAESTRO_ACCOUNT_DAILY_MODEL_CALLS; "
        "none: 5,000). Past it every stage takes its deterministic default, recorded.",
    )
    api_rate_limit: float = Field(gt=0, description="Stage throttling: steady requests/s")
    api_burst_limit: int = Field(gt=0, description="Stage throttling: burst")
    webhook_rate_limit_per_ip: int = Field(
        default=DEFAULT_WEBHOOK_RATE_LIMIT_PER_IP,
        ge=10,  # WAF's smallest rate limit
        le=2_000_000_000,
        description="WAF rate-based rule: requests from one source IP address in 5 minutes "
        "before the webhooks answer it 429 (until its rate falls back). Twilio's webhooks come "
        "from a large, shifting pool of addresses, so each carries a small share of the "
        "traffic: at the default (300, one a second per address on average) Twilio would "
        "have to send more than 60 requests a minute for five minutes through one address, "
        "far beyond a maintenance line's volume, while one attacker's address is held to "
        "about one a second.",
    )
    api_4xx_rate_threshold: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="Alarm: 4XX answers / requests in 5 minutes (with at least "
        "10 requests). A wrong Twilio auth token or app secret turns every webhook into a 403: "
        "messages refused, not delivered.",
    )
    archive_retention_days: int = Field(ge=1, description="The event archive, for replays")
    brain_reserved_concurrency: int | None = Field(
        default=None,  # JSON null: the CDK drops null context values
        ge=1,
        description="Caps concurrent brain steps, so the model API's rate limit and the token "
        "budget hold under a burst. None: no reservation (accounts whose concurrency quota is "
        "still the new-account 10 cannot reserve any).",
    )
    reserved_concurrency: dict[str, int] = Field(
        default_factory=dict,
        description="Function (functions/<name>) → its reserved concurrency: a cap and a "
        "guarantee out of the account's quota (1,000 by default). Empty: none (accounts whose "
        "quota is still the new-account 10 cannot reserve any). The brain's is "
        'brain_reserved_concurrency. E.g. {"sweeper": 1}: sweeps never overlap',
    )
    state_machine_log_level: Literal["ALL", "ERROR"] = Field(
        default="ALL",
        description="What the state machines log to CloudWatch Logs (never the states' input "
        "and output). ALL: every state's event, about 24 KB per package, most of the logs' cost "
        "(docs/cost.md). ERROR: failed and timed-out states only; the console's execution "
        "history (90 days) still shows every state of every execution.",
    )
    sweep_concurrency: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="MAESTRO_SWEEP_CONCURRENCY of the sweeper: packages it checks at once "
        "(none: 8; at 100 packages/s, 32: docs/headroom.md)",
    )
    completion_shards: int = Field(
        default=COMPLETION_SHARDS,
        ge=1,
        le=64,
        description="MAESTRO_COMPLETION_SHARDS of persist, fail-open (they write the completion "
        "lines) and the sweeper (it reads them): the partitions a day's completions spread over "
        "(docs/headroom.md). Raise it, never lower it: a lowered count leaves the higher "
        "shards' lines unread",
    )
    flusher_max_concurrency: int = Field(
        ge=2, le=1000, description="The debounce queue's event source: concurrent flushers"
    )
    prober_max_concurrency: int = Field(
        ge=2,
        le=1000,
        description="The probe queue's event source: concurrent probers, each asking up to 10 "
        "probes at once (docs/headroom.md)",
    )
    fallback_rate_threshold: float = Field(gt=0, le=1, description="Alarm: fallbacks / packages")
    eval_executor: bool = Field(
        default=False,
        description="Deploy the eval copy beside this environment's stack: maestro-<env>-eval, "
        "the pipeline again on its own tables, queues, bus and secrets, with the eval executor "
        "state machine and the eval-runs table (docs/evals-in-the-cloud.md). Off unless set: "
        "cdk.json sets it for dev and staging, not for prod.",
    )

    @model_validator(mode="after")
    def _an_account_needs_its_number(self) -> EnvConfig:
        if self.twilio_account_sid and not self.twilio_from_number:
            raise ValueError(f"{self.name}: twilio_account_sid needs twilio_from_number")
        return self

    @model_validator(mode="after")
    def _reservations_name_functions(self) -> EnvConfig:
        functions = {p.parent.name for p in (ROOT / "functions").glob("*/handler.py")}
        if "brain" in self.reserved_concurrency:
            raise ValueError(
                f"{self.name}: reserved_concurrency names the brain: set "
                "brain_reserved_concurrency instead"
            )
        if unknown := sorted(set(self.reserved_concurrency) - functions):
            raise ValueError(
                f"{self.name}: reserved_concurrency names no function: {unknown} "
                f"(functions/<name>: {sorted(functions)})"
            )
        if low := sorted(n for n, c in self.reserved_concurrency.items() if c < 1):
            raise ValueError(f"{self.name}: reserved_concurrency below 1 for {low}")
        return self

    @model_validator(mode="after")
    def _retention_is_coherent(self) -> EnvConfig:
        messages = self.messages_retention_days
        if 0 < messages < MIN_MESSAGES_RETENTION_DAYS:
            raise ValueError(
                f"{self.name}: messages_retention_days {messages} is under "
                f"{MIN_MESSAGES_RETENTION_DAYS} (a redriven execution's sends must find their "
                "records): set 0 (until erased) or at least that"
            )
        decisions, ledger = self.decisions_retention_days, self.ledger_retention_days
        if decisions and (ledger == 0 or ledger > decisions):
            raise ValueError(
                f"{self.name}: ledger_retention_days {ledger} outlives decisions_retention_days "
                f"{decisions} (0: until erased): a ledger row would outlive the decision whose "
                "claim it checked; keep the decision log at least as long"
            )
        return self

    def not_reaching_a_person(self) -> list[str]:
        """What would keep this environment's alarms and pages from reaching a person, each
        naming the key to set; nothing for a development environment."""
        if self.development:
            return []
        problems = []
        if not self.alarm_email:
            problems.append(
                "alarm_email is empty: set it to an address the on-call team reads (the alarm "
                "topic has no other subscriber)"
            )
        elif _PLACEHOLDER_DOMAIN.search(self.alarm_email):
            problems.append(
                f"alarm_email {self.alarm_email} is a placeholder (a domain reserved for "
                "examples and tests): set it to an address the on-call team reads"
            )
        if not self.on_call_pm_phone and not self.on_call_from_directory:
            problems.append(
                "on_call_pm_phone is empty and on_call_from_directory is not true: a page would "
                "reach no one; set on_call_pm_phone to a real number (the account's fallback), "
                "or set on_call_from_directory: true once the directory holds the on-call "
                "shifts"
            )
        for key, fix in (
            ("on_call_pm_phone", "set it to the on-call PM's real number (E.164)"),
            ("alarm_sms", "set it to a real number (E.164), or leave it empty"),
        ):
            phone: str = getattr(self, key)
            why = next((why for pattern, why in _TEST_NUMBERS if pattern.match(phone)), None)
            if why is not None:
                problems.append(f"{key} {phone} is {why}: it would reach no one; {fix}")
        if self.step_mode:
            problems.append(
                "step_mode is true: every package would wait at its step gates for an "
                "operator; set it to false"
            )
        return problems

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
    """The environments to synthesize: ``-c env=NAME`` (or ``NAME,NAME``) picks them, in
    cdk.json's order; without it, the development ones. Refuses, naming the environment and the
    key, an invalid setting and an environment that would reach no one."""
    raw: dict[str, dict[str, Any]] = app.node.try_get_context(CONTEXT_KEY) or {}
    if not raw:
        raise ValueError(f"cdk.json has no {CONTEXT_KEY!r} context")
    step_mode = app.node.try_get_context("step_mode")  # -c step_mode=true: a string
    configs = []
    for name, values in raw.items():
        if step_mode is not None:
            values = {**values, "step_mode": str(step_mode).lower() == "true"}
        try:
            configs.append(EnvConfig(name=name, **values))
        except ValidationError as error:
            raise ValueError(f"{CONTEXT_KEY} → {name} in cdk.json: {error}") from error
    chosen = app.node.try_get_context("env")
    if chosen is None:
        picked = [c for c in configs if c.development]
        if not picked:
            raise ValueError('no environment declares "development": true: pick one, -c env=NAME')
    else:
        names = [n.strip() for n in str(chosen).split(",") if n.strip()]
        unknown = sorted(set(names) - set(raw))
        if unknown or not names:
            raise ValueError(f"unknown env {chosen!r}: cdk.json has {sorted(raw)}")
        picked = [c for c in configs if c.name in names]
    for config in picked:
        problems = config.not_reaching_a_person()
        if problems:
            raise NotReachingAPersonError(config.name, problems)
    return picked
