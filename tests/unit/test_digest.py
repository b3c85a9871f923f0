"""The hourly digest: its page (bounded, emergencies first, short excerpts) and the step that
sends it (once per hour, read-verifiable, never held back by the page cap)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from maestro.domain.digest import DIGEST_EXCERPT_CHARS, DigestEntry, digest_page, hour_of
from maestro.domain.events import DomainEvent, body_digest
from maestro.pipeline.digest import DigestDeps, DigestSender, digest_package_id
from maestro_dev.fakes import InMemoryDailyCaps, InMemoryDigest, RecordingMessenger

HOUR = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PM = "+14155550188"


class _Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


class _Bus:
    def __init__(self) -> None:
        self.events: list[DomainEvent] = []

    def publish(self, events: list[DomainEvent]) -> None:
        self.events.extend(events)


def _entry(n: int, **changes: object) -> DigestEntry:
    data: dict[str, object] = {
        "subject": f"unknown#+1212555{n:04d}",
        "kind": "unknown_number",
        "who": f"+1212555{n:04d}",
        "excerpt": "w" * 120,
        "package_id": f"pkg-{n}",
        "at": HOUR + timedelta(minutes=n),
    }
    return DigestEntry.model_validate({**data, **changes})


def test_the_page_is_bounded_lists_emergencies_first_and_quotes_short_excerpts() -> None:
    digest = InMemoryDigest()
    for n in range(20):
        digest.add(_entry(n))
    digest.add(_entry(50, kind="emergency", subject="emergency#+12125550050", why="cap"))
    digest.add(_entry(3, package_id="pkg-3b", messages=4))  # the same number again: one line
    page = digest_page(HOUR, digest.close(HOUR, HOUR), max_lines=6)
    head, *lines = page.splitlines()
    assert head.startswith("[INFO] maestro digest, 02 Mar 09:00-10:00 UTC: 20 numbers not in")
    assert "1 page held back by the daily cap" in head
    assert lines[0].startswith("- 09:50 EMERGENCY from +12125550050")
    assert len(lines) == 7
    assert lines[-1] == "and 15 more"
    assert "(5 texts)" in lines[4]  # +12125550003: 1 + 4 messages
    for line in lines[:-1]:
        assert len(line) <= 160
        assert ("w" * (DIGEST_EXCERPT_CHARS + 1)) not in line
    assert len(page) < 1400


def test_one_page_per_hour_that_is_over_sent_once_and_claimed_for_the_watcher() -> None:
    digest, messenger, bus = InMemoryDigest(), RecordingMessenger(), _Bus()
    caps = InMemoryDailyCaps(pages=1)
    caps.charge("pages", "a page earlier today", HOUR)  # the page cap is already reached
    clock = _Clock(HOUR + timedelta(minutes=30))
    sender = DigestSender(
        DigestDeps(digest=digest, messenger=messenger, bus=bus, clock=clock, on_call_pm_phone=PM,
                   caps=caps)
    )  # fmt: skip
    digest.add(_entry(1))
    assert sender.run().pages == ()  # the hour is not over
    digest.add(_entry(2, at=HOUR + timedelta(hours=1, minutes=5)))
    clock.at = HOUR + timedelta(hours=2, minutes=1)  # a run was missed: two hours are due
    report = sender.run()
    assert report.hours == (HOUR, HOUR + timedelta(hours=1))
    assert len(messenger.to(PM)) == 2
    assert sender.run().pages == ()  # nothing twice
    assert caps.reached == ["pages", "pages"]  # counted, never held back
    (sent, paged) = bus.events[:2]
    assert (sent.type, paged.type) == ("message.sent", "escalation.paged")
    assert sent.package_id == paged.package_id == digest_package_id(HOUR) == "digest-2026030209"
    assert sent.subject_id == paged.subject_id == report.pages[0]
    assert paged.claim == {
        "to_sha256": body_digest(PM),
        "reason": "digest",
        "severity": "info",
        "why": "account fallback number (no on-call or default PM for all properties)",
    }


def test_an_entry_for_a_closed_hour_joins_the_next() -> None:
    digest = InMemoryDigest()
    digest.close(HOUR, HOUR + timedelta(hours=1))
    assert digest.add(_entry(1)) == HOUR + timedelta(hours=1)
    assert hour_of(HOUR + timedelta(minutes=59, seconds=59)) == HOUR
