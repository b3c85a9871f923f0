"""The fault matrix (#11): fault × stage → outcome, on one embedded stack.

Each cell aims one fault at a stage (:mod:`maestro_dev.local.faults`: at the AWS wire, by
crashing a Lambda, at the loopback Twilio, in the scripted model, or by delivering every
message again) and plays a scenario for a tenant of its own (its own conversation, its own
open WO), through the signed webhook, the buffer, the flusher and the real ASL. Then it reads
the stores back, never a step's return value (:class:`Census`):

- every inbound message is in exactly one package (the executions' inputs, the buffer);
- every package has its decisions and a completion line (the decision log);
- each effect exists once: work orders, timeline entries, texts at Twilio (the loopback's own
  list), decisions, outcomes, ledger rows; compared with the same scenario without a fault;
- and what the outcome was: succeeded (after the SDK's, Twilio adapter's or Step Functions'
  retries, an SQS redelivery, Twilio's retry of the webhook), the stage's recorded default,
  failed open with the PM paged, or Shame recorded (the sweeper's ``missing_event``).

Two rows are cheap to merge and are played once per scenario with the fault in every stage at
once (each stage's column reads that run: its own retries, the shared census): the throttle
the SDK absorbs, and the crash before any handler ran.

``tests/integration/test_fault_matrix.py`` runs every cell and asserts; ``benchmarks/
fault_matrix.py`` (``make faults``) prints the matrix and writes it to bench/results.json.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from itertools import count
from typing import Any, Literal
from urllib.parse import urlsplit

from maestro.access import STATE_MACHINES
from maestro.adapters.ddb import query_all, scan_all
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_ledger import DynamoLedger
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.brain.model_port import ModelError, ModelRequest
from maestro.domain.directory import Person, PersonRole
from maestro.domain.models import Party, WorkOrder, conversation_id_for
from maestro.ports.workflows import DebounceSignal
from maestro_dev.local.events import signed_sms_event
from maestro_dev.local.faults import (
    Crash,
    PartialPublish,
    Stages,
    TwilioError,
    TwilioFaults,
    Wire,
    WireCall,
    WireError,
    sdk_attempts,
)
from maestro_dev.local.stack import (
    ON_CALL_PM,
    SWEEP_EVERY_SECONDS,
    SWEEP_WINDOW_SECONDS,
    LocalStack,
)
from maestro_dev.local.world import VIC, housed, seed, seed_directory
from maestro_dev.scripted import Scripted, ScriptedModel

__all__ = [
    "CELLS",
    "FAULTS",
    "STAGES",
    "Cell",
    "CellResult",
    "Census",
    "Matrix",
    "render",
]

Scenario = Literal["repair", "gas", "failing"]

STAGES = (
    "webhook",
    "flusher",
    "prober",
    "precheck",
    "escalate",
    "lease",
    "resolve",
    "brain",
    "dispose",
    "act",
    "persist",
    "announce",
    "fail_open",
    "watcher",
    "sweeper",
)
# Every Lambda step of the package pipeline is a stage (its step gate runs only in step mode).
_UNSTAGED = set(STATE_MACHINES["package_pipeline"][1]) - {"step_gate"} - set(STAGES)
if _UNSTAGED:
    raise ValueError(f"the fault matrix has no stage for the pipeline's steps {sorted(_UNSTAGED)}")
STATE_OF = {
    "precheck": "Pre-check",
    "escalate": "Escalate at once",
    "lease": "Take the conversation lease",
    "resolve": "Resolve",
    "brain": "Brain",
    "dispose": "Dispose",
    "act": "Act",
    "persist": "Persist",
    "announce": "Announce",
    "fail_open": "Fail open",
}
"""Each Step Functions stage's state, by the start of its name in the ASL."""
SDK_ATTEMPTS = sdk_attempts("dynamodb")
OUTAGE_INVOCATIONS = 4
"""How long an outage lasts: the stage's first four invocations (a step's first run and the
state machine's three retries; four receives of an SQS record, one short of the redrive)."""
TWILIO_CLIENT_TIMEOUT = 2.0
"""How long the Twilio SDK waits for an answer here: far longer than any answer takes on a busy
machine, so only an injected timeout times out (the loopback holds that answer until the client
gives up: the cell costs this much wall time, and never depends on the machine's speed)."""
TWILIO_HANG = 30.0
"""How late the injected timeout's answer would come: longer than the client waits."""
QUIET_ROUNDS = 5
"""How many sweep periods a cell's end may take to quiet the stack (redrive, handle)."""

REPAIR_TEXTS = ("the kitchen leak is back", "and now the hallway light is out")
GAS_TEXT = "I smell gas in the kitchen"
_TRIAGE = {"route": "reasoning", "severity": "low", "confidence": 0.9, "evidence": ""}

# The outcomes; a cell's is one of these, then what recovered it, in brackets.
SUCCEEDED = "succeeded"
FALLBACK = "recorded default"
FAILED_OPEN = "failed open, PM paged"
FAILED_OPEN_UNSENT = "failed open, page not sent (recorded)"
COMPLETED_FAILED = "recorded, then the execution failed"

