"""The sweeper: every effect an outcome record names must have had its event (the watcher's
rows); what is missing past the window is one missing_event Shame row, written once."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from builders import T0

from maestro.domain.actions import Lane
from maestro.domain.events import Effect, EventType
from maestro.domain.ledger import LedgerRow
from maestro.domain.records import ActionOutcomeRecord, PackageCompletion, SweepMark
from maestro.verify.sweeper import Sweeper, SweeperDeps
from maestro_dev.fakes import InMemoryDecisionLog, InMemoryLedger, InMemorySweepWatermark
from maestro_dev.local.clock import VirtualClock


def _outcome(package_id: str, index: int, *effects: tuple[EventType, str]) -> ActionOutcomeRecord:
    return ActionOutcomeRecord(
        record_id=f"{package_id}#outcome#{index:03d}",
        package_id=package_id,
        conversation_id="conv-1",
        index=index,
        decision_id=f"{package_id}#dispose#{index}",
        lane=Lane.RELAY_TO_OPEN_WO,
        status="done",
        target_wo_id="WO-204",
        effects=tuple(Effect(event=e, subject_id=s) for e, s in effects),
        recorded_at=T0,
    )


def _seen(package_id: str, decision_id: str | None, event: EventType, subject: str) -> LedgerRow:
    return LedgerRow(
        row_id=f"{decision_id}#{event}#{subject}",
        verdict="evidence",
        package_id=package_id,
        decision_id=decision_id,
        event_type=event,
        event_id=f"{decision_id}#{event}",
        subject_id=subject,
        provenance="wo-read",
        detail="matched",
        checked_at=T0,
    )


def _complete(
    log: InMemoryDecisionLog, package_id: str, by: str = "persist", *effects: tuple[EventType, str]
) -> None:
    log.complete(
        PackageCompletion(
            record_id=f"{package_id}#completed",
            package_id=package_id,
            conversation_id="conv-1",
            route="reasoning",
            completed_by=by,  # type: ignore[arg-type]
            decisions=1,
            effects=tuple(Effect(event=e, subject_id=s) for e, s in effects),
            recorded_at=T0,
        )
    )


def _sweeper(log: InMemoryDecisionLog, ledger: InMemoryLedger, clock: VirtualClock) -> Sweeper:
    return Sweeper(
        SweeperDeps(decisions=log, ledger=ledger, watermark=InMemorySweepWatermark(), clock=clock)
    )


def test_an_effect_without_its_event_is_a_missing_event_once() -> None:
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    log.record_outcome(_outcome("pkg-1", 0, ("wo.updated", "WO-204"), ("message.sent", "SM1")))
    _complete(log, "pkg-1")
    ledger.record(_seen("pkg-1", "pkg-1#dispose#0", "message.sent", "SM1"))
    ledger.record(_seen("pkg-1", None, "decision.recorded", "pkg-1"))
    sweeper = _sweeper(log, ledger, clock)

    clock.advance(5 * 60)  # inside the window: the watcher may still be reading
    assert sweeper.sweep().packages == 0
    clock.advance(10 * 60)
    report = sweeper.sweep()
    assert (report.packages, report.expected) == (1, 3)
    (missing,) = report.missing
    assert (missing.kind, missing.event_type, missing.subject_id, missing.decision_id) == (
        "missing_event",
        "wo.updated",
        "WO-204",
        "pkg-1#dispose#0",
    )
    assert missing.wo_id == "WO-204"
    assert missing.event_id is None  # no event came: that is the point
    assert "no event claimed it" in missing.detail
    # Swept again: nothing new.
    clock.advance(5 * 60)
    assert sweeper.sweep().missing == []
    assert [r.kind for r in ledger.rows.values() if r.verdict == "shame"] == ["missing_event"]


def test_the_same_subject_claimed_by_another_decision_does_not_cover_it() -> None:
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    log.record_outcome(_outcome("pkg-1", 0, ("wo.updated", "WO-204")))
    log.record_outcome(_outcome("pkg-1", 1, ("wo.updated", "WO-204")))
    _complete(log, "pkg-1", by="fail_open")  # no decision.recorded expected
    ledger.record(_seen("pkg-1", "pkg-1#dispose#0", "wo.updated", "WO-204"))
    clock.advance(11 * 60)
    (missing,) = _sweeper(log, ledger, clock).sweep().missing
    assert missing.decision_id == "pkg-1#dispose#1"


def test_a_package_persist_completed_must_announce_its_decisions() -> None:
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    _complete(log, "pkg-2")
    clock.advance(11 * 60)
    (missing,) = _sweeper(log, ledger, clock).sweep().missing
    assert (missing.event_type, missing.subject_id) == ("decision.recorded", "pkg-2")


def test_the_texts_fail_open_names_on_its_completion_line_must_have_their_events() -> None:
    """Fail-open completes the record before its events go: a bus down past its retries loses
    the events, and the sweeper finds each text without its event, of fail-open's decision."""
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    _complete(log, "pkg-4", "fail_open", ("message.sent", "SM9"), ("escalation.paged", "SM9"))
    ledger.record(_seen("pkg-4", "pkg-4#fallback#0", "message.sent", "SM9"))
    clock.advance(11 * 60)
    report = _sweeper(log, ledger, clock).sweep()
    assert report.expected == 2
    (missing,) = report.missing
    assert (missing.event_type, missing.subject_id, missing.decision_id) == (
        "escalation.paged",
        "SM9",
        "pkg-4#fallback#0",
    )


