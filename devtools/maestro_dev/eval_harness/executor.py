"""The eval executor's task handlers (``eval_executor.asl.json``), on any :class:`EvalStack`.

Each is a Lambda-shaped function: the local dispatcher calls them on the embedded stack, like
the pipeline's; in the cloud each is a Lambda of the eval copy (``maestro_dev.eval_harness.cloud``).
They inject through the stack's real inbound route (signed webhooks), let its time pass, and
grade from :class:`StackSurfaces` reads. The run's state lives in eval-run rows, not in the
execution's payload, so a step's handler reads what the steps before it recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import count
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.actions import Lane, ManageExistingParams
from maestro.domain.directory import PersonRole, on_call_at
from maestro.domain.models import (
    ALLOWED_TRANSITIONS,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
    conversation_id_for,
)
from maestro.domain.on_call import choose_page_recipient
from maestro.domain.records import (
    Disposition,
    MaestroDecision,
    PendingClarification,
    PendingConfirmation,
)
from maestro.domain.timeline import NoteEntry
from maestro_dev.eval_harness.lenses import grade
from maestro_dev.eval_harness.runs import (
    CheckpointRow,
    ControlRow,
    EvalRunStore,
    GateRow,
    Mode,
    RunRow,
    StepRow,
    should_hold,
)
from maestro_dev.eval_harness.scenario import (
    WORLD_PROPERTY,
    FlushStep,
    OptOutStep,
    PriorDecisionSpec,
    Scenario,
    Step,
    TurnStep,
    UpdateStep,
    WaitStep,
    World,
    is_relative,
    offset,
)
from maestro_dev.eval_harness.surfaces import StackSurfaces
from maestro_dev.local.events import (
    signed_app_event,
    signed_sms_event,
    signed_transcript_event,
    sms_params,
    twilio_event,
    twilio_sid,
)
from maestro_dev.local.numbers import ON_CALL_PM
from maestro_dev.local.world import seed_world

if TYPE_CHECKING:
    from maestro_dev.eval_harness.environment import EvalStack

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
    """The handlers of one scenario's run on one stack. ``sid_namespace`` makes the ids of the
    texts it sends unique beyond this executor (the cloud's tables outlive a run, and each
    handler is its own invocation): empty, the embedded stack's ids ("eval 1", "eval 2", …)."""

    def __init__(
        self, stack: EvalStack, store: EvalRunStore, scenario: Scenario, sid_namespace: str = ""
    ) -> None:
        self.stack = stack
        self.store = store
        self.scenario = scenario
        self.surfaces = StackSurfaces(stack)
        self.sid_namespace = sid_namespace
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
        """Party id → phone, and ``pm`` → whom a page for the world's property goes to at the
        start (:func:`paged_pm`)."""
        return {"pm": paged_pm(self.scenario.world), **self.party_phones()}

    def party_phones(self) -> dict[str, str]:
        return {p.id: p.phone for p in self.scenario.world.parties}

    # -- the handlers ---------------------------------------------------------------------------

    def setup(self, event: dict[str, Any]) -> dict[str, Any]:
        run = self.store.run(str(event["run_id"]))
        world = self.scenario.world
        versions = seed_world(self.stack, world, world.start)
        self._seed_pending(world)
        self._seed_decisions(world)
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
            checkpoints = self.scenario.checkpoints_after(index)
            if checkpoints:
                # One grade task grades them all, in order; the gate after it is the last's.
                step["checkpoint"] = checkpoints[-1].id
                step["checkpoints"] = [c.id for c in checkpoints]
            steps.append(step)
        return {"steps": steps}

    @staticmethod
    def _kind(turn: Step) -> Literal["turn", "flush", "update", "wait", "opt_out"]:
        if isinstance(turn, TurnStep):
            return "turn"
        if isinstance(turn, WaitStep):
            return "wait"
        if isinstance(turn, OptOutStep):
            return "opt_out"
        return "update" if isinstance(turn, UpdateStep) else "flush"

    def _seed_pending(self, world: World) -> None:
        """The questions and holds already out, as the pipeline stores them."""
        store = DynamoPendingStore(self.stack.ddb, self.stack.tables["pending"])
        work_orders = {wo.wo_id: wo for wo in world.domain_work_orders(world.start)}
        for item in world.pending:
            party = world.party(item.party)
            assert party is not None  # the world's validator checked it
            asked = world.start + offset(item.asked_at)
            package_id = f"seeded-{item.id}"
            conversation_id = conversation_id_for(party.phone)
            if item.kind == "question":
                store.put_clarification(
                    PendingClarification(
                        clarification_id=item.id,
                        question=item.text,
                        candidate_ids=item.candidates,
                        candidate_lines=tuple(
                            f"{w}: {work_orders[w].summary}" for w in item.candidates
                        ),
                        candidate_snapshots=tuple(
                            WoSnapshot.of(work_orders[w]) for w in item.candidates
                        ),
                        asked_at=asked,
                        expires_at=asked + offset(item.expires_in),
                        package_id=package_id,
                        conversation_id=conversation_id,
                        party_id=party.id,
                    )
                )
            else:
                store.put_confirmation(
                    PendingConfirmation(
                        confirmation_id=item.id,
                        call=ManageExistingParams(
                            operation="cancel", wo_ids=(item.wo or "",), request=item.text[:300]
                        ),
                        proposal=item.text[:500],
                        wo_snapshots=(WoSnapshot.of(work_orders[item.wo or ""]),),
                        held_at=asked,
                        expires_at=asked + offset(item.expires_in),
                        package_id=package_id,
                        conversation_id=conversation_id,
                        party_id=party.id,
                    )
                )

    def _seed_decisions(self, world: World) -> None:
        """Decisions already in the decision log, each its own earlier package's."""
        log = DynamoDecisionLog(self.stack.ddb, self.stack.tables["decisions"])
        for n, spec in enumerate(world.decisions):
            party = world.party(spec.party)
            assert party is not None
            log.append(_prior_decision(spec, party.phone, world, n))

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
            status, sid = self._send(
                turn.channel,
                self.phone(turn.from_),
                turn.text,
                label=turn.sid,
                media=[(m.url, m.content_type) for m in turn.media],
            )
            injected = {"channel": turn.channel, "from": turn.from_, "sid": sid, "status": status}
            if turn.media:
                injected["media"] = len(turn.media)
        elif isinstance(turn, OptOutStep):
            self._move_to(self._when(turn.at))
            phone = self.phone(turn.opt_out)
            if turn.via == "keyword":
                status, sid = self._send("sms", phone, turn.word)
                injected = {"opt_out": turn.opt_out, "via": "keyword", "sid": sid}
            else:
                self.stack.carrier_opt_out(phone)
                injected = {"opt_out": turn.opt_out, "via": "carrier"}
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
        """Grade every checkpoint after the step, in order, each on the packages since the
        previous step that had checkpoints (several after one step see the same packages)."""
        e = StepEvent.model_validate(event)
        checkpoints = self.scenario.checkpoints_after(e.index)
        if not checkpoints:
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
            parties=self.party_phones(),
        )
        results = []
        for order, checkpoint in enumerate(checkpoints):
            graded = grade(checkpoint.expect, reads, self.phones(), self.scenario.world.start)
            self.store.put_checkpoint(
                e.run_id,
                CheckpointRow(
                    checkpoint_id=checkpoint.id,
                    after=checkpoint.after,
                    order=order,
                    passed=graded.passed,
                    reason=graded.reason,
                    findings=graded.findings,
                    packages=packages,
                    evidence=len(reads.evidence or ()),
                    shame=reads.shame or (),
                    graded_at=self.stack.clock.now(),
                    known_failure=checkpoint.known_failure or "",
                ),
            )
            results.append(graded.passed)
        return {"checkpoint": checkpoints[-1].id, "passed": all(results)}

    def finish(self, event: dict[str, Any]) -> dict[str, Any]:
        run_id = str(event["run_id"])
        run = self.store.run(run_id)
        graded = {c.checkpoint_id: c for c in self.store.checkpoints(run_id)}
        failure = event.get("failure")
        missing = [c.id for c in self.scenario.checkpoints if c.id not in graded]
        passed = failure is None and not missing and all(c.as_expected for c in graded.values())
        error = ""
        if failure is not None:
            error = f"{failure.get('Error')}: {failure.get('Cause', '')}"[:2000]
        elif missing:
            error = f"never graded: {', '.join(missing)}"
        elif stale := [c.checkpoint_id for c in graded.values() if c.known_failure and c.passed]:
            error = f"marked as known failures but passed (remove the mark): {', '.join(stale)}"
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
        """The change as the property system would make it: versioned writes to the WO store
        (the vendor assigned, the visit booked, category or summary corrected, then the
        status, through each status the lifecycle requires on the way), and a note on the
        WO's timeline."""
        store = DynamoWorkOrderStore(self.stack.ddb, self.stack.tables["work_orders"])
        wo = store.get(step.update)
        if wo is None:
            raise RuntimeError(f"update: no work order {step.update}")
        now = self.stack.clock.now()

        def write(changed: WorkOrder) -> WorkOrder:
            store.update(changed, changed.version - 1)
            return changed

        if step.vendor is not None and wo.vendor_id != step.vendor:
            if wo.status is WorkOrderStatus.OPEN:
                wo = write(wo.assign(step.vendor, now))
            else:  # a PM moving the job to another vendor: the status stays
                wo = write(wo._changed(now, vendor_id=step.vendor))
        if step.visit is not None:
            start = self.scenario.world.start
            window = VisitWindow(
                start=start + offset(step.visit.start), end=start + offset(step.visit.end)
            )
            wo = write(wo.schedule(window, now))
        content = {k: v for k, v in (("category", step.category), ("summary", step.summary)) if v}
        if content:
            wo = write(wo._changed(now, **content))
        if step.status is not None:
            target = WorkOrderStatus(step.status)
            path = {
                WorkOrderStatus.IN_PROGRESS: [WorkOrderStatus.IN_PROGRESS],
                WorkOrderStatus.COMPLETED: [WorkOrderStatus.IN_PROGRESS, WorkOrderStatus.COMPLETED],
            }.get(target, [target])
            for status in path:
                if wo.status is status or status not in ALLOWED_TRANSITIONS[wo.status]:
                    continue
                wo = write(wo.transition(status, now))
            if wo.status is not target:
                raise RuntimeError(f"update: {step.update} cannot become {target} from {wo.status}")
        if step.note is not None:
            by = self.scenario.world.party(step.by)
            entry = NoteEntry(
                wo_id=wo.wo_id,
                entry_id=f"eval-update-{step.update}-{now.isoformat()}#note",
                at=now,
                who=by.id if by is not None else None,
                who_role=PartyRole(by.role) if by is not None else None,
                package_id="outside-maestro",
                what=f"note by {step.by}"[:500],
                note=step.note,
            )
            DynamoTimeline(self.stack.ddb, self.stack.tables["timeline"]).append(entry)
        changes = step.model_dump(
            include={"status", "vendor", "category", "summary", "note"}, exclude_none=True
        )
        if step.visit is not None:
            changes["visit"] = step.visit.model_dump()
        return {"update": step.update, **changes, "by": step.by, "version": wo.version}

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

    def _send(
        self,
        channel: str,
        sender: str,
        text: str,
        *,
        label: str | None = None,
        media: list[tuple[str, str]] | None = None,
    ) -> tuple[int, str]:
        """Through the real signed webhook. ``label``: the same label, the same provider id
        (a redelivery); ``media``: an MMS's files, as (URL, content type)."""
        n = next(self._sids)
        # The namespace keeps a cloud run's provider ids apart from every earlier run's.
        ns = self.sid_namespace
        name = f"eval {ns}{n}" if label is None else f"eval {ns}label {label}"
        stack = self.stack
        if channel == "sms" and media:
            sid = twilio_sid("MM", name)
            params = sms_params(sid, sender, text)
            params["NumMedia"] = str(len(media))
            for i, (url, content_type) in enumerate(media):
                params[f"MediaUrl{i}"] = url
                params[f"MediaContentType{i}"] = content_type
            request = twilio_event("/twilio/sms", params, token=stack.twilio_token)
        elif channel == "sms":
            sid = twilio_sid("SM", name)
            request = signed_sms_event(stack.twilio_token, sid, sender, text)
        elif channel == "call":
            sid = twilio_sid("TR", name)
            request = signed_transcript_event(stack.twilio_token, sid, sender, text)
        else:
            if self.sid_namespace:
                sid = twilio_sid("app", name)
            else:
                sid = f"app{n:05d}" if label is None else f"app-{label}"
            payload = {"message_id": sid, "from_phone": sender, "body": text}
            request = signed_app_event(stack.app_secret, "/app/messages", payload)
        response = stack.http(request)
        status = int(response["statusCode"])
        if status != 200:
            raise RuntimeError(f"the webhook refused the scenario's text ({status}): {response}")
        return status, sid


