"""The sweeper: every effect an outcome record names must have had its event (the watcher's
rows); what is missing past the window is one missing_event Shame row, written once."""

from __future__ import annotations

from datetime import timedelta

from builders import T0
from fakes import InMemoryDecisionLog

from maestro.domain.actions import Lane
from maestro.domain.events import Effect, EventType
from maestro.domain.ledger import LedgerRow
from maestro.domain.records import ActionOutcomeRecord, PackageCompletion
from maestro.verify.sweeper import Sweeper, SweeperDeps
from maestro_dev.fakes import InMemoryLedger
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
    return Sweeper(SweeperDeps(decisions=log, ledger=ledger, clock=clock))


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


def test_packages_older_than_the_lookback_are_left_alone() -> None:
    log, ledger, clock = InMemoryDecisionLog(), InMemoryLedger(), VirtualClock(T0)
    _complete(log, "pkg-3")
    clock.advance((60 + 11) * 60)
    assert _sweeper(log, ledger, clock).sweep().packages == 0
    assert timedelta(hours=1) == SweeperDeps(log, ledger, clock).lookback