FAULTS: dict[str, str] = {
    "ddb-throttled": "DynamoDB throttles every call of the stage twice "
    "(ProvisionedThroughputExceededException), then answers",
    "ddb-throttled-long": "DynamoDB throttles the stage's first call through all the SDK's "
    f"{SDK_ATTEMPTS} attempts (ThrottlingException), then answers",
    "ddb-lost-answer": "every write of the stage applies and its answer is lost (500): the SDK "
    "retries it, and a conditional write then fails its condition",
    "ddb-outage": "every DynamoDB call of the stage fails (500, through the SDK's retries) for "
    f"its first {OUTAGE_INVOCATIONS} invocations",
    "ddb-outage-long": "every DynamoDB call of the stage fails for the whole scenario: its SQS "
    "records reach the DLQ (5 receives), and an operator redrives them once it is over",
    "crash-before": "the stage's Lambda dies before its handler runs",
    "crash-after": "the stage's Lambda dies after its handler returned (its effects are done)",
    "redelivered": "every message the stage handled is delivered again, twice",
    "model-down": "the model fails every call of the stage (overloaded)",
    "model-invalid": "the model answers the stage outside its schema and vocabulary",
    "twilio-5xx": "Twilio answers the stage 503 twice, then accepts",
    "twilio-lost-answer": "Twilio accepts the stage's message and answers 500 (no SID comes back)",
    "twilio-timeout": "Twilio accepts the stage's message and answers after the client gave up",
    "twilio-down": "Twilio answers 503 to every attempt of the stage for its first "
    f"{OUTAGE_INVOCATIONS} invocations",
    "bus-failed": "EventBridge answers the stage's PutEvents with a 500, once",
    "bus-failed-entries": "EventBridge answers the stage's PutEvents with FailedEntryCount, once",
    "bus-down": "every PutEvents of the stage fails (500, through the SDK's retries) for its "
    f"first {OUTAGE_INVOCATIONS} invocations",
    "bus-down-long": "every PutEvents of the stage fails (500) for the whole scenario: through "
    "the SDK's retries and the step's own",
}


# -- the cells --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A fault aimed at one stage, or (a merged row) at several in one run."""

    fault: str
    stages: tuple[str, ...]
    scenario: Scenario

    @property
    def id(self) -> str:
        return f"{self.fault}@{'+'.join(self.stages)}"


_REPAIR_STAGES = (
    "webhook",
    "flusher",
    "prober",
    "precheck",
    "lease",
    "resolve",
    "brain",
    "dispose",
    "act",
    "persist",
    "watcher",
    "sweeper",
)
_DDB_STAGES = (*_REPAIR_STAGES[:3], "escalate", *_REPAIR_STAGES[3:], "fail_open")
_STAGES_OF: dict[str, tuple[str, ...]] = {
    "ddb-throttled": _DDB_STAGES,
    "ddb-throttled-long": _DDB_STAGES,
    "ddb-lost-answer": tuple(s for s in _DDB_STAGES if s != "sweeper"),  # honest sweeps write
    "ddb-outage": _DDB_STAGES,  # nothing
    "ddb-outage-long": ("flusher", "prober", "watcher"),
    "crash-before": _DDB_STAGES,
    "crash-after": _DDB_STAGES,
    "redelivered": ("webhook", "flusher", "prober", "watcher"),
    # The flusher calls no model: each message's probe is the prober's.
    "model-down": ("prober", "precheck", "brain"),
    "model-invalid": ("prober", "precheck", "brain"),
    "twilio-5xx": ("escalate", "act", "fail_open", "watcher"),
    "twilio-lost-answer": ("escalate", "act", "fail_open"),
    "twilio-timeout": ("escalate", "act", "fail_open"),
    "twilio-down": ("escalate", "act", "fail_open", "watcher"),
    "bus-failed": ("escalate", "act", "announce", "fail_open"),
    "bus-failed-entries": ("escalate", "act", "announce", "fail_open"),
    "bus-down": ("escalate", "act", "announce", "fail_open"),
    "bus-down-long": ("fail_open",),  # the others fail open (bus-down): fail-open is the last
}
# Cells played alone: a fault whose outcome ends the package (it fails open, takes its default)
# would hide the stages after it, so such a stage gets a run of its own. The others of a row
# share one run per scenario (each stage's column still reads its own retries and faults).
_ALONE_ROWS = frozenset(
    {
        "ddb-outage",
        "ddb-outage-long",
        "model-down",
        "model-invalid",
        "twilio-lost-answer",
        "twilio-timeout",
        "twilio-down",
    }
)
_ALONE = frozenset(
    {
        ("bus-down", "act"),
        ("bus-down", "announce"),
    }
)


def scenario_of(stage: str) -> Scenario:
    if stage == "escalate":
        return "gas"
    if stage == "fail_open":
        return "failing"
    return "repair"


def _cells() -> list[Cell]:
    cells: list[Cell] = []
    for fault, stages in _STAGES_OF.items():
        runs: dict[tuple[Scenario, str], list[str]] = {}
        for stage in stages:
            alone = fault in _ALONE_ROWS or (fault, stage) in _ALONE
            runs.setdefault((scenario_of(stage), stage if alone else ""), []).append(stage)
        for (scenario, _), members in runs.items():
            cells.append(Cell(fault, tuple(members), scenario))
    return cells


# -- reading the stores back -------------------------------------------------------------------


