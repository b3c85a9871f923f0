"""The eval executor in the cloud: its handlers on the eval copy (docs/evals-in-the-cloud.md).

Each of ``functions/eval_*`` is the same :class:`EvalExecutor` handler the embedded stack runs,
on a :class:`CloudEvalStack`: the eval copy (``maestro-<env>-eval``, its own tables, queues,
bus and state machines) instead of the embedded stack. What differs is only the environment:

- **inject**: the scenario's signed webhooks are invoked on the copy's inbound function (the
  same API Gateway-shaped event the embedded stack's loopback passes), signed with the copy's
  own Twilio token and app secret; API Gateway and its WAF are not on that path;
- **time**: real. The run's clock moves only by what a handler sleeps (so a Lambda's start-up
  never makes a scenario's next moment "the past"), and one handler may sleep at most
  ``real_time_budget_seconds``: a scenario waiting longer is refused with a clear error, never
  silently shortened. After a wait, a handler waits for what the wait started: the debounce
  queue's due signals taken, the package executions finished, the watcher's queue drained;
- **reads**: the copy's tables and its messenger's reader (the recording messenger's table
  unless the copy has a Twilio account), the copy's package pipeline's executions.

Set-up takes the copy for the run (one run at a time: a lock row in the eval-runs table),
stops what a previous run left running, waits for its signals to drain, empties the copy's
tables and anchors the scenario at now. Finish gives the copy back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any, Literal, TypeVar

from botocore.exceptions import ClientError
from pydantic import Field, field_validator

from maestro.adapters.ddb import scan_all
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_ledger import DynamoLedger
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.messaging import message_reader_for
from maestro.ports.evidence import MessageReader
from maestro.ports.platform import Secrets
from maestro.settings import TwilioSettings
from maestro.tables import ALL_TABLES, TableSpec
from maestro_dev.eval_harness.executor import HANDLERS, EvalExecutor, new_run, start_of
from maestro_dev.eval_harness.runs import EvalRunStore, Mode
from maestro_dev.eval_harness.scenario import Scenario, offset

EvalStep = Literal[
    "eval_setup", "eval_gate", "eval_inject", "eval_settle", "eval_grade", "eval_finish"
]
LOCK_RUN_ID = "#executor"  # no run id starts with '#' (a scenario id is [a-z0-9-])
CLOCK_ITEM = "clock"  # the run's clock; no row of runs.py starts with it
POLL_SECONDS = 2.0
QUIET_POLLS = 3  # the queues' counts are approximate: quiet three times in a row, then trusted
PURGE_SECONDS = 60  # SQS: "the message deletion process takes up to 60 seconds"
_PURGE_IN_PROGRESS = frozenset(
    {"PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress"}
)
DEFAULT_BUDGET_SECONDS = 780  # the eval functions' timeout is 900 s
LOCK_SECONDS = 86400 + 3600
"""How long the lock outlives a run's last step (each step renews it): longer than a gate's
wait (its heartbeat, a day), so a run paused at a checkpoint keeps the copy; a run that died
without its finish step frees it after this."""
T = TypeVar("T")

# What each step is given of the copy (infra/evals.py grants exactly this; the tests run the
# handlers on moto with exactly this). Tables: read (r) or written (w), besides the eval-runs
# table every step writes. Set-up empties every table and seeds the world (pending items and
# decisions too); an update step writes the WO store and a note on its timeline; grading reads
# what the lenses grade on (the packages' contents from the buffer, consent from conversations).
STEP_TABLES: dict[str, dict[str, Literal["r", "w"]]] = {
    "eval_setup": {spec.logical_name: "w" for spec in ALL_TABLES},
    "eval_gate": {},
    "eval_inject": {"work_orders": "w", "timeline": "w"},
    "eval_settle": {},
    "eval_grade": {
        "decisions": "r",
        "work_orders": "r",
        "dispatch": "r",
        "ledger": "r",
        "messages": "r",
        "timeline": "r",
        "state": "r",
        "pending": "r",
        "conversations": "r",
    },
    "eval_finish": {},
}
SENDS_WEBHOOKS = frozenset({"eval_setup", "eval_inject"})
"""The copy's inbound function, and the Twilio token and app secret they sign with."""
LETS_TIME_PASS = frozenset({"eval_setup", "eval_inject", "eval_settle"})
"""The debounce queue's depth (what a wait started)."""
READS_EXECUTIONS = frozenset({"eval_setup", "eval_inject", "eval_settle"})
"""The package pipeline's executions (set-up also stops them, and the work order machine's)."""
WAITS_FOR_THE_WATCHER = frozenset({"eval_grade"})
"""The watcher queue's depth (the ledger is read once the watcher has read every claim)."""


