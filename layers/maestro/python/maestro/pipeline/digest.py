"""The hourly digest: one ``[INFO]`` page per hour instead of a page per unknown number.

What it lists (each a line the escalate lane added instead of paging, see
:mod:`maestro.lanes.escalate`): the numbers not in the directory that texted during the hour
(one line per number: when, how many texts, a short excerpt), and the pages a daily cap held
back. On a schedule (an EventBridge rule in the cloud, hourly; the virtual clock on the embedded
stack), each run takes every hour that is over and has lines but no page yet (a run that failed
or was missed is made up by the next), closes it (a line arriving after that joins the next
hour), and sends its page to the on-call PM:

- bounded: the first ``max_lines`` lines, emergencies first, then "and N more";
- idempotent: the page's key is the hour, so a retried run sends nothing twice;
- read-verified like any page: ``message.sent`` and ``escalation.paged`` on the bus (under the
  package id ``digest-<YYYYMMDDHH>``), which the watcher reads back from the messenger's surface;
- counted against the daily page cap but never held back by it (it is where held-back pages go).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from maestro.domain.common import Frozen
from maestro.domain.digest import digest_page
from maestro.domain.events import BODY_PREVIEW, body_digest, claim_dict
from maestro.observability import count, logger
from maestro.ports import (
    Clock,
    DailyCaps,
    Digest,
    DomainEvent,
    EventBus,
    Messenger,
    NotTextableError,
)

__all__ = ["DigestDeps", "DigestReport", "DigestSender", "digest_package_id"]


def digest_package_id(hour: datetime) -> str:
    """The id a digest's events and ledger rows go under (it is no package of a conversation)."""
    return f"digest-{hour:%Y%m%d%H}"


@dataclass
class DigestDeps:
    digest: Digest
    messenger: Messenger
    bus: EventBus
    clock: Clock
    on_call_pm_phone: str
    caps: DailyCaps | None = None
    max_lines: int = 8
    lookback_hours: int = 24


class DigestReport(Frozen):
    hours: tuple[datetime, ...] = ()
    pages: tuple[str, ...] = Field(default=(), description="The SIDs of the pages sent")
    lines: int = 0


class DigestSender:
    def __init__(self, deps: DigestDeps) -> None:
        self.deps = deps

    def run(self) -> DigestReport:
        """Send the page of every hour that is due; what was sent."""
        now = self.deps.clock.now()
        hours: list[datetime] = []
        pages: list[str] = []
        lines = 0
        for hour in self.deps.digest.due(now, self.deps.lookback_hours):
            found = self.deps.digest.close(hour, now)
            if not found:
                continue
            body = digest_page(hour, found, self.deps.max_lines)
            try:
                pages.append(self._page(hour, body, now))
            except NotTextableError as refused:
                # The PM's number opted out: nothing went, the hour stays due (a later run sends
                # it once they opt back in), and the other hours still go. Logged and counted,
                # never recorded as sent.
                count("DigestRefused")
                logger.error("a digest page was not sent", extra={"reason": refused.reason})
                continue
            hours.append(hour)
            lines += len(found)
            count("DigestLines", len(found))
        if pages:
            logger.info("digest sent", extra={"pages": pages, "lines": lines})
        return DigestReport(hours=tuple(hours), pages=tuple(pages), lines=lines)

    def _page(self, hour: datetime, body: str, now: datetime) -> str:
        key = f"digest#{hour:%Y%m%dT%H}"
        if self.deps.caps is not None:
            self.deps.caps.charge("pages", key, now, force=True)
        to = self.deps.on_call_pm_phone
        sent = self.deps.messenger.send(to, body, idempotency_key=key)
        package_id = digest_package_id(hour)
        self.deps.bus.publish(
            [
                DomainEvent(
                    event_id=f"{key}#message.sent",
                    type="message.sent",
                    package_id=package_id,
                    subject_id=sent.sid,
                    claim=claim_dict(
                        "message.sent",
                        {
                            "to": sent.to,
                            "body": sent.body[:BODY_PREVIEW],
                            "body_sha256": body_digest(sent.body),
                            "via": sent.via,
                        },
                    ),
                    occurred_at=now,
                ),
                DomainEvent(
                    event_id=f"{key}#escalation.paged",
                    type="escalation.paged",
                    package_id=package_id,
                    subject_id=sent.sid,
                    claim=claim_dict(
                        "escalation.paged", {"to": sent.to, "reason": "digest", "severity": "info"}
                    ),
                    occurred_at=now,
                ),
            ]
        )
        self.deps.digest.record_sent(hour, sent.sid, now)
        count("DigestPages")
        return sent.sid
