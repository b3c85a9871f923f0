"""The sweeper: an effect whose event never came is a lie of omission (``missing_event``).

On a schedule, it takes every package completed since the last one it swept (its watermark)
and more than ``window`` ago (the window gives the watcher time to read every claim), and for
each compares what the decision log says was written with what the watcher saw:

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

Each package is swept once (docs/headroom.md): completions are read a page at a time in the
completions index's order, from the watermark on (the first sweep: from ``lookback`` ago); a
page's packages are checked ``concurrency`` at a time, and only when all of them are done does
the watermark move to the page's last, so a sweep that fails halfway is resumed by the next
one from where it stopped, losing no package (sweeping one twice writes nothing twice). A
package completed less than ``window`` ago is not read at all: the next sweep reaches it.
Its two reads are eventually consistent (half the read units; the package is ``window`` old):
an effect they find unclaimed is looked for once more with a consistent read before its row is
written.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from maestro.domain.events import EventType
from maestro.domain.ledger import LedgerRow, missing_event_row_id
from maestro.domain.records import PackageCompletion, SweepMark, fallback_decision_id
from maestro.observability import count
from maestro.ports.evidence import Ledger, SweepWatermark
from maestro.ports.platform import Clock
from maestro.ports.stores import DecisionLog

__all__ = ["SweepReport", "Sweeper", "SweeperDeps"]

_WO_EVENTS = frozenset({"wo.created", "wo.updated", "rating.recorded"})


@dataclass
class SweeperDeps:
    decisions: DecisionLog
    ledger: Ledger
    watermark: SweepWatermark
    clock: Clock
    window: timedelta = timedelta(minutes=10)
    lookback: timedelta = timedelta(hours=1)  # where the first sweep (no watermark) starts
    concurrency: int = 8  # packages checked at once
    page: int = 64  # completions read per query; the watermark moves after each page
    max_packages: int = 100_000  # per sweep: a backlog takes several, each resuming at the mark


@dataclass
class SweepReport:
    packages: int = 0
    expected: int = 0
    missing: list[LedgerRow] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)  # missing rows their event resolved at once
    mark: SweepMark | None = None  # the watermark after this sweep

    def as_dict(self) -> dict[str, object]:
        return {
            "packages": self.packages,
            "expected": self.expected,
            "missing": [row.row_id for row in self.missing],
            "resolved": self.resolved,
            "mark": self.mark.model_dump(mode="json") if self.mark else None,
        }

    def add(self, other: SweepReport) -> None:
        self.packages += other.packages
        self.expected += other.expected
        self.missing += other.missing
        self.resolved += other.resolved


PAGE_MARGIN = timedelta(seconds=20)
"""The invocation time a page may take at most (64 checks, 8 at once, with their writes)."""

Expected = tuple[str | None, EventType, str, str | None, str]
"""(decision id, event, subject id, WO id, who recorded the effect)."""


class Sweeper:
    def __init__(self, deps: SweeperDeps) -> None:
        self.deps = deps

    def sweep(self, time_left: Callable[[], float] | None = None) -> SweepReport:
        """Every package completed after the watermark and before ``now - window``, up to
        ``max_packages``; the watermark moves past each page once it is swept whole. With
        ``time_left`` (the invocation's seconds left), no page starts within ``PAGE_MARGIN``
        of the end: a backlog stops cleanly at a page and the next sweep goes on from there."""
        deps = self.deps
        now = deps.clock.now()
        end = now - deps.window
        mark = deps.watermark.read()
        start = end - deps.lookback if mark is None else mark.recorded_at
        report = SweepReport(mark=mark)
        while report.packages < deps.max_packages:
            if time_left is not None and time_left() < PAGE_MARGIN.total_seconds():
                break
            limit = min(deps.page, deps.max_packages - report.packages)
            page = deps.decisions.completed_between(
                start,
                end,
                after=mark,
                limit=limit,
                unsharded=mark is None or mark.reads_unsharded(),
            )
            for swept in self._fan_out(page, now):  # counted here, in the invocation's thread
                report.add(swept)
                if swept.missing:
                    count("ShameRows", len(swept.missing))
                if swept.resolved:
                    count("ShameResolved", len(swept.resolved))
            if not page:
                break
            mark = SweepMark.of(page[-1], since=mark.since if mark else now)
            deps.watermark.advance(mark)
            report.mark = mark
            if len(page) < limit:
                break
        return report

    def _fan_out(self, page: list[PackageCompletion], now: datetime) -> list[SweepReport]:
        """Each package's check, ``concurrency`` at a time, in the page's order; the first
        failure is raised once every check has ended (the watermark stays put)."""
        if self.deps.concurrency <= 1 or len(page) <= 1:
            return [self._sweep_package(completion, now) for completion in page]
        with ThreadPoolExecutor(max_workers=min(self.deps.concurrency, len(page))) as pool:
            # Each check runs in a copy of the caller's context (what it was invoked for).
            futures = [
                pool.submit(contextvars.copy_context().run, self._sweep_package, c, now)
                for c in page
            ]
        return [future.result() for future in futures]

    def _expected(self, completion: PackageCompletion) -> list[Expected]:
        package_id = completion.package_id
        expected: list[Expected] = []
        for outcome in self.deps.decisions.outcomes_for(package_id, consistent=False):
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
        return expected

    def _unclaimed(
        self, package_id: str, expected: list[Expected], *, consistent: bool
    ) -> list[Expected]:
        seen = {
            (row.decision_id, row.event_type, row.subject_id)
            for row in self.deps.ledger.for_package(package_id, consistent=consistent)
            if row.event_id is not None  # the watcher's rows: an event came
        }
        return [e for e in expected if (e[0], e[1], e[2]) not in seen]

    def _sweep_package(self, completion: PackageCompletion, now: datetime) -> SweepReport:
        package_id = completion.package_id
        expected = self._expected(completion)
        report = SweepReport(packages=1, expected=len(expected))
        unclaimed = self._unclaimed(package_id, expected, consistent=False)
        if unclaimed:  # a row the watcher wrote a moment ago may not show yet: look again
            unclaimed = self._unclaimed(package_id, unclaimed, consistent=True)
        written: list[LedgerRow] = []
        for decision_id, event, subject_id, wo_id, what in unclaimed:
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
                written.append(row)
        report.missing += written
        if written:  # the watcher may have written an event's row since we looked
            watched = [r for r in self.deps.ledger.for_package(package_id) if r.event_id]
            for row in written:
                for seen_late in watched:
                    resolution = row.resolved_by(seen_late)
                    if resolution is not None and self.deps.ledger.resolve(row, resolution):
                        report.resolved.append(row.row_id)
        return report
