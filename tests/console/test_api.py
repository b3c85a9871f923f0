"""The controller contract through the HTTP API alone (issue #22's acceptance): checkpoint mode
stops at the first checkpoint, a step advances one package, a pause holds a running play-all
within one package, and the event stream carries only reads, each with its source.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import pytest
from console_harness import Console, held, open_gates, packages, summary

from maestro_dev.eval_harness.loader import SCENARIOS, load_scenario

pytestmark = pytest.mark.integration

SOURCES = {
    "message": {"twilio-read"},
    "wo": {"wo-read"},
    "execution": {"sfn-read"},
    "decision": {"ddb-read"},
    "evidence": {"ddb-read"},
    "shame": {"ddb-read"},
    "run": {"ddb-read"},
    "control": {"ddb-read"},
    "step": {"ddb-read"},
    "checkpoint": {"ddb-read"},
    "gate": {"ddb-read"},
    "session": {"ddb-read"},
}


def test_the_catalog_describes_each_scenario(console: Console) -> None:
    scenarios = {s["id"]: s for s in console.ok("GET", "/api/scenarios")["scenarios"]}
    assert set(scenarios) == {p.stem for p in SCENARIOS.glob("*.yaml")}
    leak = scenarios["leak-204"]
    written = load_scenario(SCENARIOS / "leak-204.yaml")
    assert leak["description"] == " ".join(written.description.split())
    assert {p["id"] for p in leak["parties"]} == {p.id for p in written.world.parties}
    assert [c["id"] for c in leak["checkpoints"]] == [c.id for c in written.checkpoints]
    (first, *_) = leak["checkpoints"]
    assert first["packages"] == written.checkpoints[0].expect.packages == 1
    assert first["after"] == written.checkpoints[0].after


def test_checkpoint_mode_stops_at_its_first_checkpoint(console: Console) -> None:
    run_id = console.start("leak-204", "checkpoint")
    snapshot = console.wait(run_id, held, "held")
    (gate,) = open_gates(snapshot)
    assert (gate["gate"], gate["index"]) == ("after the checkpoint", 1)
    graded = snapshot["latest"]["checkpoint"].values()
    first = load_scenario(SCENARIOS / "leak-204.yaml").checkpoints[0]
    assert {g["value"]["after"] for g in graded} == {first.after}  # nothing after it graded
    assert all(g["value"]["passed"] for g in graded), [g["value"]["reason"] for g in graded]
    time.sleep(0.3)  # held: nothing moves while the gate waits
    assert console.snapshot(run_id)["seq"] == console.snapshot(run_id)["seq"]
    assert held(console.snapshot(run_id))
    done = console.finish(run_id)
    assert done["status"] == "passed", summary(done)


@pytest.mark.slow
def test_step_advances_one_package(console: Console) -> None:
    run_id = console.start("two-leaks-clarify", "step")
    first = console.wait(run_id, held, "held before the first step")
    assert [(g["gate"], g["index"]) for g in open_gates(first)] == [("before the step", 0)]
    assert packages(first) == 0
    control = console.ok("POST", f"/api/runs/{run_id}/step")
    assert control["step_until"] == 1
    # The text (no package) and its idle flush (one) run; the run holds once the package is in.
    one = console.wait(run_id, lambda s: held(s) and packages(s) == 1, "held after a package")
    assert [(g["gate"], g["index"]) for g in open_gates(one)] == [("after the checkpoint", 1)]
    assert "002" not in one["latest"]["step"]  # the next text is not sent
    console.ok("POST", f"/api/runs/{run_id}/step")
    two = console.wait(run_id, lambda s: held(s) and packages(s) == 2, "held after another")
    assert [(g["gate"], g["index"]) for g in open_gates(two)] == [("after the checkpoint", 3)]
    done = console.finish(run_id)
    assert done["status"] == "passed", summary(done)


@pytest.mark.slow
def test_pause_holds_a_running_play_all_within_one_package(console: Console) -> None:
    run_id = console.start("cancel-loop", "all")
    running = console.wait(run_id, lambda s: packages(s) >= 1, "a first package")
    assert not open_gates(running)  # play-all: it never held on its own
    console.ok("POST", f"/api/runs/{run_id}/pause")
    before = packages(console.snapshot(run_id))  # at most this many once the pause is in
    paused = console.wait(run_id, held, "held after the pause")
    assert packages(paused) <= before + 1, summary(paused)
    assert len(paused["latest"]["step"]) < 12, "the pause came too late to hold anything"
    time.sleep(0.5)
    still = console.snapshot(run_id)
    assert packages(still) == packages(paused)
    assert held(still)
    console.ok("POST", f"/api/runs/{run_id}/stop")  # the rest of it proves nothing more
    console.controller.wait_finished(run_id, 30)
    assert console.snapshot(run_id)["status"] == "stopped"


def read_stream(console: Console, run_id: str) -> list[dict[str, object]]:
    request = urllib.request.Request(
        f"{console.server.base}/api/runs/{run_id}/events",
        headers={"Authorization": f"Bearer {console.server.token}"},
    )
    events: list[dict[str, object]] = []
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = ""
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "read":
                events.append(json.loads(line[6:]))
            elif line.startswith("data: ") and kind == "end":
                return events
    raise AssertionError("the stream ended without its end event")


def test_the_stream_carries_only_reads_each_with_its_source(
    console: Console, lying_run: tuple[str, list[str]]
) -> None:
    run_id, lies = lying_run
    events = read_stream(console, run_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for event in events:
        assert event["source"] in SOURCES[str(event["kind"])], event
    kinds = {e["kind"] for e in events}
    assert {"wo", "decision", "execution", "shame", "checkpoint"} <= kinds
    # The liar's SIDs were claimed (the outcome names them) but no read found them: no message
    # with them is shown, and each stands as shame.
    shown = {e["key"] for e in events if e["kind"] == "message"}
    assert not shown & set(lies)
    shamed = {e["value"]["subject_id"] for e in events if e["kind"] == "shame"}  # type: ignore[index]
    assert set(lies) <= shamed
    # A reconnect goes on from where it was: Last-Event-ID.
    request = urllib.request.Request(
        f"{console.server.base}/api/runs/{run_id}/events",
        headers={
            "Authorization": f"Bearer {console.server.token}",
            "Last-Event-ID": str(len(events) - 2),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read().decode()
    assert body.count("event: read") == 2


def test_the_wall_of_shame_counts_the_liars_rows(
    console: Console, lying_run: tuple[str, list[str]]
) -> None:
    run_id, lies = lying_run
    board = console.ok("GET", "/api/shame")
    row = next(
        b
        for b in board["board"]
        if (b["kind"], b["scenario_id"]) == ("unverified_claim", "leak-204")
    )
    assert row["total"] >= len(lies)
    assert any(t["run_id"] == run_id and t["count"] >= len(lies) for t in row["trend"])
    runs = {r["run_id"]: r for r in console.ok("GET", "/api/runs")["runs"]}
    assert runs[run_id]["status"] == "failed"


def test_the_console_answers_only_its_own_page(console: Console) -> None:
    port = console.server.port
    assert console.call("GET", "/api/scenarios", token=False)[0] == 401
    wrong = {"Authorization": "Bearer " + "0" * 64}
    assert console.call("GET", "/api/scenarios", headers=wrong, token=False)[0] == 401
    rebound = {"Host": f"attacker.example:{port}"}
    assert console.call("GET", "/api/scenarios", headers=rebound)[0] == 403
    foreign = {"Origin": "http://attacker.example"}
    assert console.call("POST", "/api/runs", {"scenario": "leak-204"}, foreign)[0] == 403
    cross = {"Sec-Fetch-Site": "cross-site"}
    assert console.call("POST", "/api/runs", {"scenario": "leak-204"}, cross)[0] == 403
    assert console.call("POST", "/api/runs", {"scenario": "no-such", "mode": "all"})[0] == 404
    assert console.call("POST", "/api/runs", {"scenario": "leak-204", "mode": "fast"})[0] == 400
    assert console.call("GET", "/api/runs/no-such-run")[0] == 404

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirected:
        opener.open(console.server.url, timeout=10)  # the token URL: a redirect, not a page
    assert redirected.value.code == 303
    assert redirected.value.headers["location"] == "/"
    cookie = redirected.value.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    status, _ = console.call(
        "GET", "/api/scenarios", headers={"Cookie": cookie.split(";")[0]}, token=False
    )
    assert status == 200


def open_package_gates(snapshot: dict[str, object]) -> dict[str, dict[str, object]]:
    gates = snapshot["latest"].get("package_gate", {}).values()  # type: ignore[attr-defined]
    return {g["key"]: g["value"] for g in gates if g["value"]["status"] == "open"}


def test_with_package_gates_a_package_holds_at_each_of_its_gates(console: Console) -> None:
    assert (
        console.call("POST", "/api/runs", {"scenario": "leak-204", "package_gates": True})[0] == 400
    )  # only with step mode
    run_id = console.ok(
        "POST", "/api/runs", {"scenario": "leak-204", "mode": "step", "package_gates": True}
    )["run_id"]
    console.wait(run_id, held, "held before the first step")
    console.ok("POST", f"/api/runs/{run_id}/step")
    released: list[str] = []
    for turn in range(6):  # the package's gates, one at a time, then the checkpoint's
        snapshot = console.wait(
            run_id,
            lambda s: bool(open_package_gates(s)) or (held(s) and packages(s) == 1),
            "a package gate or the checkpoint",
        )
        gates = open_package_gates(snapshot)
        if not gates:
            break
        ((key, gate),) = gates.items()

        def at_its_gate(s: dict[str, Any], package_id: object = gate["package_id"]) -> bool:
            # The gate row and the execution are read apart (each read is its own event): the
            # execution's read may come a poll after the row's, never without the gate state.
            return any(
                e["value"]["name"] == package_id
                and any(state.startswith("Step gate") for state in e["value"]["current"])
                for e in s["latest"].get("execution", {}).values()
            )

        console.wait(run_id, at_its_gate, "the execution read at its step gate")
        time.sleep(0.3)  # held: the package does not move while its gate waits
        assert open_package_gates(console.snapshot(run_id)) == gates
        if turn % 2:
            console.ok("POST", f"/api/runs/{run_id}/step")  # step: the next gate, in a package
        else:
            console.ok("POST", f"/api/runs/{run_id}/release", {"gate": key})
        console.wait(run_id, lambda s, k=key: k not in open_package_gates(s), "released")
        released.append(gate["gate"])  # type: ignore[arg-type]
    assert "before the brain" in released
    assert "before the action" in released
    assert [(g["gate"], g["index"]) for g in open_gates(console.snapshot(run_id))] == [
        ("after the checkpoint", 1)
    ]
    done = console.finish(run_id)
    assert done["status"] == "passed", summary(done)