@dataclass
class PackageRead:
    package_id: str
    status: str  # the execution's
    messages: tuple[str, ...]
    decisions: int
    fallback: bool  # a decision took its default
    completed_by: str | None
    shame: tuple[str, ...]  # "kind:event_type" of each Shame row that stands
    resolved: tuple[str, ...]  # "kind:event_type" of each one its late event resolved (history)
    retried: tuple[str, ...]  # the states Step Functions ran more than once (its history)
    precheck_fallback: bool  # the pre-check took its default (the execution's state)
    paged: bool  # a page to the PM names this package (fail-open's page does)


@dataclass
class Census:
    """What the stores hold for one run's conversation, read back independently."""

    inbound: tuple[str, ...]
    packages: list[PackageRead]
    lost: list[str]  # inbound messages in no package
    packaged_twice: dict[str, list[str]]  # message → the packages holding it
    undecided: list[str]  # packages without a decision or a completion line
    effects: dict[str, int]
    duplicates: list[str]  # effects found more than once, in words
    pages: list[str]
    records: tuple[str, ...] = ()  # everything read, as JSON: what a redelivery must not change

    @property
    def violations(self) -> list[str]:
        found = [f"lost: {m}" for m in self.lost]
        found += [f"in {len(p)} packages: {m}" for m, p in self.packaged_twice.items()]
        found += [f"no recorded decision: {p}" for p in self.undecided]
        found += [f"duplicated: {d}" for d in self.duplicates]
        return found


# What a package that fails open (or takes its recorded default) may add of its own: its
# fallback decision, its page to the PM, and their claims (a page's message.sent and
# escalation.paged, an emergency's safety advice's message.sent).
_FAILURE_ADDS = {"decisions": 1, "pages to the PM": 1, "ledger rows": 3}


@dataclass
class CellResult:
    cell: Cell
    outcomes: dict[str, str]  # stage → outcome
    census: Census
    baseline: Census
    fired: dict[str, int]  # stage → faults injected there (0: the cell tested nothing)
    notes: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # records a redelivery changed
    left_busy: list[str] = field(default_factory=list)  # not quiet when the cell ended

    @property
    def violations(self) -> list[str]:
        found = list(self.census.violations)
        failures = sum(
            p.completed_by == "fail_open" or p.fallback for p in self.census.packages
        ) - sum(p.completed_by == "fail_open" or p.fallback for p in self.baseline.packages)
        succeeded = all(
            o.startswith(SUCCEEDED) and "shame" not in o for o in self.outcomes.values()
        )
        # Shame rows are what an outcome says it recorded (pinned with it), not an effect.
        for name in sorted({*self.baseline.effects, *self.census.effects} - {"shame rows"}):
            expected = self.baseline.effects.get(name, 0)
            got = self.census.effects.get(name, 0)
            if succeeded and got != expected:
                found.append(f"{name}: {got}, {expected} without the fault")
            elif got > expected + _FAILURE_ADDS.get(name, 0) * max(failures, 0):
                found.append(f"{name}: {got}, more than {expected} without the fault")
        found += [f"{stage}: no fault was injected" for stage, n in self.fired.items() if not n]
        found += [f"a redelivery changed {record[:160]}" for record in self.changed]
        found += [f"the stack was left busy: {what}" for what in self.left_busy]
        return found


# -- the harness ---------------------------------------------------------------------------------