def paged_pm(world: World) -> str:
    """Whom a page about the world's property goes to at the start, by docs/on-call.md's order
    (the PM on call, else the default PM, else the account's fallback number; '' when no one):
    ``pm`` in a message check. The world's directory is what the stack imports, so this is the same
    choice the pipeline makes for a page about that property."""
    directory = world.directory()
    prop = WORLD_PROPERTY.property_id
    shift = on_call_at(directory.on_call, prop, world.start)
    people = {p.person_id: p for p in directory.people}
    recipient = choose_page_recipient(
        prop,
        shift=shift,
        on_call_person=people.get(shift.person_id) if shift else None,
        managers=[
            p for p in directory.people if p.role is PersonRole.PM and prop in p.property_ids
        ],
        fallback_phone=fallback_phone(world),
    )
    return recipient.phone or ""


def fallback_phone(world: World) -> str:
    """The account's fallback number the world's stack pages: its own, or the stack's."""
    return ON_CALL_PM if world.fallback_phone is None else world.fallback_phone


def _prior_decision(spec: PriorDecisionSpec, phone: str, world: World, n: int) -> MaestroDecision:
    return MaestroDecision(
        decision_id=f"{spec.package}-seeded-{n}",
        package_id=spec.package,
        conversation_id=conversation_id_for(phone),
        stage="dispose",
        index=0,
        disposition=Disposition(spec.disposition),
        lane=Lane(spec.lane),
        target_wo_id=spec.target,
        open_context_count=sum(
            1 for wo in world.work_orders if world.party(wo.tenant) == world.party(spec.party)
        ),
        confidence=spec.confidence,
        # The question a clarify put, as dispose records it (maestro.domain.dispose.asks_signal).
        asks=("ask:" + ",".join(sorted(spec.candidates) or ["*"]))
        if spec.lane == "clarify"
        else None,
        reason=spec.reason or "seeded by the scenario",
        model="seeded",
        recorded_at=world.start + offset(spec.at),
    )


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
