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
- counted against the daily page cap but never held back by it (it is where held-back pages go);
- to whoever is on call for all properties when it goes (docs/on-call.md: its lines are about
  no one property), else a PM of every property, else the account's fallback number; with no
  one to page, the hour is left due (not closed, nothing lost), recorded and alarmed as an
  undeliverable page, and goes with a later run once someone is on call.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from maestro.domain.common import Frozen
from maestro.domain.digest import digest_page
from maestro.domain.events import DomainEvent, body_digest, claim_dict, sent_claim
from maestro.domain.on_call import PageRecipient
from maestro.lanes.on_call import page_recipient, undeliverable
from maestro.observability import count, logger
from maestro.ports.events import EventBus
from maestro.ports.limits import DailyCaps
from maestro.ports.messaging import Digest, Messenger, NotTextableError
from maestro.ports.platform import Clock
from maestro.ports.stores import DirectoryReader

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
    """The account's fallback number for pages ("" when none: docs/on-call.md)."""
    caps: DailyCaps | None = None
    max_lines: int = 8
    lookback_hours: int = 24
    directory: DirectoryReader | None = None


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
            recipient = page_recipient(self.deps.directory, self.deps.on_call_pm_phone, None, now)
            if not recipient.deliverable:
                undeliverable(recipient, "the digest page", hour=f"{hour:%Y-%m-%dT%H:00Z}")
                continue  # left due: a later run sends it once someone is on call
            found = self.deps.digest.close(hour, now)
            if not found:
                continue
            body = digest_page(hour, found, self.deps.max_lines)
            try:
                pages.append(self._page(hour, body, now, recipient))
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

    def _page(self, hour: datetime, body: str, now: datetime, recipient: PageRecipient) -> str:
        key = f"digest#{hour:%Y%m%dT%H}"
        if self.deps.caps is not None:
            self.deps.caps.charge("pages", key, now, force=True)
        to = recipient.phone
        assert to is not None  # an undeliverable hour is left due, never paged
        sent = self.deps.messenger.send(to, body, idempotency_key=key)
        package_id = digest_package_id(hour)
        self.deps.bus.publish(
            [
                DomainEvent(
                    event_id=f"{key}#message.sent",
                    type="message.sent",
                    package_id=package_id,
                    subject_id=sent.sid,
                    claim=sent_claim(sent.to, sent.body, sent.via),
                    occurred_at=now,
                ),
                DomainEvent(
                    event_id=f"{key}#escalation.paged",
                    type="escalation.paged",
                    package_id=package_id,
                    subject_id=sent.sid,
                    claim=claim_dict(
                        "escalation.paged",
                        {
                            "to_sha256": body_digest(sent.to),
                            "reason": "digest",
                            "severity": "info",
                            "why": recipient.why,
                            "person_id": recipient.person_id,
                        },
                    ),
                    occurred_at=now,
                ),
            ]
        )
        self.deps.digest.record_sent(hour, sent.sid, now)
        count("DigestPages")
        return sent.sid