class _WatcherBetween(InMemoryLedger):
    """The watcher writes its row for the event after the sweeper looked and before it writes
    its missing_event row (so the watcher, looking for that row, found none)."""

    def __init__(self, watched: LedgerRow) -> None:
        super().__init__()
        self.watched: LedgerRow | None = watched

    def record(self, row: LedgerRow) -> bool:
        if row.kind == "missing_event" and self.watched is not None:
            super().record(self.watched)
            self.watched = None
        return super().record(row)


def test_an_event_read_while_the_sweeper_writes_resolves_its_row_at_once() -> None:
    log, clock = InMemoryDecisionLog(), VirtualClock(T0)
    log.record_outcome(_outcome("pkg-5", 0, ("wo.updated", "WO-204")))
    _complete(log, "pkg-5", "fail_open")
    evidence = _seen("pkg-5", "pkg-5#dispose#0", "wo.updated", "WO-204")
    ledger = _WatcherBetween(evidence)
    clock.advance(11 * 60)
    report = _sweeper(log, ledger, clock).sweep()
    (missing,) = report.missing
    assert report.resolved == [missing.row_id]
    stored = ledger.get("pkg-5", missing.row_id)
    assert stored is not None
    assert stored.resolution is not None
    assert stored.resolution.row_id == evidence.row_id
    assert not [r for r in ledger.rows.values() if r.standing_shame]


def test_the_first_sweep_leaves_packages_older_than_the_lookback_alone() -> None:
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    _complete(log, "pkg-3")
    clock.advance((60 + 11) * 60)
    assert _sweeper(log, ledger, clock).sweep().packages == 0
    assert timedelta(hours=1) == SweeperDeps(log, ledger, InMemorySweepWatermark(), clock).lookback


# -- the watermark: each package swept once ------------------------------------------------------


class _CountingLog(InMemoryDecisionLog):
    """Counts the packages whose outcomes were read, and the completions handed out."""

    def __init__(self) -> None:
        super().__init__()
        self.read: Counter[str] = Counter()
        self.listed: Counter[str] = Counter()
        self.unsharded: list[bool] = []

    def outcomes_for(
        self, package_id: str, *, consistent: bool = True
    ) -> list[ActionOutcomeRecord]:
        self.read[package_id] += 1
        return super().outcomes_for(package_id, consistent=consistent)

    def completed_between(
        self,
        start: datetime,
        end: datetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,  # a dict has no shards
    ) -> list[PackageCompletion]:
        found = super().completed_between(start, end, after=after, limit=limit)
        self.unsharded.append(unsharded)
        self.listed.update(c.package_id for c in found)
        return found