class EvalSettings(TwilioSettings):
    """functions/eval_*: one step of the eval executor on the eval copy. A handler is given only
    what its step uses (grants follow settings); a step reaching for something it was not
    given fails with the setting's name."""

    eval_step: EvalStep
    eval_runs_table: str
    eval_copy_tables: str = Field(
        default="{}",
        description="The copy's tables this step may touch, as a JSON object: logical name "
        "(maestro.tables) → table name",
    )
    inbound_function_name: str | None = None
    """The copy's inbound function: the scenario's webhooks go in there."""
    package_machine_arn: str | None = None
    """The copy's package pipeline: the executions a step started, and their input."""
    work_order_machine_arn: str | None = None
    """The copy's work order machine: set-up stops what a previous run left running."""
    debounce_queue_url: str | None = None
    probe_queue_url: str | None = None
    """The copy's probe queue: a probe not yet asked may still expedite a flush."""
    """The copy's debounce queue: its depth says whether a flush is still due."""
    watcher_queue_url: str | None = None
    """The copy's watcher queue: its depth says whether claims are still unread."""
    app_signing_secret: str | None = None
    """The copy's app signing secret: app messages and the assistant's kickoffs."""
    idle_window_seconds: int = Field(default=300, ge=1)
    max_wait_seconds: int = Field(default=900, ge=1)
    real_time_budget_seconds: int = Field(default=DEFAULT_BUDGET_SECONDS, ge=1, le=840)

    @field_validator("eval_copy_tables")
    @classmethod
    def _tables_are_names(cls, value: str) -> str:
        tables = json.loads(value)
        if not isinstance(tables, dict) or not all(isinstance(v, str) for v in tables.values()):
            raise ValueError("eval_copy_tables: a JSON object of table names")
        return value

    @property
    def copy_tables(self) -> dict[str, str]:
        tables: dict[str, str] = json.loads(self.eval_copy_tables)
        return tables


class RealTimeRefusedError(ValueError):
    """A step the cloud cannot run as written (a wait longer than a handler may, a carrier told
    to refuse a number): refused, never shortened or faked."""


class EvalCopyBusyError(RuntimeError):
    """Another run holds the eval copy, or a previous run's signals have not drained."""


class GivenTables(dict[str, str]):
    """The tables a step was given; any other name maps to one no table has, so the reads
    built for it (the executor builds every reader up front) fail by that name if used, and
    no grant is needed for a table a step never touches."""

    def __missing__(self, name: str) -> str:
        return f"not-given-to-this-eval-step.{name}"


@dataclass
class RunClock:
    """The run's clock: it moves only when the handler sleeps (:meth:`CloudEvalStack.advance`),
    from where the previous handler left it (its ``clock`` row)."""

    at: datetime

    def now(self) -> datetime:
        return self.at


@dataclass(frozen=True)
class _WatcherDeps:
    messages: MessageReader


@dataclass(frozen=True)
class _Watcher:
    deps: _WatcherDeps