class Matrix:
    """One embedded stack (a scripted model answering like a good one) for every cell.

    ``with Matrix() as matrix: matrix.run(cell)``; :meth:`baseline` plays a scenario without a
    fault (once per scenario) for the effects each cell is compared with.
    """

    def __init__(self) -> None:
        self._exit = ExitStack()
        self._tenants = count(1)
        self._baselines: dict[Scenario, Census] = {}
        self._described: dict[str, dict[str, Any]] = {}
        self.model_fault: Callable[[ModelRequest], Scripted | None] | None = None
        self.plan: dict[str, Any] = {}

    def __enter__(self) -> Matrix:
        try:
            self.wire = self._exit.enter_context(Wire())
            self.model = ScriptedModel(responder=self._respond, name="scripted")
            self.stack = self._exit.enter_context(
                LocalStack(model=self.model, twilio_timeout_seconds=TWILIO_CLIENT_TIMEOUT)
            )
            seed(self.stack)
            self.stages = Stages(self.stack, self.wire)
            self.twilio = TwilioFaults(self.stack.twilio)
        except BaseException:
            self._exit.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._exit.close()

    def _respond(self, request: ModelRequest) -> Scripted | None:
        if self.model_fault is not None:
            answer = self.model_fault(request)
            if answer is not None:
                return answer
        if request.purpose in ("probe", "precheck"):
            return _TRIAGE
        if request.purpose == "reasoning":
            return self.plan
        return None  # decide, manage: not scripted here (their defaults, recorded)

    # -- cells ------------------------------------------------------------------------------

    def baseline(self, scenario: Scenario) -> Census:
        if scenario not in self._baselines:
            self._baselines[scenario] = self._play(Cell("none", (), scenario)).census
        return self._baselines[scenario]

    def run(self, cell: Cell, also: Callable[[], object] | None = None) -> CellResult:
        """Play ``cell`` (``also``: more to arm, after the cell's own fault)."""
        baseline = self.baseline(cell.scenario)
        result = self._play(cell, also)
        result.baseline = baseline
        return result

    def _play(self, cell: Cell, also: Callable[[], object] | None = None) -> CellResult:
        stack = self.stack
        n = next(self._tenants)
        newcomer = housed(
            Person(
                person_id=f"tenant-fm{n}",
                role=PersonRole.TENANT,
                name=f"Tenant {n:04d}",
                phones=(f"+1415556{n:04d}",),
                unit_id=f"{n}F",
            )
        )
        seed_directory(stack, newcomer)
        (tenant,) = newcomer.parties()
        wo_id = f"WO-FM{n:03d}"
        now = stack.clock.now()
        DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).create(
            WorkOrder(
                wo_id=wo_id,
                tenant_id=tenant.party_id,
                vendor_id=VIC.party_id,
                unit=tenant.unit,
                summary="leak under the kitchen sink",
                category="plumbing",
                created_at=now - timedelta(hours=3),
                updated_at=now - timedelta(hours=1),
            )
        )
        self.plan = _plan(wo_id)
        list(stack.domain_events())  # the tap: what earlier cells claimed is theirs
        stack.advance(1)
        run = _Run(self, cell, tenant, wo_id, stack.clock.now())
        run.arm()
        if also is not None:
            also()
        try:
            run.play()
        finally:
            run.disarm()
        run.after()
        census = self.census(run)
        outcomes = {stage: run.outcome(census, stage) for stage in cell.stages}
        notes = run.notes + [f"{stage} raised {error}" for stage, error in self.stages.errors]
        changed = (
            sorted(set(run.before.records) ^ set(census.records)) if run.before is not None else []
        )
        return CellResult(
            cell, outcomes, census, census, run.fired(), notes, changed, run.left_busy
        )

    # -- the census -------------------------------------------------------------------------

    def census(self, run: _Run) -> Census:
        stack = self.stack
        log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
        ledger = DynamoLedger(stack.ddb, stack.tables["ledger"])
        timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
        store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
        duplicates: list[str] = []
        effects: Counter[str] = Counter()

        def once(kind: str, identities: Iterable[tuple[Any, ...]]) -> None:
            for key, times in Counter(identities).items():
                effects[kind] += times
                if times > 1:
                    duplicates.append(f"{kind} {key} x{times}")

        records: list[str] = []
        packages: list[PackageRead] = []
        holders: dict[str, list[str]] = {}
        decisions: list[tuple[Any, ...]] = []
        outcomes: list[tuple[Any, ...]] = []
        rows: list[tuple[Any, ...]] = []
        for execution in self._executions(conversation_id_for(run.tenant.phone)):
            package_id = execution["name"]
            messages = self._messages_of(execution)
            for message_id in messages:
                holders.setdefault(message_id, []).append(package_id)
            recorded = log.for_package(package_id)
            decisions += [(package_id, d.stage, d.index, d.lane.value) for d in recorded]
            action_outcomes = log.outcomes_for(package_id)
            outcomes += [(package_id, o.index) for o in action_outcomes]
            completion = log.completion_for(package_id)
            ledger_rows = ledger.for_package(package_id)
            read: list[Any] = [*recorded, *action_outcomes, completion, *ledger_rows]
            records += [r.model_dump_json() for r in read if r is not None]
            rows += [
                (package_id, r.verdict, r.kind, r.event_type, r.subject_id, r.decision_id)
                for r in ledger_rows
            ]
            output = json.loads(execution.get("output") or "{}")
            packages.append(
                PackageRead(
                    package_id=package_id,
                    status=str(execution["status"]),
                    messages=messages,
                    decisions=len(recorded),
                    fallback=any(d.fallback for d in recorded),
                    completed_by=completion.completed_by if completion else None,
                    shame=tuple(
                        f"{r.kind}:{r.event_type}" for r in ledger_rows if r.standing_shame
                    ),
                    resolved=tuple(
                        f"{r.kind}:{r.event_type}" for r in ledger_rows if r.resolution is not None
                    ),
                    retried=_retried(stack.history(execution["executionArn"])),
                    precheck_fallback=bool((output.get("precheck") or {}).get("fallback")),
                    paged=False,
                )
            )
        once("packages", [(tuple(sorted(p.messages)),) for p in packages])
        once("decisions", decisions)
        once("action outcomes", outcomes)
        once("ledger rows", [row for row in rows if row[1] == "evidence"])
        once("shame rows", [row for row in rows if row[1] == "shame"])

        items = scan_all(stack.ddb, TableName=stack.tables["work_orders"], ConsistentRead=True)
        mine = [
            wo
            for item in items
            if (wo := store.get(item["wo_id"]["S"])) is not None
            and wo.tenant_id == run.tenant.party_id
        ]
        once("work orders", [(wo.summary,) for wo in mine if wo.wo_id != run.wo_id])
        entries = [e for wo in mine for e in timeline.for_wo(wo.wo_id)]
        once("timeline entries", [(e.wo_id, e.kind, e.what) for e in entries])
        records += [r.model_dump_json() for r in [*mine, *entries]]

        # Texts: everything Twilio (the loopback) has from this run on the virtual clock.
        texts = [m for m in stack.twilio.messages() if _created(m) >= run.started]
        roles = {run.tenant.phone: "tenant", VIC.phone: "vendor"}
        for role in ("tenant", "vendor"):
            once(
                f"texts to the {role}",
                [(m["to"], m["body"]) for m in texts if roles.get(m["to"]) == role],
            )
        who = (run.tenant.phone, f"{run.tenant.name} (")
        pages = [
            m["body"] for m in texts if m["to"] == ON_CALL_PM and any(w in m["body"] for w in who)
        ]
        once("pages to the PM", [(body,) for body in pages])
        # This run's texts only: an earlier cell's work order goes on in virtual time (its
        # gather times out, a PM is paged) while this cell plays, and is not this cell's effect.
        records += [
            json.dumps(m, sort_keys=True) for m in texts if m["to"] in roles or m["body"] in pages
        ]
        for package in packages:
            package.paged = any(package.package_id in body for body in pages)

        sent = tuple(run.inbound)
        return Census(
            inbound=sent,
            packages=packages,
            lost=[m for m in sent if m not in holders],
            packaged_twice={m: p for m, p in holders.items() if len(p) > 1},
            undecided=[
                p.package_id for p in packages if p.decisions == 0 or p.completed_by is None
            ],
            effects=dict(effects),
            duplicates=duplicates,
            pages=pages,
            records=tuple(sorted(records)),
        )

    def _executions(self, conversation: str) -> list[dict[str, Any]]:
        found = []
        for summary in self.stack.executions():
            arn = summary["executionArn"]
            described = self._described.get(arn)
            if described is None:
                described = self.stack.sfn.describe_execution(executionArn=arn)
                if described["status"] != "RUNNING":
                    self._described[arn] = described
            if json.loads(described["input"])["conversation_id"] == conversation:
                found.append(described)
        return found

    def _messages_of(self, execution: dict[str, Any]) -> tuple[str, ...]:
        given = json.loads(execution["input"])
        if given.get("package") is not None:
            return tuple(m["message_id"] for m in given["package"]["messages"])
        ref = given["package_ref"]
        items = query_all(
            self.stack.ddb,
            TableName=self.stack.tables["conversations"],
            KeyConditionExpression="conversation_id = :c AND item BETWEEN :lo AND :hi",
            ExpressionAttributeValues={
                ":c": {"S": ref["conversation_id"]},
                ":lo": {"S": f"msg#{ref['after_seq'] + 1:010d}"},
                ":hi": {"S": f"msg#{ref['through_seq']:010d}"},
            },
            ConsistentRead=True,
        )
        return tuple(i["message"]["M"]["message_id"]["S"] for i in items)


