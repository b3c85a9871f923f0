"""The eval executor's task handlers on the embedded stack (``eval_executor.asl.json``).

Each is a Lambda-shaped function the local dispatcher calls, like the pipeline's. They inject
through the stack's real inbound resolver (signed webhooks), move its virtual clock, and grade
from :class:`StackSurfaces` reads. The run's state lives in eval-run rows, not in the
execution's payload, so a step's handler reads what the steps before it recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import count
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from maestro.adapters.dynamodb_memory import DynamoWorkOrderStore
from maestro.domain.models import ALLOWED_TRANSITIONS, WorkOrderStatus
from maestro.evals.lenses import grade
from maestro.evals.scenario import (
    FlushStep,
    Scenario,
    Step,
    TurnStep,
    UpdateStep,
    WaitStep,
    is_relative,
    offset,
)
from maestro_dev.evals.runs import (
    CheckpointRow,
    ControlRow,
    EvalRunStore,
    GateRow,
    Mode,
    RunRow,
    StepRow,
    should_hold,
)
from maestro_dev.evals.surfaces import StackSurfaces
from maestro_dev.local.events import (
    signed_app_event,
    signed_sms_event,
    signed_transcript_event,
    twilio_sid,
)
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import seed_world

HANDLERS = ("eval_setup", "eval_gate", "eval_inject", "eval_settle", "eval_grade", "eval_finish")
SETTLE_SECONDS = 1  # after a text: long enough for an urgent one's immediate flush
STEP_MODE_WAIT_SECONDS = 3600.0  # how long a step-mode settle waits for its gates' release


class StepEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    run_id: str
    mode: Mode = "all"
    step: dict[str, Any] = {}

    @property
    def index(self) -> int:
        return int(self.step["index"])


class EvalExecutor:
    """The handlers of one scenario's run on one embedded stack."""

    def __init__(self, stack: LocalStack, store: EvalRunStore, scenario: Scenario) -> None:
        self.stack = stack
        self.store = store
        self.scenario = scenario
        self.surfaces = StackSurfaces(stack)
        self._sids = count(1)

    def handlers(self) -> dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]]:
        return {
            "eval_setup": lambda event, _ctx: self.setup(event),
            "eval_gate": lambda event, _ctx: self.gate(event),
            "eval_inject": lambda event, _ctx: self.inject(event),
            "eval_settle": lambda event, _ctx: self.settle(event),
            "eval_grade": lambda event, _ctx: self.grade(event),
            "eval_finish": lambda event, _ctx: self.finish(event),
        }

    # -- who is who -----------------------------------------------------------------------------

    def phone(self, who: str) -> str:
        party = self.scenario.world.party(who)
        return party.phone if party is not None else who

    def phones(self) -> dict[str, str]:
        """Party id → phone, and ``pm`` → the on-call PM's phone."""
        return {"pm": ON_CALL_PM, **{p.id: p.phone for p in self.scenario.world.parties}}

    # -- the handlers ---------------------------------------------------------------------------

    def setup(self, event: dict[str, Any]) -> dict[str, Any]:
        run = self.store.run(str(event["run_id"]))
        world = self.scenario.world
        versions = seed_world(self.stack, world, world.start)
        # Prior messages: through the real path, each its own package, before the start.
        for prior in sorted(world.messages, key=lambda m: offset(m.at)):
            self._move_to(world.start + offset(prior.at))
            self._send(prior.channel, self.phone(prior.from_), prior.text)
            self.stack.advance(self.stack.idle + 1)
        self._move_to(world.start)
        self.store.put_run(run.model_copy(update={"seeded_versions": versions}))
        steps = []
        for index, turn in enumerate(self.scenario.turns):
            step: dict[str, Any] = {"index": index, "kind": self._kind(turn)}
            checkpoint = self.scenario.checkpoint_after(index)
            if checkpoint is not None:
                step["checkpoint"] = checkpoint.id
            steps.append(step)
        return {"steps": steps}

    @staticmethod
    def _kind(turn: Step) -> Literal["turn", "flush", "update", "wait"]:
        if isinstance(turn, TurnStep):
            return "turn"
        if isinstance(turn, WaitStep):
            return "wait"
        return "update" if isinstance(turn, UpdateStep) else "flush"

    def gate(self, event: dict[str, Any]) -> dict[str, Any]:
        """Two calls of one function: without a token, whether the run holds here (the control
        row, read now: the console changes it while the run runs); with one (the task-token
        gate), store the token so whoever releases the run can send it."""
        if "token" not in event:
            run_id, index = str(event["run_id"]), int(event["index"])
            through = index - 1 if event["gate"] == "before the step" else index
            held = should_hold(
                self.store.control(run_id),
                str(event["gate"]),
                self.store.packages_so_far(run_id, through),
            )
            return {"hold": held}
        self.store.put_gate(
            GateRow(
                run_id=str(event["run_id"]),
                index=int(event["index"]),
                gate=str(event["gate"]),
                token=str(event["token"]),
                execution=str(event["execution"]),
                paused_at=self.stack.clock.now(),
            )
        )
        return {"paused": event["gate"]}

    def inject(self, event: dict[str, Any]) -> dict[str, Any]:
        e = StepEvent.model_validate(event)
        turn = self.scenario.turns[e.index]
        before = tuple(self.surfaces.execution_arns())
        injected: dict[str, Any]
        if isinstance(turn, WaitStep):
            injected = {"wait": turn.wait}  # nothing sent: settle lets the time pass
        elif isinstance(turn, UpdateStep):
            self._move_to(self._when(turn.at))
            injected = self._update(turn)
        elif isinstance(turn, TurnStep):
            self._move_to(self._when(turn.at))
            status, sid = self._send(turn.channel, self.phone(turn.from_), turn.text)
            injected = {"channel": turn.channel, "from": turn.from_, "sid": sid, "status": status}
        elif turn.flush in ("kickoff", "conversation_ended"):
            who = self.phone(turn.from_ or self._last_sender(e.index))
            response = self.stack.http(
                signed_app_event(
                    self.stack.app_secret,
                    "/assistant/kickoff",
                    {"from_phone": who, "trigger": turn.flush},
                )
            )
            status = int(response["statusCode"])
            if status != 200:
                raise RuntimeError(f"the kickoff request was refused: {response}")
            injected = {"flush": turn.flush, "from": who, "status": status}
        else:
            injected = {"flush": turn.flush}
        self.store.put_step(
            e.run_id,
            StepRow(
                index=e.index,
                kind=self._kind(turn),
                at=self.stack.clock.now(),
                before=before,
                injected=injected,
            ),
        )
        return injected

    def settle(self, event: dict[str, Any]) -> dict[str, Any]:
        e = StepEvent.model_validate(event)
        turn = self.scenario.turns[e.index]
        if isinstance(turn, FlushStep) and turn.flush == "idle":
            wait: float = self.stack.idle + 1
        elif isinstance(turn, FlushStep) and turn.flush == "max_wait":
            wait = self.stack.max_wait + 1
        elif isinstance(turn, WaitStep):
            wait = offset(turn.wait).total_seconds()
        else:
            wait = SETTLE_SECONDS
        self.stack.advance(wait)
        if e.mode == "step":
            # The packages run in step mode: wait while someone releases their gates.
            try:
                self.stack.wait_for_executions(timeout=STEP_MODE_WAIT_SECONDS)
            except TimeoutError as error:
                raise TimeoutError("the packages' gates were not released in time") from error
        step = self.store.step(e.run_id, e.index)
        if step is None:
            raise RuntimeError(f"step {e.index} settled before it was injected")
        seen = set(step.before)
        packages = tuple(
            self.surfaces.package_of(arn)
            for arn in self.surfaces.execution_arns()
            if arn not in seen
        )
        self.store.put_step(e.run_id, step.model_copy(update={"packages": packages}))
        return {"packages": list(packages)}

    def grade(self, event: dict[str, Any]) -> dict[str, Any]:
        e = StepEvent.model_validate(event)
        checkpoint = self.scenario.checkpoint_after(e.index)
        if checkpoint is None:
            raise RuntimeError(f"no checkpoint after step {e.index}")
        earlier = [c.after for c in self.scenario.checkpoints if c.after < e.index]
        since = max(earlier, default=-1)
        steps = self.store.steps(e.run_id)
        packages = tuple(p for s in steps if since < s.index <= e.index for p in s.packages)
        earlier_packages = tuple(p for s in steps if s.index <= since for p in s.packages)
        graded_before = [c.graded_at for c in self.store.checkpoints(e.run_id)]
        run = self.store.run(e.run_id)
        reads = self.surfaces.reads(
            packages,
            run.seeded_versions,
            every_package=earlier_packages,
            since=max(graded_before, default=None),
        )
        graded = grade(checkpoint.expect, reads, self.phones())
        self.store.put_checkpoint(
            e.run_id,
            CheckpointRow(
                checkpoint_id=checkpoint.id,
                after=checkpoint.after,
                passed=graded.passed,
                reason=graded.reason,
                findings=graded.findings,
                packages=packages,
                evidence=len(reads.evidence or ()),
                shame=reads.shame or (),
                graded_at=self.stack.clock.now(),
            ),
        )
        return {"checkpoint": checkpoint.id, "passed": graded.passed}

    def finish(self, event: dict[str, Any]) -> dict[str, Any]:
        run_id = str(event["run_id"])
        run = self.store.run(run_id)
        graded = {c.checkpoint_id: c for c in self.store.checkpoints(run_id)}
        failure = event.get("failure")
        missing = [c.id for c in self.scenario.checkpoints if c.id not in graded]
        passed = failure is None and not missing and all(c.passed for c in graded.values())
        error = ""
        if failure is not None:
            error = f"{failure.get('Error')}: {failure.get('Cause', '')}"[:2000]
        elif missing:
            error = f"never graded: {', '.join(missing)}"
        self.store.put_run(
            run.model_copy(
                update={
                    "status": "passed" if passed else "failed",
                    "finished_at": self.stack.clock.now(),
                    "error": error,
                }
            )
        )
        return {"passed": passed, "error": error}

    # -- helpers --------------------------------------------------------------------------------

    def _when(self, at: str) -> datetime:
        if is_relative(at):
            return self.stack.clock.now() + offset(at)
        return self.scenario.world.start + offset(at)

    def _update(self, step: UpdateStep) -> dict[str, Any]:
        """The change as the property system would make it: a versioned write to the WO store,
        through each status the lifecycle requires on the way."""
        store = DynamoWorkOrderStore(self.stack.ddb, self.stack.tables["work_orders"])
        wo = store.get(step.update)
        if wo is None:
            raise RuntimeError(f"update: no work order {step.update}")
        target = WorkOrderStatus(step.status)
        path = {
            WorkOrderStatus.IN_PROGRESS: [WorkOrderStatus.IN_PROGRESS],
            WorkOrderStatus.COMPLETED: [WorkOrderStatus.IN_PROGRESS, WorkOrderStatus.COMPLETED],
        }.get(target, [target])
        for status in path:
            if wo.status is status or status not in ALLOWED_TRANSITIONS[wo.status]:
                continue
            changed = wo.transition(status, self.stack.clock.now())
            store.update(changed, wo.version)
            wo = changed
        if wo.status is not target:
            raise RuntimeError(f"update: {step.update} cannot become {target} from {wo.status}")
        return {"update": step.update, "status": step.status, "by": step.by, "version": wo.version}

    def _move_to(self, at: datetime) -> None:
        gap = (at - self.stack.clock.now()).total_seconds()
        if gap < 0:
            raise ValueError(f"time only moves forward: {at.isoformat()} is in the past")
        if gap > 0:
            self.stack.advance(gap)

    def _last_sender(self, index: int) -> str:
        for turn in reversed(self.scenario.turns[:index]):
            if isinstance(turn, TurnStep):
                return turn.from_
        raise ValueError(f"step {index}: a kickoff needs a 'from' (no text before it)")

    def _send(self, channel: str, sender: str, text: str) -> tuple[int, str]:
        n = next(self._sids)
        stack = self.stack
        if channel == "sms":
            sid = twilio_sid("SM", f"eval {n}")
            request = signed_sms_event(stack.twilio_token, sid, sender, text)
        elif channel == "call":
            sid = twilio_sid("TR", f"eval {n}")
            request = signed_transcript_event(stack.twilio_token, sid, sender, text)
        else:
            sid = f"app{n:05d}"
            payload = {"message_id": sid, "from_phone": sender, "body": text}
            request = signed_app_event(stack.app_secret, "/app/messages", payload)
        response = stack.http(request)
        status = int(response["statusCode"])
        if status != 200:
            raise RuntimeError(f"the webhook refused the scenario's text ({status}): {response}")
        return status, sid


def start_of(scenario: Scenario) -> datetime:
    """Where the virtual clock starts: the scenario's start, or its first prior message."""
    earliest = min((offset(m.at) for m in scenario.world.messages), default=timedelta(0))
    return scenario.world.start + min(earliest, timedelta(0))


def new_control(run_id: str, mode: Mode, now: datetime) -> ControlRow:
    return ControlRow(run_id=run_id, mode=mode, changed_at=now)


def new_run(scenario: Scenario, mode: Mode, run_id: str, now: datetime) -> RunRow:
    return RunRow(
        run_id=run_id,
        scenario_id=scenario.id,
        title=scenario.title,
        mode=mode,
        scenario=scenario.model_dump(mode="json", by_alias=True),
        started_at=now,
    )
