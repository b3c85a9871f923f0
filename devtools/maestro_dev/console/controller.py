"""The controller contract (seed 002: start / step / pause / resume / subscribe) and its local
implementation.

The web app talks only to a :class:`Controller`. :class:`LocalController` runs each scenario on
a fresh embedded stack (one live run at a time: one process, one moto); a deployed stack's
controller (``--env dev``: the eval executor in the cloud, the eval-runs table read with the
operator's credentials) would implement the same protocol, and nothing above it changes.

A finished run is archived as a JSON file (its eval-run rows and every read event), so a past
run replays from its stored rows: there is no rewind, only a replay of what was read.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Protocol

from maestro_dev.console.session import ConsoleEvent, RunFinishedError, RunSession
from maestro_dev.eval_harness.loader import load_scenarios
from maestro_dev.eval_harness.runs import Mode
from maestro_dev.eval_harness.scenario import FlushStep, Scenario, TurnStep
from maestro_dev.local.stack import LocalStack


class UnknownError(LookupError):
    """No such scenario or run."""


class BusyError(RuntimeError):
    """A run is live: the local stack runs one at a time."""


class Controller(Protocol):
    def scenarios(self) -> list[dict[str, Any]]: ...
    def start(self, scenario_id: str, mode: Mode, package_gates: bool = False) -> str: ...
    def pause(self, run_id: str) -> dict[str, Any]: ...
    def resume(self, run_id: str, mode: Mode | None = None) -> dict[str, Any]: ...
    def step(self, run_id: str) -> dict[str, Any]: ...
    def stop(self, run_id: str) -> None: ...
    def release(self, run_id: str, key: str) -> dict[str, Any]: ...
    def snapshot(self, run_id: str) -> dict[str, Any]: ...
    def events(self, run_id: str, after: int, wait: float = 0.0) -> tuple[list[Any], bool]: ...
    def runs(self) -> list[dict[str, Any]]: ...
    def shame(self) -> dict[str, Any]: ...


def describe(scenario: Scenario) -> dict[str, Any]:
    """A catalog entry: what the scenario is about, who takes part, what it expects."""
    turns = []
    for index, turn in enumerate(scenario.turns):
        if isinstance(turn, TurnStep):
            turns.append({"index": index, "kind": "turn", "from": turn.from_, "text": turn.text})
        elif isinstance(turn, FlushStep):
            turns.append({"index": index, "kind": "flush", "flush": turn.flush})
        else:
            line = {k: v for k, v in turn.model_dump(mode="json").items() if v is not None}
            turns.append({"index": index, "kind": type(turn).__name__, **line})
    expects = []
    for checkpoint in scenario.checkpoints:
        expect = checkpoint.expect
        expects.append(
            {
                "id": checkpoint.id,
                "after": checkpoint.after,
                "packages": getattr(expect, "packages", None),
                "lanes": list(getattr(expect, "lanes", None) or ()),
                "decisions": [
                    d.model_dump(mode="json", exclude_none=True)
                    for d in getattr(expect, "decisions", ())
                ],
                "absent_lanes": list(getattr(expect, "absent_lanes", ())),
            }
        )
    return {
        "id": scenario.id,
        "title": scenario.title,
        "description": " ".join(scenario.description.split()),
        "naive_failure": " ".join(scenario.naive_failure.split()),
        "parties": [{"id": p.id, "role": p.role, "name": p.name} for p in scenario.world.parties],
        "work_orders": [
            {"id": w.id, "description": w.description} for w in scenario.world.work_orders
        ],
        "turns": turns,
        "checkpoints": expects,
        "flushes": sum(isinstance(t, FlushStep) for t in scenario.turns),
    }


class LocalController:
    """Scenarios on the embedded stack, one live run at a time; finished runs archived."""

    def __init__(self, scenarios_path: Path, archive: Path) -> None:
        self._scenarios = {s.id: s for s in load_scenarios(scenarios_path)}
        self._archive = archive
        self._lock = threading.Lock()
        self._sessions: dict[str, RunSession] = {}
        self._live: RunSession | None = None
        # Tests hook the stack of the next runs (a lying messenger, say): called on each.
        self.stack_hooks: list[Any] = []

    # -- scenarios and runs -----------------------------------------------------------------------

    def scenarios(self) -> list[dict[str, Any]]:
        return [describe(s) for s in self._scenarios.values()]

    def scenario(self, scenario_id: str) -> Scenario:
        try:
            return self._scenarios[scenario_id]
        except KeyError:
            raise UnknownError(f"no scenario {scenario_id!r}") from None

    def start(self, scenario_id: str, mode: Mode, package_gates: bool = False) -> str:
        scenario = self.scenario(scenario_id)
        if package_gates and mode != "step":
            raise ValueError("package gates go with a run started in step mode")
        with self._lock:
            if self._live is not None and not self._live.finished:
                raise BusyError(f"run {self._live.run_id} is live: stop it or let it finish")
            hooks = list(self.stack_hooks)

            def hook(stack: LocalStack) -> None:
                for each in hooks:
                    each(stack)

            session = RunSession(
                scenario,
                mode,
                on_finish=self._archive_run,
                stack_hook=hook,
                package_gates=package_gates,
            )
            self._sessions[session.run_id] = session
            self._live = session
        session.start()
        return session.run_id

    def _session(self, run_id: str) -> RunSession:
        session = self._sessions.get(run_id)
        if session is None:
            raise UnknownError(f"no live run {run_id!r}")
        return session

    def pause(self, run_id: str) -> dict[str, Any]:
        return _json(self._session(run_id).pause())

    def resume(self, run_id: str, mode: Mode | None = None) -> dict[str, Any]:
        return _json(self._session(run_id).resume(mode))

    def step(self, run_id: str) -> dict[str, Any]:
        return _json(self._session(run_id).step())

    def stop(self, run_id: str) -> None:
        self._session(run_id).stop()

    def release(self, run_id: str, key: str) -> dict[str, Any]:
        """Release one of a package's paused step gates."""
        session = self._session(run_id)
        session.release(key)
        return {"released": key}

    def wait_finished(self, run_id: str, timeout: float) -> None:
        self._session(run_id).join(timeout)

    def snapshot(self, run_id: str) -> dict[str, Any]:
        session = self._sessions.get(run_id)
        if session is not None:
            return session.snapshot()
        stored = self._stored(run_id)
        latest: dict[str, dict[str, Any]] = {}
        for event in stored["events"]:
            latest.setdefault(event["kind"], {})[event["key"]] = event
        return {**stored["summary"], "live": False, "seq": len(stored["events"]), "latest": latest}

    def events(self, run_id: str, after: int, wait: float = 0.0) -> tuple[list[Any], bool]:
        """The run's events after sequence number ``after`` (waiting up to ``wait`` seconds for
        one), and whether more may come."""
        session = self._sessions.get(run_id)
        if session is not None:
            found: list[ConsoleEvent] = (
                session.wait_for_events(after, wait) if wait else session.events_after(after)
            )
            return [e.model_dump() for e in found], not session.finished
        return self._stored(run_id)["events"][after:], False

    # -- the archive ------------------------------------------------------------------------------

    def _path(self, run_id: str) -> Path:
        if not run_id.replace("-", "").isalnum():
            raise UnknownError(f"no run {run_id!r}")
        return self._archive / f"{run_id}.json"

    def _stored(self, run_id: str) -> dict[str, Any]:
        path = self._path(run_id)
        if not path.is_file():
            raise UnknownError(f"no run {run_id!r}")
        return json.loads(path.read_text())  # type: ignore[no-any-return]

    def _archive_run(self, session: RunSession) -> None:
        snapshot = session.snapshot()
        summary = {k: v for k, v in snapshot.items() if k not in ("latest", "seq", "live")}
        summary["finished"] = True
        events = [e.model_dump() for e in session.all_events()]
        self._archive.mkdir(parents=True, exist_ok=True)
        path = self._path(session.run_id)
        staging = path.with_suffix(".tmp")
        staging.write_text(json.dumps({"summary": summary, "events": events}))
        staging.replace(path)

    def runs(self) -> list[dict[str, Any]]:
        """Every run: the live ones, then the archive, newest first."""
        found: dict[str, dict[str, Any]] = {}
        if self._archive.is_dir():
            for path in self._archive.glob("*.json"):
                try:
                    stored = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
                found[stored["summary"]["run_id"]] = _run_line(stored["summary"], stored["events"])
        for run_id, session in self._sessions.items():
            if run_id not in found:
                snapshot = session.snapshot()
                found[run_id] = _run_line(snapshot, [e.model_dump() for e in session.all_events()])
        return sorted(found.values(), key=lambda r: r["started"], reverse=True)

    def shame(self) -> dict[str, Any]:
        """The Wall of Shame: standing Shame rows by kind and scenario, per run, oldest run first
        (the trend), from every run's read ledger rows."""
        runs = sorted(self.runs(), key=lambda r: r["started"])
        cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * len(runs))
        rows: list[dict[str, Any]] = []
        for position, run in enumerate(runs):
            for row in run["shame_rows"]:
                cells[(row["kind"], run["scenario_id"])][position] += 1
                rows.append({**row, "run_id": run["run_id"], "scenario_id": run["scenario_id"]})
        board = [
            {
                "kind": kind,
                "scenario_id": scenario_id,
                "total": sum(trend),
                "trend": [
                    {"run_id": runs[i]["run_id"], "started": runs[i]["started"], "count": n}
                    for i, n in enumerate(trend)
                    if runs[i]["scenario_id"] == scenario_id
                ],
            }
            for (kind, scenario_id), trend in sorted(cells.items())
        ]
        return {"board": board, "rows": rows, "runs": len(runs)}


