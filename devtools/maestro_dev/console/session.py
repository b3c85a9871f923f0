"""One eval run on the embedded stack, watched: the local side of the console's controller.

The run is the eval executor's execution (``eval_executor.asl.json``) on a fresh
:class:`LocalStack`, on a thread of its own. Its pace is the control row of its eval-run rows:
pause, resume and step write that row and release the gate the run waits at (if any); the
executor's gate reads it at every step boundary, so a pause holds a running play-all within
one package.

What the page sees is a stream of :class:`ConsoleEvent`: each an independent read of a surface,
named by its source, emitted when the read differs from the one before:

- ``twilio-read``: a text, fetched by SID from the Messages API (the loopback Twilio, through
  the messenger's reader), for every SID an outcome or the ledger names;
- ``wo-read``: a work order, read from the WO store;
- ``ddb-read``: a decision (the decision log), an Evidence or Shame row (the ledger), the
  run's own rows (run, control, steps, checkpoints, gates);
- ``sfn-read``: an execution's status and the states it is in, from Step Functions' history.

Nothing is echoed from a write: the controller's own actions show up only when a read sees
them (a pause is the control row read back).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from maestro.adapters.ddb import scan_all
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.ports.workflows import Gate
from maestro_dev.console.graph import current_states
from maestro_dev.eval_harness.runner import StartedRun, eval_stack, release_eval_gate, start_run
from maestro_dev.eval_harness.runs import ControlRow, Mode
from maestro_dev.eval_harness.scenario import Scenario
from maestro_dev.local.stack import LocalStack

Source = Literal["twilio-read", "wo-read", "ddb-read", "sfn-read"]
Status = Literal["starting", "running", "held", "passed", "failed", "stopped", "error"]
OBSERVE_EVERY_SECONDS = 0.3  # at most this often: each look reads every surface once
FINAL_STATUSES = frozenset({"passed", "failed", "stopped", "error"})
_MESSAGE_FINAL = frozenset({"delivered", "undelivered", "failed", "received", "read"})


class ConsoleEvent(BaseModel):
    """One read: what was read (``kind`` and ``key``), from where, and the value it returned."""

    model_config = ConfigDict(frozen=True)

    seq: int
    kind: str
    key: str
    source: Source
    value: dict[str, Any]
    read_at: str  # the stack's (virtual) time of the read


class RunSession:
    """A scenario's run on its own embedded stack; thread-safe for the API's calls."""

    def __init__(
        self,
        scenario: Scenario,
        mode: Mode,
        *,
        on_finish: Callable[[RunSession], None] | None = None,
        stack_hook: Callable[[LocalStack], None] | None = None,
        package_gates: bool = False,
    ) -> None:
        if package_gates and mode != "step":
            raise ValueError("package gates go with a run started in step mode")
        self.scenario = scenario
        self.mode = mode
        # The packages pause at their own step gates too (as `maestro eval run --mode step`):
        # held while the run's mode is step, released by the watcher in any other mode.
        self.package_gates = package_gates
        self.run_id = f"{scenario.id}-{uuid.uuid4().hex[:8]}"
        self.started_wall = datetime.now(UTC)
        self.status: Status = "starting"
        self.error = ""
        self._on_finish = on_finish
        self._stack_hook = stack_hook
        self._lock = threading.Condition()
        self._events: list[ConsoleEvent] = []
        self._latest: dict[tuple[str, str], ConsoleEvent] = {}
        self._stack: LocalStack | None = None
        self._run: StartedRun | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._histories: dict[str, list[str]] = {}  # a finished execution's states, read once
        self._read_packages: dict[str, list[str]] = {}  # a finished package's SIDs, read once
        self._wo_items: dict[str, str] = {}  # each WO's item when last read
        self._package_gates: dict[str, Gate] = {}  # the open ones, by key, as last read
        self._thread = threading.Thread(target=self._main, name=f"console-{self.run_id}")
        self._thread.daemon = True

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> None:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the run's stack did not start")
        if self.status == "error":
            raise RuntimeError(self.error)

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    def _main(self) -> None:
        try:
            with eval_stack(self.scenario, step_mode=self.package_gates) as stack:
                if self._stack_hook is not None:
                    self._stack_hook(stack)
                self._stack = stack
                self._run = start_run(stack, self.scenario, self.mode, self.run_id)
                self.status = "running"
                self._ready.set()
                self._watch(stack, self._run)
        except Exception as error:  # the run could not go on: said, never hidden
            logging.getLogger(__name__).exception("console run %s failed", self.run_id)
            self.error = f"{type(error).__name__}: {error}"[:2000]
            self.status = "error"
        finally:
            self._ready.set()
            with self._lock:
                self._stack = None
                self._lock.notify_all()
            if self._on_finish is not None:
                self._on_finish(self)

    def _watch(self, stack: LocalStack, run: StartedRun) -> None:
        while True:
            seen = stack.progress()
            described = stack.sfn.describe_execution(executionArn=run.execution_arn)
            self._observe(stack, run)
            if described["status"] != "RUNNING":
                break
            if self._stop.is_set():
                # Aborted at once; an execution waiting on a gate's token ends its wait only
                # when the stack closes (it ends every wait), so do not wait for it here.
                stack.sfn.stop_execution(
                    executionArn=run.execution_arn, cause="stopped from the console"
                )
                break
            time.sleep(OBSERVE_EVERY_SECONDS)
            stack.wait_for_progress(seen, timeout=1.0)
        stack.settle()  # the watcher reads the last claims before the final look
        self._observe(stack, run)
        record = run.store.run(run.run_id)
        if self._stop.is_set() and record.status == "running":
            self.status = "stopped"
        else:
            self.status = "passed" if record.status == "passed" else "failed"
        self._emit("session", "status", "ddb-read", {"status": self.status}, stack)

    # -- the controller's verbs -----------------------------------------------------------------

    def _running(self) -> tuple[LocalStack, StartedRun]:
        stack, run = self._stack, self._run
        if stack is None or run is None or self.finished:
            raise RunFinishedError(f"run {self.run_id} is {self.status}")
        return stack, run

    def _set_control(self, **changes: Any) -> ControlRow:
        stack, run = self._running()
        control = run.store.control(run.run_id)
        changed = control.model_copy(update={**changes, "changed_at": stack.clock.now()})
        run.store.put_control(changed)
        stack._moved()  # wake the watcher: it reads the control row (package gates follow it)
        return changed

    def _release_open_gates(self) -> int:
        stack, run = self._running()
        gates = run.store.open_gates(run.run_id)
        for gate in gates:
            release_eval_gate(stack, run.store, gate)
        return len(gates)

    def pause(self) -> ControlRow:
        """Hold at the next step boundary, whatever the mode."""
        with self._lock:
            return self._set_control(paused=True)

    def resume(self, mode: Mode | None = None) -> ControlRow:
        """Go on in ``mode`` (or the run's mode): no pause, no step target; the gate released."""
        with self._lock:
            changes: dict[str, Any] = {"paused": False, "step_until": None}
            if mode is not None:
                changes["mode"] = mode
            control = self._set_control(**changes)
            self._release_open_gates()
            return control

    def step(self) -> ControlRow:
        """Advance one package: hold again as soon as the run has produced one more. With
        package gates, a package paused at one of its gates goes on to the next (one gate)."""
        with self._lock:
            stack, run = self._running()
            if self._package_gates:
                key = min(self._package_gates, key=lambda k: self._package_gates[k].paused_at)
                self._release_package_gate(stack, key)
                return run.store.control(run.run_id)
            done = run.store.packages_so_far(run.run_id)
            control = self._set_control(paused=False, step_until=done + 1)
            self._release_open_gates()
            return control

    def release(self, key: str) -> None:
        """Release one package gate (the Executions page's button), by its key."""
        with self._lock:
            stack, _ = self._running()
            if key not in self._package_gates:
                raise RunFinishedError(f"no open package gate {key!r}")
            self._release_package_gate(stack, key)

    def _release_package_gate(self, stack: LocalStack, key: str) -> None:
        gate = self._package_gates.pop(key)
        stack.release_gate(gate)

    def _release_package_gates_unless_stepping(
        self, stack: LocalStack, control: ControlRow
    ) -> None:
        if not self.package_gates or control.mode == "step":
            return
        with self._lock:
            for key in list(self._package_gates):
                self._release_package_gate(stack, key)

    def stop(self) -> None:
        """End the run (StopExecution); nothing is undone, the rows stay."""
        self._stop.set()
        stack = self._stack
        if stack is not None:
            stack._moved()  # wake the watch loop

    # -- reads ------------------------------------------------------------------------------------

    def events_after(self, seq: int) -> list[ConsoleEvent]:
        with self._lock:
            return self._events[seq:]

    def wait_for_events(self, seq: int, timeout: float) -> list[ConsoleEvent]:
        with self._lock:
            self._lock.wait_for(
                lambda: len(self._events) > seq or self.finished,
                timeout=timeout,
            )
            return self._events[seq:]

    def snapshot(self) -> dict[str, Any]:
        """Everything read so far, as of one sequence number (taken under the lock)."""
        with self._lock:
            latest: dict[str, dict[str, Any]] = {}
            for (kind, key), event in self._latest.items():
                latest.setdefault(kind, {})[key] = event.model_dump()
            return {
                "run_id": self.run_id,
                "scenario_id": self.scenario.id,
                "title": self.scenario.title,
                "mode": self.mode,
                "status": self.status,
                "error": self.error,
                "live": not self.finished,
                "seq": len(self._events),
                "started": self.started_wall.isoformat(),
                "latest": latest,
            }

    def all_events(self) -> list[ConsoleEvent]:
        with self._lock:
            return list(self._events)

    # -- watching ---------------------------------------------------------------------------------

    def _emit(
        self, kind: str, key: str, source: Source, value: dict[str, Any], stack: LocalStack
    ) -> None:
        with self._lock:
            before = self._latest.get((kind, key))
            if before is not None and before.value == value:
                return
            event = ConsoleEvent(
                seq=len(self._events) + 1,
                kind=kind,
                key=key,
                source=source,
                value=value,
                read_at=stack.clock.now().isoformat(),
            )
            self._events.append(event)
            self._latest[(kind, key)] = event
            self._lock.notify_all()

    def _observe(self, stack: LocalStack, run: StartedRun) -> None:
        """One look at every surface; an event for each read that changed."""
        rows = run.store.rows(run.run_id)
        doc = json.loads(rows.run.model_dump_json(exclude={"scenario"}))
        self._emit("run", run.run_id, "ddb-read", doc, stack)
        self._emit("control", run.run_id, "ddb-read", _json(rows.control), stack)
        held = False
        for gate in rows.gates:
            value = _json(gate)
            value.pop("token", None)  # a release goes through the API, never the page
            held = held or gate.status == "open"
            self._emit("gate", f"{gate.index:03d}#{gate.gate}", "ddb-read", value, stack)
        for step in rows.steps:
            self._emit("step", f"{step.index:03d}", "ddb-read", _json(step), stack)
        for checkpoint in rows.checkpoints:
            self._emit("checkpoint", checkpoint.checkpoint_id, "ddb-read", _json(checkpoint), stack)
        if self.package_gates:
            self._observe_package_gates(stack)
            self._release_package_gates_unless_stepping(stack, rows.control)
            held = held or bool(self._package_gates)
        if self.status in ("running", "held"):
            self.status = "held" if held else "running"
        self._observe_executions(stack, run)
        log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
        sids: list[str] = []
        for execution in stack.executions():
            package_id, arn = execution["name"], execution["executionArn"]
            if package_id in self._read_packages:
                sids.extend(self._read_packages[package_id])
                continue
            for decision in log.for_package(package_id):
                self._emit("decision", decision.decision_id, "ddb-read", _json(decision), stack)
            package_sids = [s for o in log.outcomes_for(package_id) for s in o.message_sids]
            sids.extend(package_sids)
            if arn in self._histories:  # finished before this read: its log is whole
                self._read_packages[package_id] = package_sids
        wos = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
        for wo_id, item in _wo_items(stack).items():
            if self._wo_items.get(wo_id) == item:
                continue  # unchanged since the last read: no need to read it again
            self._wo_items[wo_id] = item
            wo = wos.get(wo_id)  # the store's own read, as any of its clients reads it
            if wo is not None:
                self._emit("wo", wo_id, "wo-read", _json(wo), stack)
        for row in stack.ledger.scan():
            kind = "shame" if row.verdict == "shame" else "evidence"
            self._emit(kind, row.row_id, "ddb-read", _json(row), stack)
            if row.event_type == "message.sent":
                sids.append(row.subject_id)
        self._observe_messages(stack, dict.fromkeys(sids))

    def _observe_package_gates(self, stack: LocalStack) -> None:
        """The packages' open step gates (the gates table), of executions still running."""
        running = {e["executionArn"] for e in stack.running_executions()}
        found = {
            f"{g.package_id}#{g.gate}#{g.index if g.index is not None else '-'}": g
            for g in stack.pipeline.deps.gates.open_gates()
            if g.execution_id in running
        }
        with self._lock:
            self._package_gates = found
            shown_open = {
                key
                for (kind, key), event in self._latest.items()
                if kind == "package_gate" and event.value.get("status") == "open"
            }
        gone = shown_open - set(found)
        for key, gate in found.items():
            value = json.loads(gate.model_dump_json(exclude={"token"}))
            self._emit("package_gate", key, "ddb-read", {**value, "status": "open"}, stack)
        for key in gone:
            before = self._latest.get(("package_gate", key))
            if before is not None:
                value = {**before.value, "status": "released"}
                self._emit("package_gate", key, "ddb-read", value, stack)

    def _observe_executions(self, stack: LocalStack, run: StartedRun) -> None:
        machines = {
            run.execution_arn: "eval_executor",
            **{e["executionArn"]: "package_pipeline" for e in stack.executions()},
            **{e["executionArn"]: "work_order" for e in stack.wo_executions()},
        }
        for arn, machine in machines.items():
            known = self._histories.get(arn)
            if known is not None:
                continue  # finished and read: it cannot move again
            status, history = _history(stack, arn)
            inside, entered = current_states(history)
            if status != "RUNNING":
                inside = []
                self._histories[arn] = entered
            value = {
                "machine": machine,
                "name": arn.rsplit(":", 1)[-1],
                "status": status,
                "current": inside,
                "entered": entered,
            }
            self._emit("execution", arn, "sfn-read", value, stack)

    def _observe_messages(self, stack: LocalStack, sids: Iterable[str]) -> None:
        reader = stack.watcher.deps.messages
        for sid in sids:
            before = self._latest.get(("message", sid))
            if before is not None and before.value.get("status") in _MESSAGE_FINAL:
                continue
            read = reader.read(sid)
            if read is None:
                continue  # nothing to show: a claim no read confirms is the ledger's shame
            value = {"sid": read.sid, "to": read.to, "body": read.body, "status": read.status}
            self._emit("message", sid, "twilio-read", value, stack)


class RunFinishedError(Exception):
    """The run is over (or never started): nothing to pause, step or resume."""


def _json(model: BaseModel) -> dict[str, Any]:
    return json.loads(model.model_dump_json())  # type: ignore[no-any-return]


def _history(stack: LocalStack, arn: str) -> tuple[str, list[dict[str, Any]]]:
    """An execution's status and history events. A running one's from the history Step
    Functions keeps for it in this process (what GetExecutionHistory would answer, without
    moto serializing every event's input and output at each look: that cost the run half its
    speed); a finished one's through the API, once."""
    with stack._progress:  # the stack's own record of what runs (see LocalStack)
        running = stack._running.get(arn)
    if running is not None:
        try:
            return "RUNNING", list(running.to_history_output()["events"])
        except (RuntimeError, AttributeError):  # moved while read: ask the API
            pass
    described = stack.sfn.describe_execution(executionArn=arn)
    return str(described["status"]), stack.history(arn)


def _wo_items(stack: LocalStack) -> dict[str, str]:
    """Every work order's id and its stored item (as text, to see which changed)."""
    table = stack.tables["work_orders"]
    found = {
        item["wo_id"]["S"]: json.dumps(item, sort_keys=True)
        for item in scan_all(stack.ddb, TableName=table, ConsistentRead=True)
    }
    return dict(sorted(found.items()))
