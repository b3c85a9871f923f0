"""`maestro demo`: the leak-204 story (seed ADR-0059) end to end on the embedded stack.

Maria texts the maintenance line; every text goes through the real signed webhook, the
conversation buffer, the debounce flusher and the package pipeline (the same ASL the cloud
runs) with the offline brain. Her leak opens a work order, whose own execution (the work
order machine, docs/dispatch.md) asks her what a plumber needs, offers the job to Vic, and, when
Vic answers "1", assigns it and tells Maria he is coming. What is printed is read back from the
stack: the executions' input, output and history, the stores, the events queue, each text as
Twilio reports it (the loopback Twilio, read by SID through the twilio SDK), and the ledger the
watcher wrote: the evidence behind each claim, and any shame.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.domain.dispatch import run_package_id
from maestro.domain.ledger import LedgerRow
from maestro.domain.models import Party
from maestro.ports.evidence import MessageRead
from maestro_dev.core_demo import action_label
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, PAULA, VIC, seed

STORY: tuple[tuple[str, Party, str], ...] = (
    ("a new problem", MARIA, "hi, water is leaking under my kitchen sink"),
    (
        "the access reply (the trap: WO-198 has a rating request out)",
        MARIA,
        "fine to come in, 2 onward",
    ),
    ("Vic answers the offer", VIC, "1"),
    ("a rating, now that one is asked for", MARIA, "5 stars for the tap fix btw"),
    ("a gas leak mid-conversation", MARIA, "wait. I smell gas in the hallway"),
    ("thanks", MARIA, "thanks!"),
)
"""(what the step shows, who texts, the text): each its own package."""
TRAPS: dict[str, str] = {STORY[1][0]: "WO-198"}
"""A step's title → the work order a careless reading binds it to: "2 onward" read as a 2-star
rating of WO-198, whose rating request is out. The demo says whether any action touched it."""
NAMES = {MARIA.phone: "Maria", VIC.phone: "Vic", PAULA.phone: "Paula (PM)"}


@dataclass
class WorkOrderReport:
    """A work order's own execution (the work order machine), read back like a package's."""

    wo_id: str
    execution_arn: str
    status: str
    states: list[str]
    step: str
    offers: list[str]
    outcome: str
    ledger: list[LedgerRow] = field(default_factory=list)


@dataclass
class PackageReport:
    title: str
    sender: str
    texts: list[str]
    package_id: str
    trigger: str
    status: str
    route: str
    brain: str | None
    samples: list[str]
    consensus: str | None
    actions: list[dict[str, Any]]
    effects: list[str]
    states: list[str]
    transitions: int
    decisions: int
    ledger: list[LedgerRow] = field(default_factory=list)
    trap: str | None = None
    """The work order this package must not touch (:data:`TRAPS`), if its step sets a trap."""

    @property
    def trap_sprung(self) -> bool:
        return self.trap is not None and any(a["target_wo_id"] == self.trap for a in self.actions)


@dataclass
class DemoReport:
    brain: str
    packages: list[PackageReport] = field(default_factory=list)
    work_orders: list[WorkOrderReport] = field(default_factory=list)
    events: Counter[str] = field(default_factory=Counter)
    texts: list[MessageRead] = field(default_factory=list)
    ledger: list[LedgerRow] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def evidence(self) -> int:
        return sum(row.verdict == "evidence" for row in self.ledger)

    @property
    def shame(self) -> int:
        """Shame that stands (a missing_event row its late event resolved is history)."""
        return sum(row.standing_shame for row in self.ledger)

    def as_json(self) -> dict[str, Any]:
        return {
            "brain": self.brain,
            "stack": "embedded: moto Step Functions, statemachines/package_pipeline.asl.json",
            "packages": len(self.packages),
            "actions": [
                {"package_id": p.package_id, "lane": a["lane"], "target_wo_id": a["target_wo_id"]}
                for p in self.packages
                for a in p.actions
            ],
            "transitions_per_package": {p.package_id: p.transitions for p in self.packages},
            "work_orders": [
                {
                    "wo_id": w.wo_id,
                    "status": w.status,
                    "step": w.step,
                    "offers": w.offers,
                    "states": w.states,
                }
                for w in self.work_orders
            ],
            "routes": {p.package_id: p.route for p in self.packages},
            "traps": {
                p.package_id: {"wo_id": p.trap, "sprung": p.trap_sprung}
                for p in self.packages
                if p.trap
            },
            "events": dict(self.events),
            "texts": [
                {
                    "sid": t.sid,
                    "to": t.to,
                    "status": t.status,
                    "read": t.provenance,
                    "body": t.body,
                }
                for t in self.texts
            ],
            "evidence": self.evidence,
            "shame": self.shame,
            "shame_rows": [
                {"kind": r.kind, "event_type": r.event_type, "detail": r.detail}
                for r in self.ledger
                if r.standing_shame
            ],
            "wall_seconds": round(self.wall_seconds, 3),
        }


SWEEP_AFTER_SECONDS = 11 * 60
"""Virtual time the demo waits after its last text: past the sweeper's 10-minute window."""


