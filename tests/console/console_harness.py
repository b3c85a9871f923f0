"""The console's tests' client: HTTP calls with the run's token, waits on snapshots."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from maestro_dev.console.controller import LocalController
from maestro_dev.console.server import ConsoleServer

RUN_TIMEOUT = 60.0


@dataclass
class Console:
    server: ConsoleServer
    controller: LocalController

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        token: bool = True,
    ) -> tuple[int, Any]:
        sent = {"content-type": "application/json"} if body is not None else {}
        if token:
            sent["Authorization"] = f"Bearer {self.server.token}"
        sent.update(headers or {})
        request = urllib.request.Request(
            self.server.base + path,
            method=method,
            headers=sent,
            data=json.dumps(body).encode() if body is not None else None,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read().decode()
                status = response.status
        except urllib.error.HTTPError as error:
            raw, status = error.read().decode(), error.code
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = self.call(method, path, body)
        assert status in (200, 201), (status, answer)
        return answer

    def start(self, scenario: str, mode: str) -> str:
        return str(self.ok("POST", "/api/runs", {"scenario": scenario, "mode": mode})["run_id"])

    def snapshot(self, run_id: str) -> dict[str, Any]:
        return dict(self.ok("GET", f"/api/runs/{run_id}"))

    def wait(
        self, run_id: str, until: Callable[[dict[str, Any]], bool], what: str
    ) -> dict[str, Any]:
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            snapshot = self.snapshot(run_id)
            if until(snapshot):
                return snapshot
            assert snapshot["status"] not in ("error",), snapshot["error"]
            assert time.monotonic() < deadline, f"{what}: never; last {summary(snapshot)}"
            time.sleep(0.1)

    def finish(self, run_id: str) -> dict[str, Any]:
        """Let the run go to its end (play), and wait for it."""
        status, _ = self.call("POST", f"/api/runs/{run_id}/resume", {"mode": "all"})
        assert status in (200, 409)
        self.controller.wait_finished(run_id, RUN_TIMEOUT)
        return self.snapshot(run_id)


def open_gates(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    gates = snapshot["latest"].get("gate", {}).values()
    return [g["value"] for g in gates if g["value"]["status"] == "open"]


def held(snapshot: dict[str, Any]) -> bool:
    return snapshot["status"] == "held" and bool(open_gates(snapshot))


def packages(snapshot: dict[str, Any]) -> int:
    steps = snapshot["latest"].get("step", {}).values()
    return sum(len(s["value"]["packages"]) for s in steps)


def summary(snapshot: dict[str, Any]) -> str:
    return f"status={snapshot['status']} gates={open_gates(snapshot)} packages={packages(snapshot)}"
