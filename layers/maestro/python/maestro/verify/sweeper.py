"""The sweeper: an effect whose event never came is a lie of omission (``missing_event``).

On a schedule, it takes every package completed between ``lookback`` and ``window`` ago (the
window gives the watcher time to read every claim), and for each compares what the decision log
says was written with what the watcher saw:

- every effect an action's outcome record names (a message sent, a WO created, a timeline entry
  appended, a hold made or released, a question asked, a page) must have had its event, of
  that decision, for that subject: the watcher's rows are the ``events_seen`` record;
- a package that persist completed must have announced ``decision.recorded``;
- a package that failed open must have had an event for each text fail-open sent itself (the
  completion line names them: fail-open completes the record before its events go).

What is missing becomes a Shame row, once (its id is deterministic), so sweeping the same
package again writes nothing new. The effects come from the record the writing code made, apart
from the events that claim them: a lane that forgets its event, or a publish that drops one, is
found here. An event that comes late resolves its row (the watcher does; the row stays, marked):
and as the watcher looks for a missing_event row after writing its own, the sweeper looks for
the watcher's rows again after writing, so an event read meanwhile resolves it at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from maestro.domain.events import EventType
from maestro.domain.ledger import LedgerRow, missing_event_row_id
from maestro.domain.records import PackageCompletion, fallback_decision_id
from maestro.observability import count
from maestro.ports import Clock, DecisionLog, Ledger

__all__ = ["SweepReport", "Sweeper", "SweeperDeps"]

_WO_EVENTS = frozenset({"wo.created", "wo.updated", "rating.recorded"})


@dataclass
class SweeperDeps:
    decisions: DecisionLog
    ledger: Ledger
    clock: Clock
    window: timedelta = timedelta(minutes=10)
    lookback: timedelta = timedelta(hours=1)


@dataclass
class SweepReport:
    packages: int = 0
    expected: int = 0
    missing: list[LedgerRow] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)  # missing rows their event resolved at once

    def as_dict(self) -> dict[str, object]:
        return {
            "packages": self.packages,
            "expected": self.expected,
            "missing": [row.row_id for row in self.missing],
            "resolved": self.resolved,
        }


class Sweeper:
    def __init__(self, deps: SweeperDeps) -> None:
        self.deps = deps

    def sweep(self) -> SweepReport:
        """Every package completed in [now - window - lookback, now - window)."""
        now = self.deps.clock.now()
        end = now - self.deps.window
        report = SweepReport()
        for completion in self.deps.decisions.completed_between(end - self.deps.lookback, end):
            report.packages += 1
            self._sweep_package(completion, now, report)
        return report

    def _sweep_package(
        self, completion: PackageCompletion, now: datetime, report: SweepReport
    ) -> None:
        package_id = completion.package_id
        seen = {
            (row.decision_id, row.event_type, row.subject_id)
            for row in self.deps.ledger.for_package(package_id)
            if row.event_id is not None  # the watcher's rows: an event came
        }
        expected: list[tuple[str | None, EventType, str, str | None, str]] = []
        for outcome in self.deps.decisions.outcomes_for(package_id):
            target = outcome.created_wo_id or outcome.target_wo_id
            for effect in outcome.effects:
                wo_id = effect.subject_id if effect.event in _WO_EVENTS else target
                what = f"{outcome.lane.value} ({outcome.status}) wrote it"
                expected.append((outcome.decision_id, effect.event, effect.subject_id, wo_id, what))
        if completion.completed_by == "persist":
            expected.append(
                (None, "decision.recorded", package_id, None, "persist completed the package")
            )
        fallback = fallback_decision_id(package_id)
        for effect in completion.effects:  # fail-open's own texts
            expected.append((fallback, effect.event, effect.subject_id, None, "fail-open wrote it"))
        written: list[LedgerRow] = []
        for decision_id, event, subject_id, wo_id, what in expected:
            report.expected += 1
            if (decision_id, event, subject_id) in seen:
                continue
            row = LedgerRow(
                row_id=missing_event_row_id(decision_id or package_id, event, subject_id),
                verdict="shame",
                kind="missing_event",
                package_id=package_id,
                decision_id=decision_id,
                wo_id=wo_id,
                event_type=event,
                subject_id=subject_id,
                provenance="ddb-read",
                surface=f"the decision log (package {package_id}) and the ledger",
                read={"effect": f"{event} {subject_id}", "recorded_by": what},
                detail=f"{what}: {event} for {subject_id}, and no event claimed it within "
                f"{int(self.deps.window.total_seconds())} s",
                occurred_at=completion.recorded_at,
                checked_at=now,
            )
            if self.deps.ledger.record(row):
                count("ShameRows")
                written.append(row)
        report.missing += written
        if written:  # the watcher may have written an event's row since we looked
            watched = [r for r in self.deps.ledger.for_package(package_id) if r.event_id]
            for row in written:
                for seen_late in watched:
                    resolution = row.resolved_by(seen_late)
                    if resolution is not None and self.deps.ledger.resolve(row, resolution):
                        count("ShameResolved")
                        report.resolved.append(row.row_id)
