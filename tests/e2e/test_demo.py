"""`maestro demo` end to end: the leak-204 story on the embedded stack.

It runs once for the module, as `make demo` leaves it on a fresh clone: in a fresh interpreter
where every module of a distribution outside the runtime and the `demo` extra fails to import
(as pyproject.toml and the installed metadata say; issue #23), through the `maestro` script's
`demo --json`. An import of CDK, matplotlib, the console's server or a test tool on the demo's
path fails every test here. The child also keeps the report it printed, so the tests read the
rendered text from the same run.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from project_extras import (
    ROOT,
    base_requirements,
    extra_requirements,
    installed_closure,
    modules_outside,
)

from maestro_dev.local.stack_demo import STATES_WIDTH, DemoReport, render

pytestmark = pytest.mark.integration

# Runs in the child: every blocked top-level module fails to import, then the `maestro` script,
# with the demo's report kept (pickled) beside the JSON it prints.
CHILD = """
import importlib.abc, json, pickle, sys

BLOCKED = frozenset(json.loads(sys.argv[1]))


class NotInstalledByMakeDemo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{name!r} is not in the demo extra", name=name)
        return None


sys.meta_path.insert(0, NotInstalledByMakeDemo())
import maestro_dev.local.server  # `maestro serve`'s, the quickstart's next step
import maestro_dev.local.stack_demo as stack_demo
from maestro_dev.script import main

run_demo = stack_demo.run_demo


def kept():
    report = run_demo()
    with open(sys.argv[2], "wb") as kept_report:
        pickle.dump(report, kept_report)
    return report