def _label(action: dict[str, Any]) -> str:
    return action_label(action["lane"], action.get("target_wo_id"))


def run_demo() -> DemoReport:
    started = time.perf_counter()
    sids = count(1)
    with LocalStack(model="env") as stack:
        seed(stack)
        report = DemoReport(brain=stack.pipeline.deps.models.describe())
        for title, sender, body in STORY:
            before = {e["executionArn"] for e in stack.executions()}
            sid = twilio_sid("SM", f"demo {next(sids)}")
            response = stack.http(signed_sms_event(stack.twilio_token, sid, sender.phone, body))
            if response["statusCode"] != 200:
                raise RuntimeError(f"the webhook refused the demo's own text: {response}")
            stack.advance(stack.idle + 1)
            for execution in stack.executions():
                if execution["executionArn"] in before:
                    continue
                package = _package_report(stack, execution["executionArn"], title, sender)
                package.trap = TRAPS.get(title)
                report.packages.append(package)
        report.events.update(
            json.loads(e["detail"])["type"] if isinstance(e["detail"], str) else e["detail"]["type"]
            for e in stack.domain_events()
        )
        # Let Twilio deliver, the watcher read every claim, and the sweeper look for effects
        # no event claimed (its window is 10 virtual minutes).
        stack.advance(SWEEP_AFTER_SECONDS)
        stack.sweep()
        report.ledger = stack.ledger_rows()
        for package in report.packages:
            package.ledger = [r for r in report.ledger if r.package_id == package.package_id]
        report.work_orders = _work_order_reports(stack, report.ledger)
        reader = stack.watcher.deps.messages
        for sent in stack.outbox():
            read = reader.read(sent.sid)
            if read is None:
                raise RuntimeError(f"Twilio has no message {sent.sid}, which the stack sent")
            report.texts.append(read)
    report.wall_seconds = time.perf_counter() - started
    return report


def _work_order_reports(stack: LocalStack, ledger: list[LedgerRow]) -> list[WorkOrderReport]:
    """Each work order execution: its history's states, and its run as the dispatch store has
    it; the ledger's rows for the run's claims."""
    runs = DynamoDispatchStore(stack.ddb, stack.tables["dispatch"])
    reports = []
    for execution in stack.wo_executions():
        arn = execution["executionArn"]
        wo_id = execution["name"]
        run = runs.get(wo_id)
        reports.append(
            WorkOrderReport(
                wo_id=wo_id,
                execution_arn=arn,
                status=stack.sfn.describe_execution(executionArn=arn)["status"],
                states=stack.states_entered(arn),
                step=run.step if run else "-",
                offers=[f"{o.vendor_id}: {o.outcome}" for o in run.offers] if run else [],
                outcome=run.outcome if run else "",
                ledger=[r for r in ledger if r.package_id == run_package_id(wo_id)],
            )
        )
    return reports


def _package_report(stack: LocalStack, arn: str, title: str, sender: Party) -> PackageReport:
    described = stack.sfn.describe_execution(executionArn=arn)
    data = json.loads(described["input"])
    out = json.loads(described.get("output") or "{}")
    history = stack.history(arn)
    states = [
        e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
    ]
    brain = out.get("brain") or {}
    samples = []
    for sample in brain.get("samples", []):
        if sample.get("actions"):
            samples.append("; ".join(_label(a) for a in sample["actions"]))
        else:
            samples.append(f"FAILED {sample.get('failure')}")
    consensus = brain.get("consensus")
    # An emergency is disposed and acted on before the lease: its queue is under "escalated".
    ran = out.get("escalated") or out
    actions = [q["action"] for q in (ran.get("disposal") or {}).get("actions", [])]
    effects = []
    for outcome in ran.get("effects") or []:
        made = f" → {outcome['created_wo_id']}" if outcome.get("created_wo_id") else ""
        effects.append(
            f"{outcome['lane']} {outcome['status']}{made}: "
            + ", ".join(e["type"] for e in outcome.get("events", []))
        )
    return PackageReport(
        title=title,
        sender=NAMES.get(sender.phone, sender.party_id),
        texts=[m["body"] for m in data["package"]["messages"]],
        package_id=data["package_id"],
        trigger=data["package"]["trigger"],
        status=described["status"],
        route=(out.get("precheck") or {}).get("route", "?"),
        brain=brain.get("brain"),
        samples=samples,
        consensus=(
            f"{consensus['status']} ({consensus['reason']}), "
            f"entropy {consensus['entropy_bits']:.2f} bits"
            if consensus
            else None
        ),
        actions=[{"lane": a["lane"], "target_wo_id": a.get("target_wo_id")} for a in actions],
        effects=effects,
        states=states,
        transitions=len(states),
        decisions=(out.get("persisted") or {}).get("decisions", 0),
    )


