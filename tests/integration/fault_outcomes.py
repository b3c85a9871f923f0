"""The outcome the fault matrix pins for each cell (fault × stage), and the checks every played
cell must pass: ``test_fault_matrix.py`` plays every cell on one stack, and
``test_fault_matrix_independence.py`` plays some in other orders, and under load."""

from __future__ import annotations

from maestro_dev.local.fault_matrix import CellResult

SDK = "succeeded (SDK retry)"
SFN = "succeeded (Step Functions retry)"
SQS = "succeeded (SQS redelivery)"
WEBHOOK = "succeeded (Twilio's fallback URL)"
ASYNC = "succeeded (Lambda async retry)"
TWILIO = "succeeded (Twilio adapter retry)"
DEDUPLICATED = "succeeded (redelivery deduplicated)"
OPEN = "failed open, PM paged"
OPEN_SDK = f"{OPEN} (SDK retry)"
OPEN_SFN = f"{OPEN} (Step Functions retry)"
OPEN_TWILIO = f"{OPEN} (Twilio adapter retry)"
NO_PROBE = "succeeded (no probe)"
FLOOR = "recorded default (the safety floor alone)"
DEFAULT_PAGED = "recorded default, PM paged"


def _missing(*events: str) -> str:
    """The sweeper's Shame for effects whose events never came."""
    return "; shame: " + ", ".join(f"missing_event:{event}" for event in events)


ANNOUNCE_LOST = "recorded, then the execution failed (Step Functions retry)" + _missing(
    "decision.recorded"
)

_REPAIR = ("webhook", "flusher", "prober", "precheck", "lease", "resolve", "brain", "dispose")
EXPECTED: dict[str, dict[str, str]] = {
    "ddb-throttled": {
        **dict.fromkeys((*_REPAIR, "escalate", "act", "persist", "watcher", "sweeper"), SDK),
        "fail_open": OPEN_SDK,
    },
    "ddb-throttled-long": {
        "webhook": WEBHOOK,
        "flusher": SQS,
        "prober": SQS,
        "precheck": "recorded default (SDK retry)",  # the model's budget unread: the floor
        **dict.fromkeys(
            ("escalate", "lease", "resolve", "brain", "dispose", "act", "persist"), SFN
        ),
        "watcher": SQS,
        "sweeper": ASYNC,
        "fail_open": OPEN_SFN,
    },
    # A lost answer on the act's idempotency put: the SDK's retry meets the record it wrote,
    # which carries its own owner token (maestro.adapters.idempotency), so it succeeded.
    "ddb-lost-answer": {
        **dict.fromkeys((*_REPAIR, "escalate", "act", "persist", "watcher"), SDK),
        "fail_open": OPEN_SDK,
    },
    "ddb-outage": {
        "webhook": WEBHOOK,
        "flusher": SQS,
        "prober": SQS,
        "precheck": "recorded default (SDK retry)",
        **dict.fromkeys(("escalate", "lease", "resolve", "brain", "dispose"), OPEN_SFN),
        **dict.fromkeys(("act", "persist"), OPEN_SFN),
        "watcher": SQS,
        "sweeper": ASYNC,
        "fail_open": OPEN_SFN,
    },
    # Past the SQS redrive: the records wait in the DLQ (its alarm) until an operator redrives
    # them. The watcher's claims meanwhile have no row, and the sweeper says so; the redriven
    # events, read and confirmed, resolve those rows (they stay, marked: no Shame stands).
    "ddb-outage-long": dict.fromkeys(
        ("flusher", "prober", "watcher"), "succeeded (SQS redelivery, DLQ redrive)"
    ),
    "crash-before": {
        "webhook": WEBHOOK,
        "flusher": SQS,
        "prober": SQS,
        **dict.fromkeys(("precheck", "escalate", "lease", "resolve", "brain"), SFN),
        **dict.fromkeys(("dispose", "act", "persist"), SFN),
        "watcher": SQS,
        "sweeper": ASYNC,
        "fail_open": OPEN_SFN,
    },
    "crash-after": {
        "webhook": WEBHOOK,
        "flusher": SQS,
        "prober": SQS,
        **dict.fromkeys(("precheck", "escalate", "lease", "resolve", "brain"), SFN),
        **dict.fromkeys(("dispose", "act", "persist"), SFN),
        "watcher": SQS,
        "sweeper": ASYNC,
        "fail_open": OPEN_SFN,
    },
    "redelivered": dict.fromkeys(("webhook", "flusher", "prober", "watcher"), DEDUPLICATED),
    "model-down": {"prober": NO_PROBE, "precheck": FLOOR, "brain": DEFAULT_PAGED},
    "model-invalid": {"prober": NO_PROBE, "precheck": FLOOR, "brain": DEFAULT_PAGED},
    "twilio-5xx": {"escalate": TWILIO, "act": TWILIO, "fail_open": OPEN_TWILIO, "watcher": TWILIO},
    "twilio-lost-answer": {"escalate": TWILIO, "act": TWILIO, "fail_open": OPEN_TWILIO},
    "twilio-timeout": {"escalate": TWILIO, "act": TWILIO, "fail_open": OPEN_TWILIO},
    "twilio-down": {
        "escalate": OPEN_TWILIO,
        "act": OPEN_TWILIO,
        "fail_open": "failed open, page not sent (recorded) (Twilio adapter retry)",
        "watcher": "succeeded (SQS redelivery, Twilio adapter retry)",
    },
    "bus-failed": {"escalate": SDK, "act": SDK, "announce": SFN, "fail_open": OPEN_SDK},
    "bus-failed-entries": {"escalate": SFN, "act": SFN, "announce": SFN, "fail_open": OPEN_SFN},
    # Events that never reach the bus: the effects are on the record before their events go,
    # so the sweeper finds each without its event (missing_event Shame).
    "bus-down": {
        "escalate": OPEN_SFN + _missing("escalation.paged", "message.sent"),
        "act": OPEN_SFN + _missing("message.sent", "wo.created"),
        "announce": ANNOUNCE_LOST,
        "fail_open": OPEN_SFN,
    },
    # Past fail-open's retries: its record is complete and the lease free before its events
    # go, so the page's events are what is lost, and the sweeper says so.
    "bus-down-long": {"fail_open": OPEN_SFN + _missing("escalation.paged", "message.sent")},
}


def check(result: CellResult) -> None:
    """What every cell must show: its fault fired, nothing lost, duplicated or undecided, and
    the pinned outcome at each of its stages."""
    census = result.census
    # The fault happened, in every stage the cell names.
    assert all(result.fired.values()), result.fired
    # Every inbound message is in exactly one package.
    assert census.inbound
    assert census.lost == []
    assert census.packaged_twice == {}
    # Every package has its decisions and its completion line.
    assert census.packages
    assert census.undecided == []
    # Each effect exists once: nothing found twice, and nothing more than without the fault
    # (exactly as much when the package succeeded); and the stack was left quiet.
    assert census.duplicates == []
    assert result.violations == [], (result.violations, result.notes)
    # And what happened is what the matrix says.
    cell = result.cell
    assert result.outcomes == {s: EXPECTED[cell.fault][s] for s in cell.stages}, result.notes