def _plan(wo_id: str) -> dict[str, Any]:
    """What the scripted model proposes for the repair scenario: a new WO, and a note on the
    open one (relayed to its vendor)."""
    return {
        "actions": [
            {
                "lane": "create_wo",
                "confidence": 0.95,
                "params": {
                    "summary": "the hallway light is out",
                    "category": "electrical",
                    "location": "hallway",
                },
            },
            {
                "lane": "relay_to_open_wo",
                "target_wo_id": wo_id,
                "confidence": 0.95,
                "params": {"note": "the kitchen leak is back"},
            },
        ]
    }


def _retried(history: list[dict[str, Any]]) -> tuple[str, ...]:
    """The states an execution's history shows attempted more than once in one entry (a
    Retry), apart from the lease's wait for its turn (LeaseBusy)."""
    retried: set[str] = set()
    state, attempts, busy = "", 0, False
    for event in history:
        entered = event.get("stateEnteredEventDetails")
        if entered is not None:
            state, attempts, busy = str(entered["name"]), 0, False
        elif event["type"] in ("LambdaFunctionScheduled", "TaskScheduled"):
            attempts += 1
            if attempts > 1 and not busy:
                retried.add(state)
        failed = event.get("lambdaFunctionFailedEventDetails") or event.get(
            "taskFailedEventDetails"
        )
        if failed is not None and failed.get("error") == "LeaseBusy":
            busy = True
    return tuple(sorted(retried))