@dataclass
class CloudEvalStack:
    """The eval copy, as the executor sees a stack (:class:`EvalStack`). ``clients`` makes a
    boto3 client by service name (at the edge: the Lambda's own)."""

    settings: EvalSettings
    clients: Callable[[str], Any]
    clock: RunClock
    secrets: Secrets | None = None
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.deadline = self.monotonic() + self.settings.real_time_budget_seconds
        self.ddb = self.clients("dynamodb")
        self.tables: dict[str, str] = GivenTables(self.settings.copy_tables)
        self.idle = self.settings.idle_window_seconds
        self.max_wait = self.settings.max_wait_seconds

    @cached_property
    def sfn(self) -> Any:
        return self.clients("stepfunctions")

    @cached_property
    def sqs(self) -> Any:
        return self.clients("sqs")

    def table(self, name: str) -> str:
        return self.need(self.settings.copy_tables.get(name), f"the copy's {name} table")

    @cached_property
    def twilio_token(self) -> str:
        arn = self.need(self.settings.twilio_auth_token_secret, "MAESTRO_TWILIO_AUTH_TOKEN_SECRET")
        return self.need(self.secrets, "a secrets reader").get(arn)

    @cached_property
    def app_secret(self) -> str:
        arn = self.need(self.settings.app_signing_secret, "MAESTRO_APP_SIGNING_SECRET")
        return self.need(self.secrets, "a secrets reader").get(arn)

    @cached_property
    def parties(self) -> DynamoPartyDirectory:
        return DynamoPartyDirectory(self.ddb, self.table("parties"))

    @cached_property
    def directory(self) -> DynamoDirectory:
        return DynamoDirectory(self.ddb, self.table("directory"))

    @cached_property
    def ledger(self) -> DynamoLedger:
        return DynamoLedger(self.ddb, self.table("ledger"))

    @cached_property
    def watcher(self) -> _Watcher:
        reader = message_reader_for(
            self.settings, self.ddb, messages_table=self.table("messages"), secrets=self.secrets
        )
        return _Watcher(_WatcherDeps(messages=reader))

    # -- in, time, and what it started ----------------------------------------------------------

    def http(self, event: dict[str, Any]) -> dict[str, Any]:
        """The request on the copy's inbound function (its real handler: signature, dedupe,
        buffer, the debounce signal); its API Gateway-shaped answer."""
        name = self.need(self.settings.inbound_function_name, "MAESTRO_INBOUND_FUNCTION_NAME")
        answer = self.clients("lambda").invoke(
            FunctionName=name, InvocationType="RequestResponse", Payload=json.dumps(event)
        )
        payload = json.loads(answer["Payload"].read() or b"null")
        if answer.get("FunctionError"):
            raise RuntimeError(f"the copy's inbound function failed: {payload}")
        if not isinstance(payload, dict):
            raise RuntimeError(f"the copy's inbound function answered {payload!r}")
        return payload

    def remaining(self) -> float:
        return self.deadline - self.monotonic()

    def advance(self, seconds: float) -> None:
        """Sleep ``seconds`` of real time (the run's clock moves by as much), then wait for what
        they started: the debounce signals that fell due taken, and the executions finished."""
        if seconds > self.remaining():
            raise RealTimeRefusedError(
                f"this step waits {seconds:.0f} s of real time; a handler of the cloud's eval "
                f"copy may wait {self.settings.real_time_budget_seconds} s at most "
                f"(real_time_budget_seconds), {self.remaining():.0f} s of it left: run this "
                "scenario on the embedded stack (maestro eval run), whose time is virtual"
            )
        if seconds > 0:
            self.sleep(seconds)
            self.clock.at += timedelta(seconds=seconds)
        self.until_quiet(
            "the debounce and probe queues' due signals",
            lambda: (
                self._queued(self.settings.debounce_queue_url)
                + (
                    self._queued(self.settings.probe_queue_url)
                    if self.settings.probe_queue_url
                    else 0
                )
            ),
        )
        self.wait_for_executions(timeout=self.remaining())

    def settle(self) -> None:
        """Until the watcher has taken every domain event put so far."""
        self.until_quiet(
            "the watcher's queue", lambda: self._queued(self.settings.watcher_queue_url)
        )

    def executions(self, status: str | None = None) -> list[dict[str, Any]]:
        arn = self.need(self.settings.package_machine_arn, "MAESTRO_PACKAGE_MACHINE_ARN")
        return list_executions(self.sfn, arn, status)

    def wait_for_executions(self, timeout: float = 30) -> None:
        self.until_quiet(
            "the package executions", lambda: len(self.executions("RUNNING")), timeout=timeout
        )

    def carrier_opt_out(self, phone: str) -> None:
        """A real carrier cannot be told to refuse a number."""
        raise RealTimeRefusedError(
            f"a carrier opt-out of {phone} needs the embedded stack's loopback Twilio: "
            "run this scenario locally (maestro eval run)"
        )

    # -- helpers --------------------------------------------------------------------------------

    def _queued(self, url: str | None) -> int:
        """Messages due or being handled (a delayed signal is a later flush: not waited for)."""
        queue = self.need(url, "a queue URL (MAESTRO_DEBOUNCE_QUEUE_URL, …_WATCHER_QUEUE_URL)")
        counts = self.sqs.get_queue_attributes(
            QueueUrl=queue,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(counts["ApproximateNumberOfMessages"]) + int(
            counts["ApproximateNumberOfMessagesNotVisible"]
        )

    def until_quiet(
        self, what: str, count: Callable[[], int], timeout: float | None = None
    ) -> None:
        deadline = self.monotonic() + (self.remaining() if timeout is None else timeout)
        quiet = 0
        while True:
            left = count()
            quiet = quiet + 1 if left == 0 else 0
            if quiet >= QUIET_POLLS:
                return
            if self.monotonic() + POLL_SECONDS > deadline:
                raise TimeoutError(f"{what}: {left} still pending when this handler's time ran out")
            self.sleep(POLL_SECONDS)

    @staticmethod
    def need(value: T | None, what: str) -> T:
        if value is None:
            raise RuntimeError(f"this eval step was not given {what} (infra/evals.py)")
        return value


def list_executions(sfn: Any, machine_arn: str, status: str | None = None) -> list[dict[str, Any]]:
    """Every execution of the machine, oldest first (every page)."""
    kwargs: dict[str, Any] = {"stateMachineArn": machine_arn}
    if status is not None:
        kwargs["statusFilter"] = status
    pages = sfn.get_paginator("list_executions").paginate(
        **kwargs, PaginationConfig={"PageSize": 1000}
    )
    found = [execution for page in pages for execution in page["executions"]]
    return sorted(found, key=lambda e: e["startDate"])


# -- the run's rows beyond runs.py: the copy's lock, the run's clock ---------------------------


def take_copy(ddb: Any, table: str, run_id: str, now: datetime) -> None:
    """One run at a time on the copy: a conditional put of the lock row (a lock older than
    :data:`LOCK_SECONDS`, left by a run that never finished, is taken over)."""
    try:
        ddb.put_item(
            TableName=table,
            Item={
                "run_id": {"S": LOCK_RUN_ID},
                "item": {"S": "lock"},
                "holder": {"S": run_id},
                "until": {"N": str(int(now.timestamp()) + LOCK_SECONDS)},
            },
            ConditionExpression="attribute_not_exists(run_id) OR holder = :me OR #u < :now",
            ExpressionAttributeNames={"#u": "until"},
            ExpressionAttributeValues={
                ":me": {"S": run_id},
                ":now": {"N": str(int(now.timestamp()))},
            },
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        held = ddb.get_item(
            TableName=table, Key={"run_id": {"S": LOCK_RUN_ID}, "item": {"S": "lock"}}
        ).get("Item", {})
        holder = held.get("holder", {}).get("S", "another run")
        raise EvalCopyBusyError(f"the eval copy is running {holder}: one run at a time") from error


def give_back_copy(ddb: Any, table: str, run_id: str) -> None:
    try:
        ddb.delete_item(
            TableName=table,
            Key={"run_id": {"S": LOCK_RUN_ID}, "item": {"S": "lock"}},
            ConditionExpression="holder = :me",
            ExpressionAttributeValues={":me": {"S": run_id}},
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise


def load_clock(ddb: Any, table: str, run_id: str) -> RunClock | None:
    item = ddb.get_item(
        TableName=table,
        Key={"run_id": {"S": run_id}, "item": {"S": CLOCK_ITEM}},
        ConsistentRead=True,
    ).get("Item")
    return None if item is None else RunClock(datetime.fromisoformat(item["at"]["S"]))


def save_clock(ddb: Any, table: str, run_id: str, clock: RunClock) -> None:
    ddb.put_item(
        TableName=table,
        Item={
            "run_id": {"S": run_id},
            "item": {"S": CLOCK_ITEM},
            "at": {"S": clock.at.isoformat()},
        },
    )


# -- set-up: refuse what the copy cannot run, reset it, anchor the scenario at now --------------


def refusals(scenario: Scenario, mode: Mode) -> list[str]:
    """What keeps a scenario from running on the cloud's eval copy (empty: it can)."""
    problems = []
    if scenario.model is not None:
        problems.append(
            "it scripts the model's answers; the copy's brain is the configured one (Anthropic "
            "with the copy's key, else the offline brain)"
        )
    if mode == "step":
        problems.append(
            "step mode pauses the packages at their step gates; the copy's packages do not "
            "run in step mode (use all or checkpoint)"
        )
    return problems


def anchored(scenario: Scenario, now: datetime) -> Scenario:
    """The scenario moved so that it starts (its first prior message, or its start) ``now``:
    seeded work orders and open contexts are as fresh as the scenario says, on the real clock
    the copy's pipeline reads."""
    earliest = min((offset(m.at) for m in scenario.world.messages), default=timedelta(0))
    world = scenario.world.model_copy(update={"start": now - min(earliest, timedelta(0))})
    return scenario.model_copy(update={"world": world})


def reset_copy(stack: CloudEvalStack) -> None:
    """Stop what a previous run left running, purge its debounce signals (a stale one would
    flush this run's buffer early: the copy's conversations start again at the same ids), and
    empty every table of the copy the step was given."""
    settings = stack.settings
    for arn in (settings.package_machine_arn, settings.work_order_machine_arn):
        if arn is None:
            continue
        for execution in list_executions(stack.sfn, arn, "RUNNING"):
            stack.sfn.stop_execution(
                executionArn=execution["executionArn"], cause="an eval run resets the eval copy"
            )
    urls = [stack.need(settings.debounce_queue_url, "MAESTRO_DEBOUNCE_QUEUE_URL")]
    if settings.probe_queue_url:  # a stale probe would expedite this run's flush
        urls.append(settings.probe_queue_url)
    for url in urls:
        _purge(stack, url)
    # SQS takes up to a minute to purge, and may delete what is sent meanwhile: the world's
    # prior messages must come after it.
    stack.sleep(PURGE_SECONDS)
    for spec in ALL_TABLES:
        name = stack.tables.get(spec.logical_name)
        if name is not None:
            empty_table(stack.ddb, name, spec)


def _purge(stack: CloudEvalStack, url: str) -> None:
    for attempt in (1, 2):
        try:
            stack.sqs.purge_queue(QueueUrl=url)
            return
        except ClientError as error:  # one purge a minute, and it may spare later messages
            if error.response["Error"].get("Code") not in _PURGE_IN_PROGRESS:
                raise
            if attempt == 2:
                raise EvalCopyBusyError(
                    f"{url} was purged less than a minute ago and still is: try again in a minute"
                ) from error
            stack.sleep(PURGE_SECONDS)


def empty_table(ddb: Any, table: str, spec: TableSpec) -> None:
    """Delete every item of the table (a scan of its keys, then one delete each)."""
    keys = [spec.partition.name, *([spec.sort.name] if spec.sort is not None else [])]
    for item in scan_all(
        ddb,
        TableName=table,
        ProjectionExpression=", ".join(f"#k{i}" for i in range(len(keys))),
        ExpressionAttributeNames={f"#k{i}": key for i, key in enumerate(keys)},
    ):
        ddb.delete_item(TableName=table, Key={k: item[k] for k in keys})


# -- the handlers ------------------------------------------------------------------------------


def run_step(
    step: EvalStep,
    event: dict[str, Any],
    context: Any,
    *,
    settings: EvalSettings,
    clients: Callable[[str], Any],
    secrets: Secrets | None = None,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dict[str, Any]:
    """One step of one run: the executor's own handler, on the copy, with the run's clock."""
    ddb = clients("dynamodb")
    table = settings.eval_runs_table
    store = EvalRunStore(ddb, table)
    run_id = str(event["run_id"])

    def stack_at(clock: RunClock) -> CloudEvalStack:
        return CloudEvalStack(settings, clients, clock, secrets=secrets, sleep=sleep)

    if step == "eval_setup":
        run = store.run(run_id)
        scenario = Scenario.model_validate(run.scenario)
        problems = refusals(scenario, run.mode)
        if problems:
            raise RealTimeRefusedError(
                f"{scenario.id} cannot run on the cloud's eval copy: " + "; ".join(problems)
            )
        take_copy(ddb, table, run_id, now())
        reset_copy(stack_at(RunClock(now())))
        scenario = anchored(scenario, now())
        store.put_run(
            run.model_copy(update={"scenario": scenario.model_dump(mode="json", by_alias=True)})
        )
        clock = RunClock(start_of(scenario))
    else:
        if step != "eval_finish":  # still ours (renewed); a run whose lock lapsed stops here
            take_copy(ddb, table, run_id, now())
        scenario = Scenario.model_validate(store.run(run_id).scenario)
        clock = load_clock(ddb, table, run_id) or RunClock(start_of(scenario))
    index = event.get("index", (event.get("step") or {}).get("index", ""))
    executor = EvalExecutor(
        stack_at(clock), store, scenario, sid_namespace=f"{run_id} {step} {index} "
    )
    try:
        return executor.handlers()[step](event, context)
    finally:
        save_clock(ddb, table, run_id, clock)
        if step == "eval_finish":
            give_back_copy(ddb, table, run_id)


def start_run(
    scenario: Scenario,
    mode: Mode,
    *,
    ddb: Any,
    sfn: Any,
    eval_runs_table: str,
    executor_arn: str,
    run_id: str,
    now: datetime,
) -> str:
    """Record the run and start the copy's eval executor on it; its execution ARN. What the
    console's ``--env`` and docs/evals-in-the-cloud.md do."""
    problems = refusals(scenario, mode)
    if problems:
        raise RealTimeRefusedError(
            f"{scenario.id} cannot run on the cloud's eval copy: " + "; ".join(problems)
        )
    EvalRunStore(ddb, eval_runs_table).put_run(new_run(scenario, mode, run_id, now))
    arn: str = sfn.start_execution(
        stateMachineArn=executor_arn,
        name=run_id,
        input=json.dumps({"run_id": run_id, "mode": mode}),
    )["executionArn"]
    return arn


def handler_for(step: EvalStep) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """``functions/eval_*/handler.py``'s entry: settings and clients built at invocation."""
    if step not in HANDLERS:
        raise ValueError(f"no eval step {step!r}: {HANDLERS}")

    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        from maestro.adapters.aws import client
        from maestro.adapters.secrets import SecretsManagerSecrets

        settings = EvalSettings()
        if settings.eval_step != step:
            raise RuntimeError(f"functions/{step} is configured as {settings.eval_step}")
        return run_step(
            step,
            event,
            context,
            settings=settings,
            clients=lambda service: client(service, settings.region),
            secrets=SecretsManagerSecrets(),
        )

    return handle


# The six Lambda entries (infra/evals.py: each is ``from … import <step> as handler``).
eval_setup = handler_for("eval_setup")
eval_gate = handler_for("eval_gate")
eval_inject = handler_for("eval_inject")
eval_settle = handler_for("eval_settle")
eval_grade = handler_for("eval_grade")
eval_finish = handler_for("eval_finish")