def _run_line(summary: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for event in events:
        latest[(event["kind"], event["key"])] = event
    checkpoints = [e["value"] for (kind, _), e in latest.items() if kind == "checkpoint"]
    shame = [
        {
            "kind": e["value"].get("kind"),
            "event_type": e["value"].get("event_type"),
            "subject_id": e["value"].get("subject_id"),
            "detail": e["value"].get("detail"),
            "source": e["source"],
        }
        for (kind, _), e in latest.items()
        if kind == "shame" and e["value"].get("resolution") is None
    ]
    return {
        "run_id": summary["run_id"],
        "scenario_id": summary["scenario_id"],
        "title": summary.get("title", ""),
        "mode": summary.get("mode", ""),
        "status": summary.get("status", ""),
        "started": summary.get("started", ""),
        "checkpoints": [{"id": c["checkpoint_id"], "passed": c["passed"]} for c in checkpoints],
        "shame": dict(Counter(s["kind"] for s in shame)),
        "shame_rows": shame,
        "events": len(events),
    }


def _json(value: Any) -> dict[str, Any]:
    return json.loads(value.model_dump_json())  # type: ignore[no-any-return]


def _is_a_controller(local: LocalController) -> Controller:
    return local  # mypy checks that the local controller keeps the contract


__all__ = ["BusyError", "Controller", "LocalController", "RunFinishedError", "UnknownError"]