def _redrive(sqs: Any, dlq: str, source: str) -> int:
    """Move every message of ``dlq`` back to ``source`` (SQS's DLQ redrive); how many."""
    moved = 0
    while messages := sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages"):
        for message in messages:
            sqs.send_message(QueueUrl=source, MessageBody=message["Body"])
            sqs.delete_message(QueueUrl=dlq, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
    return moved


def _writes(calls: Callable[[WireCall], bool]) -> Callable[[WireCall], bool]:
    return lambda call: calls(call) and call.is_write


def _flushing_signal(args: tuple[Any, ...]) -> bool:
    """The repair scenario's debounce signal that flushes: its second message's idle check."""
    signal = args[0] if args else None
    return (
        isinstance(signal, DebounceSignal)
        and signal.seq == len(REPAIR_TEXTS)
        and signal.probe is None
        and signal.trigger is None
    )


def _created(message: dict[str, Any]) -> datetime:
    return parsedate_to_datetime(str(message["date_created"]))


# -- one run -----------------------------------------------------------------------------------


class _Run:
    """One cell: arm its fault, play its scenario, say what the outcome was at each stage."""

    def __init__(
        self, matrix: Matrix, cell: Cell, tenant: Party, wo_id: str, started: datetime
    ) -> None:
        self.matrix = matrix
        self.stack = matrix.stack
        self.stages = matrix.stages
        self.cell = cell
        self.tenant = tenant
        self.wo_id = wo_id
        self.started = started
        self.inbound: list[str] = []
        self.texts: list[tuple[str, str]] = []  # (MessageSid, body), as Twilio posted them
        self.notes: list[str] = []
        self.fallback_used = 0  # texts Twilio delivered through the number's fallback URL
        self.wire_faults: list[WireError | PartialPublish] = []
        self.crashes: list[Crash] = []
        self.twilio_faults: dict[str, TwilioError] = {}
        self.model_faults: Counter[str] = Counter()
        self.redelivered: Counter[str] = Counter()
        self.before: Census | None = None  # the stores before a redelivery
        self.redriven: Counter[str] = Counter()  # stage → messages redriven from its DLQ
        self.left_busy: list[str] = []  # what was not quiet when the cell ended
        self._log_start = len(matrix.wire.injected())

    # -- arming -----------------------------------------------------------------------------

    def arm(self) -> None:
        self.disarm()
        self.stages.clear()
        self.matrix.wire.refill_retry_quotas()
        if self.cell.scenario == "failing":
            # The package fails for good at dispose (not an error the state machine retries).
            self.stages.crash(Crash("dispose", "before", 1, "ValueError"))
        family = self.cell.fault.split("-")[0]
        getattr(self, f"_arm_{family}", lambda: None)()

    def disarm(self) -> None:
        self.matrix.wire.clear()
        self.stages.crashes.clear()
        self.matrix.twilio.clear()
        self.matrix.model_fault = None

    def fired(self) -> dict[str, int]:
        wire = Counter(
            str(call.stage) for call, _ in self.matrix.wire.injected()[self._log_start :]
        )
        crashes = Counter(c.stage for c in self.crashes for _ in range(c.crashed))
        twilio = {stage: f.injected for stage, f in self.twilio_faults.items()}
        return {
            stage: wire[stage]
            + crashes[stage]
            + self.model_faults[stage]
            + twilio.get(stage, 0)
            + self.redelivered[stage]
            for stage in self.cell.stages
        }

    def _calls(self, service: str, stage: str) -> Callable[[WireCall], bool]:
        return lambda call: call.service == service and call.stage == stage

    def _during_outage(self, call: WireCall) -> bool:
        return self.stages.entered[str(call.stage)] <= OUTAGE_INVOCATIONS

    def _wire(self, fault: WireError | PartialPublish) -> None:
        self.wire_faults.append(self.matrix.wire.add(fault))

    def _arm_ddb(self) -> None:
        for stage in self.cell.stages:
            ddb = self._calls("dynamodb", stage)
            fault = self.cell.fault
            if fault == "ddb-throttled":
                self._wire(WireError("ProvisionedThroughputExceededException", 400, ddb, 2))
            elif fault == "ddb-throttled-long":
                self._wire(
                    WireError("ThrottlingException", 400, ddb, SDK_ATTEMPTS, budget=SDK_ATTEMPTS)
                )
            elif fault == "ddb-lost-answer":
                self._wire(WireError("InternalServerError", 500, _writes(ddb), applied=True))
            elif fault == "ddb-outage":
                self._wire(WireError("InternalServerError", 500, self._outage(ddb), 10**6))
            elif fault == "ddb-outage-long":
                self._wire(WireError("InternalServerError", 500, ddb, 10**6))

    def _outage(self, calls: Callable[[WireCall], bool]) -> Callable[[WireCall], bool]:
        return lambda call: calls(call) and self._during_outage(call)

    def _arm_crash(self) -> None:
        when: Literal["before", "after"] = (
            "before" if self.cell.fault.endswith("before") else "after"
        )
        for stage in self.cell.stages:
            match = _flushing_signal if stage == "flusher" else None
            self.crashes.append(self.stages.crash(Crash(stage, when, match=match)))

    def _arm_model(self) -> None:
        purposes = {"prober": "probe", "precheck": "precheck", "brain": "reasoning"}
        stage_of = {purposes[stage]: stage for stage in self.cell.stages}
        invalid = self.cell.fault == "model-invalid"

        def fault(request: ModelRequest) -> Scripted | None:
            stage = stage_of.get(request.purpose)
            if stage is None:
                return None
            self.model_faults[stage] += 1
            if not invalid:
                return ModelError("overloaded", "529 (injected)")
            if request.purpose == "reasoning":
                return {"actions": [{"lane": "delete_building", "confidence": 0.99}]}
            return {"route": "demolish", "severity": "none", "confidence": 7, "evidence": ""}

        self.matrix.model_fault = fault

    def _arm_twilio(self) -> None:
        for stage in self.cell.stages:
            self._twilio(stage)

    def _twilio(self, stage: str) -> None:
        # act: the new WO's text to the tenant; escalate: the page (its safety advice to the
        # tenant went first); fail-open: its page; the watcher: its reads by SID.
        recipient = self.tenant.phone if stage == "act" else ON_CALL_PM
        on: Literal["create", "fetch"] = "fetch" if stage == "watcher" else "create"
        stages = self.stages

        def now(subject: str) -> bool:
            return stages.running(stage) and (on == "fetch" or subject == recipient)

        def down(subject: str) -> bool:
            return now(subject) and stages.entered[stage] <= OUTAGE_INVOCATIONS

        error = {
            "twilio-5xx": TwilioError(now, on, 503, budget=2),
            "twilio-lost-answer": TwilioError(now, on, 500, accept=True, budget=1),
            "twilio-timeout": TwilioError(
                now, on, 503, accept=True, hang_seconds=TWILIO_HANG, budget=1
            ),
            "twilio-down": TwilioError(down, on, 503),
        }[self.cell.fault]
        self.twilio_faults[stage] = self.matrix.twilio.add(error)

    def _arm_bus(self) -> None:
        for stage in self.cell.stages:
            bus = self._calls("eventbridge", stage)
            if self.cell.fault == "bus-failed":
                self._wire(WireError("InternalException", 500, bus, budget=1))
            elif self.cell.fault == "bus-failed-entries":
                self._wire(PartialPublish(bus, budget=1))
            elif self.cell.fault == "bus-down-long":
                self._wire(WireError("InternalException", 500, bus, 10**6))
            elif stage == "announce":  # Step Functions' own integration: one attempt per try
                self._wire(WireError("InternalException", 500, bus, budget=OUTAGE_INVOCATIONS))
            else:
                self._wire(WireError("InternalException", 500, self._outage(bus), 10**6))

    # -- playing ----------------------------------------------------------------------------

    def play(self) -> None:
        stack = self.stack
        if self.cell.scenario == "gas":
            self.deliver(GAS_TEXT)
            stack.advance(1)
        else:
            self.deliver(REPAIR_TEXTS[0])
            stack.advance(5)
            self.deliver(REPAIR_TEXTS[1])
            stack.advance(stack.idle + 1)
        self.settle()
        if self.cell.fault == "redelivered":
            self.before = self.matrix.census(self)
            self.redeliver()
            self.settle()

    def after(self) -> None:
        """The fault is over. The DLQs alarm, so an operator redrives what reached them; what
        is left in the queues is handled, until the stack is quiet: the next cell starts from a
        quiet stack. A record received as often as its redrive policy allows is still in its
        queue: it moves to the DLQ on the next receive, so redriving once is not enough."""
        stack = self.stack
        for _ in range(QUIET_ROUNDS):
            for stage, dlq, source in (
                ("flusher", stack.debounce_dlq, stack.debounce_url),
                ("prober", stack.probe_dlq, stack.probe_url),
                ("watcher", stack.events_dlq, stack.events_url),
                ("fallback", stack.fallback_dlq, stack.fallback_url),
            ):
                self.redriven[stage] += _redrive(stack.sqs, dlq, source)
            if not self.busy():
                break
            stack.advance(SWEEP_EVERY_SECONDS)
            for _ in range(OUTAGE_INVOCATIONS + 1):
                stack.poll_watcher()
        if any(self.redriven.values()):
            stack.advance(SWEEP_WINDOW_SECONDS + 60)
            stack.sweep()
        self.left_busy = self.busy()

    def busy(self) -> list[str]:
        """What is not quiet on the stack, in words: signals not yet due, running executions,
        records in a queue or a DLQ."""
        stack = self.stack
        found = []
        if len(stack.debounce):
            found.append(f"{len(stack.debounce)} debounce signal(s) not yet due")
        if len(stack.probes):
            found.append(f"{len(stack.probes)} probe signal(s) not yet sent")
        if running := stack.running_executions():
            found.append(f"{len(running)} running execution(s)")
        for url in (
            stack.debounce_url,
            stack.probe_url,
            stack.events_url,
            stack.fallback_url,
            stack.debounce_dlq,
            stack.probe_dlq,
            stack.events_dlq,
            stack.fallback_dlq,
        ):
            attributes = stack.sqs.get_queue_attributes(
                QueueUrl=url,
                AttributeNames=[
                    "ApproximateNumberOfMessages",
                    "ApproximateNumberOfMessagesNotVisible",
                    "ApproximateNumberOfMessagesDelayed",
                ],
            )["Attributes"]
            if waiting := sum(int(n) for n in attributes.values()):
                found.append(f"{waiting} record(s) in {url.rsplit('/', 1)[-1]}")
        return found

    def settle(self) -> None:
        stack = self.stack
        stack.advance(5)  # Twilio moves its messages on; the watcher reads each claim
        for _ in range(OUTAGE_INVOCATIONS + 1):  # and reads again what it could not read
            stack.poll_watcher()
        # Past the sweeper's window, a scheduled sweep: every package here is swept.
        stack.advance(SWEEP_WINDOW_SECONDS + 60)
        stack.sweep()
        if self.stages.failed["sweeper"]:
            stack.advance(SWEEP_EVERY_SECONDS)  # a sweep was dropped: the next schedule
            stack.sweep()

    def deliver(self, body: str, sid: str | None = None) -> None:
        """A text from the tenant's phone as Twilio delivers it: once to the number's SMS URL,
        and when that fails (a 5xx, a crash), once to its fallback URL (the fallback API keeps
        it for the drain); Twilio retries nothing else. With ``sid``: the same signed request
        posted to the SMS URL again (a redelivery)."""
        stack = self.stack
        if sid is not None:
            event = signed_sms_event(stack.twilio_token, sid, self.tenant.phone, body)
            status = int(stack.api(event)["statusCode"])
            if status != 200:
                self.notes.append(f"redelivery of {sid}: {status}")
            return
        delivery = stack.twilio.text(self.tenant.phone, body)
        self.inbound.append(delivery.sid)
        self.texts.append((delivery.sid, body))
        for url, status in delivery.attempts:
            if status != 200:
                self.notes.append(f"webhook {urlsplit(url).path}: {status}")
        self.fallback_used += len(delivery.attempts) > 1
        if not delivery.accepted:
            self.notes.append(f"Twilio gave up on {delivery.sid}")

    def redeliver(self) -> None:
        """Every message the stage handled, delivered again, twice (the second time in the
        same batch)."""
        stack = self.stack
        stages = self.cell.stages
        if "webhook" in stages:
            for sid, body in self.texts * 2:
                self.deliver(body, sid)
                self.redelivered["webhook"] += 1
        if "flusher" in stages:
            signals = [args[0] for args in self.stages.seen.get("flusher", [])]
            for signal in signals * 2:
                stack.sqs.send_message(
                    QueueUrl=stack.debounce_url, MessageBody=signal.model_dump_json()
                )
                self.redelivered["flusher"] += 1
            stack.poll_debounce()
            stack.wait_for_executions()
        if "prober" in stages:
            probes = [args[0] for args in self.stages.seen.get("prober", [])]
            for signal in probes * 2:
                stack.sqs.send_message(
                    QueueUrl=stack.probe_url, MessageBody=signal.model_dump_json()
                )
                self.redelivered["prober"] += 1
            stack.poll_debounce()  # the probe queue first
            stack.wait_for_executions()
        if "watcher" in stages:
            for envelope in list(stack.domain_events()) * 2:
                stack.sqs.send_message(QueueUrl=stack.events_url, MessageBody=json.dumps(envelope))
                self.redelivered["watcher"] += 1
            stack.poll_watcher()

    # -- the outcome ------------------------------------------------------------------------

    def outcome(self, census: Census, stage: str) -> str:
        """What happened, as the stores and the execution histories say, and what recovered
        it at ``stage``."""
        packages = census.packages
        how: list[str] = []
        state = STATE_OF.get(stage)
        if state is not None and any(r.startswith(state) for p in packages for r in p.retried):
            how.append("Step Functions retry")
        failed = self.stages.failed[stage]
        if failed and stage in ("flusher", "prober", "watcher"):
            how.append("SQS redelivery")
        if self.redriven[stage]:
            how.append("DLQ redrive")
        if failed and stage == "sweeper":
            how.append("Lambda async retry")
        if stage == "webhook" and self.fallback_used:
            how.append("Twilio's fallback URL")
        if stage in self.twilio_faults and self.twilio_faults[stage].injected:
            how.append("Twilio adapter retry")
        if self.model_faults[stage]:
            how.append({"prober": "no probe", "precheck": "the safety floor alone"}.get(stage, ""))
        if self.redelivered[stage]:
            how.append("redelivery deduplicated")
        wire = [c for c, _ in self.matrix.wire.injected()[self._log_start :] if c.stage == stage]
        if not how and wire:
            how.append("SDK retry")
        how = [h for h in how if h]
        if any(p.completed_by == "fail_open" for p in packages):
            paged = all(p.paged for p in packages if p.completed_by == "fail_open")
            base = FAILED_OPEN if paged else FAILED_OPEN_UNSENT
        elif any(p.precheck_fallback if stage == "precheck" else p.fallback for p in packages):
            # The stage's own default: the pre-check's (the floor alone) in its column, a
            # decision's (the brain's, dispose's) in the others.
            base = FALLBACK + (", PM paged" if census.pages else "")
        elif any(p.status == "FAILED" for p in packages):
            base = COMPLETED_FAILED  # recorded to the end; a step after that failed
        else:
            base = SUCCEEDED
        label = f"{base} ({', '.join(how)})" if how else base
        shame = sorted({s for p in packages for s in p.shame})
        if shame:
            label += "; shame: " + ", ".join(shame)
        return label


# -- printing ------------------------------------------------------------------------------------


def render(results: list[CellResult]) -> str:
    """The matrix as text: one row per fault, one column per stage, a code per cell, and the
    legend of codes (``!`` marks a cell with a violation)."""
    codes: dict[str, str] = {}
    table: dict[str, dict[str, str]] = {}
    for result in results:
        bad = "!" if result.violations else ""
        for stage, outcome in result.outcomes.items():
            code = codes.setdefault(outcome, _code(len(codes)))
            table.setdefault(result.cell.fault, {})[stage] = code + bad
    width = max(len(f) for f in FAULTS)
    stages = [s for s in STAGES if any(s in row for row in table.values())]
    header = " " * width + " | " + " ".join(stages)
    lines = [header, "-" * len(header)]
    for fault in FAULTS:
        row = table.get(fault)
        if row is not None:
            cells = " ".join(f"{row.get(s, '·'):^{len(s)}}" for s in stages)
            lines.append(f"{fault:<{width}} | {cells}")
    lines += [
        "",
        "  ·  not a call that stage makes",
        "  !  a violation: lost, duplicated, undecided",
    ]
    lines += [f"{code:>3}  {outcome}" for outcome, code in codes.items()]
    return "\n".join(lines)


def _code(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"Z{index - 25}"


CELLS: list[Cell] = _cells()