STATES_WIDTH = 100
"""The widest a line of states entered runs before the next state starts a new line."""


def _ledger_line(row: LedgerRow) -> str:
    """One ledger row: the verdict, the claim, and what was read (its subject named once: a
    detail that names it already is not preceded by it)."""
    read = f" [{row.provenance}]" if row.provenance else ""
    subject = "" if row.subject_id in row.detail else f" {row.subject_id}"
    return f"{row.mark}: {row.event_type}{subject}{read}: {row.detail}"


def _states_lines(head: str, states: list[str], indent: str) -> list[str]:
    """``head`` and the states joined by arrows, a state never split across lines."""
    lines, line = [], f"{head} ({len(states)}):"
    for n, state in enumerate(states):
        piece = state if n == 0 else f"→ {state}"
        if len(line) + 1 + len(piece) > STATES_WIDTH and line.strip():
            lines.append(line)
            line = indent + "  " + piece
        else:
            line += " " + piece
    lines.append(line)
    return lines


def _trap_line(p: PackageReport) -> str:
    took = ", ".join(_label(a) for a in p.actions) or "no action"
    if p.trap_sprung:
        return f"  the trap SPRUNG: {took} touched {p.trap}"
    return f"  the trap avoided: {took}; nothing touched {p.trap}"


def render(report: DemoReport) -> str:
    lines = [
        "maestro demo: leak-204 on the embedded stack (moto Step Functions running the same ASL",
        f"the cloud deploys). Brain: {report.brain}.",
        "Texts go through the twilio SDK to a loopback Twilio on this machine (no SMS leaves it);",
        "the watcher reads every claim back.",
    ]
    for n, p in enumerate(report.packages, start=1):
        lines.append("")
        lines.append(f"[{n}] {p.title}")
        for text in p.texts:
            lines.append(f"  {p.sender}: \u201c{text}\u201d")
        lines.append(f"  package {p.package_id} (trigger {p.trigger}) → execution {p.status}")
        lines.append(f"  pre-check route: {p.route}")
        if p.brain:
            lines.append(f"  brain: {p.brain}")
            for i, sample in enumerate(p.samples):
                lines.append(f"    sample {i}: {sample}")
            lines.append(f"  consensus: {p.consensus}")
        lines.append("  action queue: " + (", ".join(_label(a) for a in p.actions) or "(none)"))
        for effect in p.effects:
            lines.append(f"    effect: {effect}")
        if p.trap:
            lines.append(_trap_line(p))
        lines.append(f"  decisions recorded: {p.decisions}")
        lines.extend(_states_lines("  states entered", p.states, "  "))
        for row in p.ledger:
            lines.append("    " + _ledger_line(row))
    for w in report.work_orders:
        lines.append("")
        lines.append(
            f"work order {w.wo_id}: its own execution (statemachines/work_order.asl.json) "
            f"→ {w.status}, dispatch {w.step}"
        )
        lines.append(f"  offers: {'; '.join(w.offers) or '(none)'}. {w.outcome}")
        lines.extend(_states_lines("  states entered", w.states, "  "))
        for row in w.ledger:
            lines.append("    " + _ledger_line(row))
    lines.append("")
    lines.append(
        "texts as Twilio reports them now (GET Messages/{sid}.json through the twilio SDK; the"
    )
    lines.append("evidence above gives each text's status when the watcher read it):")
    for read in report.texts:
        who = NAMES.get(read.to, read.to)
        lines.append(f"  {read.sid} {read.status:<9} to {who}: {read.body}")
    lines.append("")
    lines.append(
        f"ledger: {report.evidence} claims with evidence, {report.shame} shame "
        "(`maestro ledger` lists the rows of a running `maestro serve`)"
    )
    lines.append("")
    events = ", ".join(f"{k} ×{v}" for k, v in sorted(report.events.items()))
    lines.append(f"domain events on the bus (→ SQS, for the watcher): {events}")
    lines.append(f"{len(report.packages)} packages in {report.wall_seconds:.2f} s of wall time.")
    return "\n".join(lines)