class _CountingLedger(InMemoryLedger):
    """Counts each package's ledger reads, by consistency; raises once on ``fail_on``."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__()
        self.read: Counter[tuple[str, bool]] = Counter()
        self.fail_on = fail_on

    def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
        self.read[package_id, consistent] += 1
        if package_id == self.fail_on:
            self.fail_on = None
            raise RuntimeError("the ledger timed out")
        return super().for_package(package_id, consistent=consistent)


def _completed(log: InMemoryDecisionLog, package_id: str, at: datetime) -> None:
    """A package persist completed at ``at`` with one text, its event and its decision seen."""
    log.record_outcome(
        _outcome(package_id, 0, ("message.sent", f"SM-{package_id}")).model_copy(
            update={"recorded_at": at}
        )
    )
    log.complete(
        PackageCompletion(
            record_id=f"{package_id}#completed",
            package_id=package_id,
            conversation_id="conv-1",
            route="reasoning",
            completed_by="persist",
            decisions=1,
            recorded_at=at,
        )
    )


def _watched(ledger: InMemoryLedger, package_id: str) -> None:
    ledger.record(_seen(package_id, f"{package_id}#dispose#0", "message.sent", f"SM-{package_id}"))
    ledger.record(_seen(package_id, None, "decision.recorded", package_id))


def _deps(
    log: InMemoryDecisionLog, ledger: InMemoryLedger, clock: VirtualClock, **more: Any
) -> SweeperDeps:
    return SweeperDeps(
        decisions=log, ledger=ledger, watermark=InMemorySweepWatermark(), clock=clock, **more
    )


def test_a_second_sweep_reads_nothing_the_first_swept() -> None:
    log, ledger, clock = _CountingLog(), _CountingLedger(), VirtualClock(T0)
    for n in range(3):
        _completed(log, f"pkg-{n}", T0 + timedelta(seconds=n))
        _watched(ledger, f"pkg-{n}")
    clock.advance(11 * 60)
    sweeper = Sweeper(_deps(log, ledger, clock))
    first = sweeper.sweep()
    assert (first.packages, first.missing) == (3, [])
    assert first.mark is not None
    assert first.mark.package_id == "pkg-2"

    _completed(log, "pkg-3", clock.now())  # one more, later
    _watched(ledger, "pkg-3")
    clock.advance(11 * 60)
    second = sweeper.sweep()
    assert second.packages == 1
    # Every package was listed, its outcomes and its ledger rows read exactly once, over both
    # sweeps; all honest, so only the eventually consistent read (half the read units).
    everyone = ["pkg-0", "pkg-1", "pkg-2", "pkg-3"]
    assert log.listed == Counter(everyone)
    assert log.read == Counter(everyone)
    assert ledger.read == Counter({(p, False): 1 for p in everyone})
    clock.advance(60 * 60)
    assert sweeper.sweep().packages == 0
    assert log.listed == Counter(everyone)


def test_a_package_not_yet_past_the_window_waits_alone_for_the_next_sweep() -> None:
    log, ledger, clock = _CountingLog(), _CountingLedger(), VirtualClock(T0)
    _completed(log, "pkg-old", T0)
    _completed(log, "pkg-new", T0 + timedelta(minutes=6))
    clock.advance(11 * 60)
    sweeper = Sweeper(_deps(log, ledger, clock))
    assert sweeper.sweep().packages == 1  # pkg-new is 5 minutes old: the watcher may be reading
    assert log.read == Counter({"pkg-old": 1})
    clock.advance(6 * 60)
    report = sweeper.sweep()
    assert report.packages == 1
    assert [row.subject_id for row in report.missing] == ["SM-pkg-new", "pkg-new"]
    assert log.read == Counter({"pkg-old": 1, "pkg-new": 1})  # the old one is not read again


def test_a_sweep_that_fails_halfway_is_resumed_by_the_next_losing_no_package() -> None:
    """Pages of two: the third package's ledger read fails, so the second page is not done and
    the mark stays after the first; the next sweep (the schedule's retry) starts there."""
    log, ledger, clock = _CountingLog(), _CountingLedger(fail_on="pkg-2"), VirtualClock(T0)
    for n in range(5):
        _completed(log, f"pkg-{n}", T0 + timedelta(seconds=n))  # no event seen: all Shame
    clock.advance(11 * 60)
    deps = _deps(log, ledger, clock, page=2, concurrency=2)
    sweeper = Sweeper(deps)
    with pytest.raises(RuntimeError, match="timed out"):
        sweeper.sweep()
    mark = deps.watermark.read()
    assert mark is not None
    assert mark.package_id == "pkg-1"

    report = sweeper.sweep()
    assert report.packages == 3  # pkg-2 (again), pkg-3, pkg-4
    assert log.read == Counter({"pkg-0": 1, "pkg-1": 1, "pkg-2": 2, "pkg-3": 2, "pkg-4": 1})
    shame = sorted(r.subject_id for r in ledger.rows.values() if r.kind == "missing_event")
    assert shame == sorted([f"SM-pkg-{n}" for n in range(5)] + [f"pkg-{n}" for n in range(5)])


def test_a_backlog_takes_several_sweeps_each_resuming_at_the_mark() -> None:
    log, ledger, clock = _CountingLog(), _CountingLedger(), VirtualClock(T0)
    for n in range(7):
        _completed(log, f"pkg-{n}", T0 + timedelta(seconds=n))
    clock.advance(11 * 60)
    sweeper = Sweeper(_deps(log, ledger, clock, page=2, max_packages=3))
    assert [sweeper.sweep().packages for _ in range(4)] == [3, 3, 1, 0]
    assert log.read == Counter(f"pkg-{n}" for n in range(7))


def test_a_sweep_short_of_time_stops_at_a_page_and_the_next_goes_on() -> None:
    log, ledger, clock = _CountingLog(), _CountingLedger(), VirtualClock(T0)
    for n in range(5):
        _completed(log, f"pkg-{n}", T0 + timedelta(seconds=n))
    clock.advance(11 * 60)
    sweeper = Sweeper(_deps(log, ledger, clock, page=2))
    seconds = iter([120.0, 60.0, 19.0])  # the invocation's time left before each page
    assert sweeper.sweep(time_left=lambda: next(seconds)).packages == 4
    assert sweeper.sweep(time_left=lambda: 120.0).packages == 1
    assert log.read == Counter(f"pkg-{n}" for n in range(5))


def test_unsharded_completion_lines_are_read_until_a_day_past_the_first_mark() -> None:
    """Lines written before the index was sharded are all older than the first sweep of this
    code; a day past its first mark, the sweeper stops querying the day's unsharded key."""
    log, ledger, clock = _CountingLog(), _CountingLedger(), VirtualClock(T0)
    _completed(log, "pkg-0", T0)
    clock.advance(11 * 60)
    deps = _deps(log, ledger, clock)
    sweeper = Sweeper(deps)
    sweeper.sweep()
    first = deps.watermark.read()
    assert first is not None
    assert first.since == clock.now()
    for hours in (12, 25):  # a package half a day later, then one past the day
        _completed(log, f"pkg-{hours}", T0 + timedelta(hours=hours))
        clock.set(T0 + timedelta(hours=hours, minutes=11))
        assert sweeper.sweep().packages == 1
    clock.advance(11 * 60)
    sweeper.sweep()
    assert log.unsharded == [True, True, True, False]
    mark = deps.watermark.read()
    assert mark is not None
    assert mark.since == first.since


def test_a_row_the_eventual_read_missed_is_looked_for_again_before_any_shame() -> None:
    """The watcher's row for the text was written a moment ago: the eventually consistent read
    does not show it yet, the consistent one does, and no Shame row is written."""

    class _Lagging(_CountingLedger):
        def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
            rows = super().for_package(package_id, consistent=consistent)
            return rows if consistent else [r for r in rows if r.event_type != "message.sent"]

    log, ledger, clock = _CountingLog(), _Lagging(), VirtualClock(T0)
    _completed(log, "pkg-1", T0)
    _watched(ledger, "pkg-1")
    clock.advance(11 * 60)
    report = Sweeper(_deps(log, ledger, clock)).sweep()
    assert report.missing == []
    assert ledger.read == Counter({("pkg-1", False): 1, ("pkg-1", True): 1})


def test_the_checks_of_a_page_run_at_the_same_time() -> None:
    """Four packages, four at once: each check waits at a barrier for the three others, which
    only checks running concurrently can pass."""
    barrier = threading.Barrier(4, timeout=30)

    class _Meeting(_CountingLedger):
        def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
            if not consistent:
                barrier.wait()
            return super().for_package(package_id, consistent=consistent)

    log, ledger, clock = _CountingLog(), _Meeting(), VirtualClock(T0)
    for n in range(4):
        _completed(log, f"pkg-{n}", T0 + timedelta(seconds=n))
        _watched(ledger, f"pkg-{n}")
    clock.advance(11 * 60)
    report = Sweeper(_deps(log, ledger, clock, concurrency=4)).sweep()
    assert (report.packages, report.missing) == (4, [])