stack_demo.run_demo = kept
sys.exit(main(["demo", "--json"]))
"""


@pytest.fixture(scope="module")
def blocked() -> frozenset[str]:
    return frozenset(
        modules_outside(installed_closure([*base_requirements(), *extra_requirements("demo")]))
    )


@pytest.fixture(scope="module")
def run(
    blocked: frozenset[str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, DemoReport]:
    kept = tmp_path_factory.mktemp("demo") / "report.pickle"
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}  # the offline brain
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(sorted(blocked)), str(kept)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    report: DemoReport = pickle.loads(Path(kept).read_bytes())
    return json.loads(result.stdout), report


@pytest.fixture(scope="module")
def report(run: tuple[Any, DemoReport]) -> DemoReport:
    return run[1]


@pytest.fixture(scope="module")
def demo(run: tuple[Any, DemoReport]) -> dict[str, object]:
    printed: dict[str, object] = run[0]  # what `maestro demo --json` printed
    return printed


@pytest.fixture(scope="module")
def text(report: DemoReport) -> str:
    return render(report)


def test_the_demo_ran_with_only_what_make_demo_installs(
    blocked: frozenset[str], demo: dict[str, object], report: DemoReport
) -> None:
    # The check has teeth: what the first run leaves out is installed here, and was blocked.
    assert {"aws_cdk", "cfnlint", "matplotlib", "sklearn", "starlette", "pytest"} <= blocked
    assert demo["packages"] == 6
    assert demo["shame"] == 0
    assert json.loads(json.dumps(report.as_json())) == demo  # the kept report is the printed one


def test_demo_names_its_brain_and_reports_the_contract_fields(demo: dict[str, object]) -> None:
    assert demo["brain"] == "offline brain (deterministic rules, no model)"
    assert {
        "packages",
        "actions",
        "transitions_per_package",
        "evidence",
        "shame",
        "wall_seconds",
    } <= set(demo)
    assert demo["packages"] == 6


def test_demo_tells_the_leak_204_story(demo: dict[str, object]) -> None:
    lanes = [(a["lane"], a["target_wo_id"]) for a in demo["actions"]]  # type: ignore[attr-defined]
    created = lanes[0]
    assert created == ("create_wo", None)
    # The access reply answers the new WO's gather question; it is not taken for a 2-star
    # rating of WO-198.
    assert lanes[1][0] == "schedule_visit"
    assert lanes[1][1] != "WO-198"
    wo_id = lanes[1][1]
    # Vic's "1" answers his open offer of that WO, deterministically: no brain, no new problem.
    assert lanes[2] == ("answer_wait", wo_id)
    assert lanes[3] == ("record_rating", "WO-198")
    assert lanes[4] == ("escalate", None)
    assert lanes[5] == ("continue_with_assistant", None)
    assert demo["routes"] == dict(  # type: ignore[comparison-overlap]
        zip(
            demo["transitions_per_package"],
            ["reasoning"] * 4 + ["escalate", "handback"],  # type: ignore[call-overload]
            strict=True,
        )
    )


def test_the_leak_goes_to_vic_who_takes_it_and_maria_is_told(demo: dict[str, object]) -> None:
    (wo,) = demo["work_orders"]  # type: ignore[misc]
    assert (wo["status"], wo["step"], wo["offers"]) == (
        "SUCCEEDED",
        "assigned",
        ["vendor-vic: accepted"],
    )
    assert "Dispatch: offer to vendor 1 of 3" in wo["states"]
    assert wo["states"][-1] == "Assigned: a vendor accepted"
    bodies = [t["body"] for t in demo["texts"]]  # type: ignore[attr-defined]
    offer = next(b for b in bodies if "Reply 1 to accept" in b)
    assert "fine to come in" not in offer  # access details only once he has accepted
    access = next(b for b in bodies if b.startswith(f"{wo['wo_id']} is yours"))
    assert "fine to come in, 2 onward" in access  # her own words, not only the times read
    assert any("Vic" in b and "accepted" in b and wo["wo_id"] in b for b in bodies)


def test_every_package_reaches_the_bus(demo: dict[str, object]) -> None:
    events = demo["events"]
    assert events["decision.recorded"] == 6  # type: ignore[index]
    assert events["wo.created"] == 1  # type: ignore[index]
    assert events["escalation.paged"] == 1  # type: ignore[index]


def test_every_claim_of_the_demo_has_evidence_and_there_is_no_shame(
    demo: dict[str, object],
) -> None:
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    # One ledger row per event the watcher read back: every one of them evidence.
    assert demo["evidence"] == sum(events.values()) > 0
    assert demo["shame"] == 0, demo["shame_rows"]


def test_the_demo_shows_each_text_as_twilio_reports_it(demo: dict[str, object]) -> None:
    texts: list[dict[str, str]] = demo["texts"]  # type: ignore[assignment]
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    assert len(texts) == events["message.sent"]
    for text in texts:
        # A Twilio SID, read from Twilio's Messages API (not the recording messenger's table),
        # after the loopback moved it on to delivered.
        assert text["sid"].startswith("SM"), text
        assert not text["sid"].startswith("SMrec"), text
        assert (text["read"], text["status"]) == ("twilio-read", "delivered"), text


def test_the_states_entered_wrap_and_never_split_a_state(text: str, report: DemoReport) -> None:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("  states entered ("):
            blocks.append([line])
        elif blocks and line.startswith("    → "):
            blocks[-1].append(line)
    assert len(blocks) == len(report.packages) + len(report.work_orders)
    expected = [p.states for p in report.packages] + [w.states for w in report.work_orders]
    for lines, states in zip(blocks, expected, strict=True):
        assert all(len(line) <= STATES_WIDTH for line in lines), lines
        assert len(lines) > 1  # twelve states do not fit one line
        head, listed = " ".join(line.strip() for line in lines).split(": ", 1)
        assert head == f"states entered ({len(states)})"
        assert listed.split(" → ") == states  # each whole, in order


def test_each_evidence_line_names_its_subject_once(text: str) -> None:
    lines = [line for line in text.splitlines() if line.strip().startswith("evidence:")]
    assert len(lines) >= 20
    for line in lines:
        for sid in set(re.findall(r"\bSM[0-9a-f]{32}\b", line)):
            assert line.count(sid) == 1, line
        for wo in set(re.findall(r"\bWO-[0-9A-F]+\b", line)):
            assert line.count(wo) <= 2, line  # a detail may name a WO and its entry


def test_an_action_without_a_target_is_named_by_its_lane(text: str) -> None:
    assert "(-)" not in text
    assert "action queue: create_wo\n" in text
    assert "action queue: escalate\n" in text


def test_consensus_says_how_many_samples_agreed_on_what(text: str) -> None:
    consensus = [line for line in text.splitlines() if line.strip().startswith("consensus:")]
    assert consensus
    samples_before: list[int] = []
    count = 0
    for line in text.splitlines():
        if re.match(r"\s+sample \d+:", line):
            count += 1
        elif line.strip().startswith("consensus:"):
            samples_before.append(count)
            count = 0
    for line, drawn in zip(consensus, samples_before, strict=True):
        assert "reading(s)" not in line
        assert re.search(rf"\b{drawn} of {drawn} samples? agreed on \w+", line), line


def test_the_texts_status_is_told_as_read_then_as_twilio_has_it_now(text: str) -> None:
    evidence = [line for line in text.splitlines() if "[twilio-read]" in line]
    assert evidence
    for line in evidence:
        assert re.search(r", (queued|sent|delivered) when read", line), line
    listing = text.split("texts as Twilio reports them now", 1)[1]
    assert "status when the watcher read it" in listing
    assert " delivered to Maria:" in listing


def test_the_trap_is_said_to_be_avoided(text: str, demo: dict[str, object]) -> None:
    step = text.split("[2] ", 1)[1].split("\n[3] ", 1)[0]
    assert "the trap" in step.splitlines()[0]
    (avoided,) = [line for line in step.splitlines() if "trap avoided" in line]
    assert "nothing touched WO-198" in avoided
    assert "schedule_visit(WO-" in avoided
    assert list(demo["traps"].values()) == [  # type: ignore[attr-defined]
        {"wo_id": "WO-198", "sprung": False}
    ]
