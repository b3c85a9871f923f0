"""SMS through Twilio's Messages API, over the real ``twilio`` SDK.

:class:`TwilioMessenger` (the :class:`maestro.ports.messaging.Messenger`) sends with a status
callback URL, idempotently per action key:

1. A **send record** is claimed (a conditional put keyed by the idempotency key) *before*
   Twilio is called, holding the recipient and the text.
2. Twilio's ``messages.create``; 429, 5xx, a timeout or a dropped connection are retried with
   exponential backoff and jitter. A 5xx or a timeout may hide a message Twilio accepted, so
   before trying again the account's recent messages to that number are **looked up** (same
   sender, same text, created since the claim, not another action's): found, it is that one.
3. The SID is recorded on the send record and on the message's item in the messages table
   (where status callbacks land).

A retried action finds its record: a recorded SID returns that message; a claim with no SID (a
crash after Twilio accepted the message and before the SID was recorded) is looked up before
anything is sent again. So one action key texts once. Concurrent runs of one key are excluded
upstream (the act step's idempotency layer). When every attempt fails, or Twilio refuses the
message (a 4xx such as 21211, an invalid number), the record says ``failed`` with the reason and
:class:`maestro.ports.messaging.SendFailedError` is raised: the step fails, the package fails open,
and the decision log and the PM see it. Nothing is dropped silently.

:class:`TwilioMessageReader` fetches a message by SID: the watcher's independent read.

The SDK reaches Twilio through its own HTTP client pointed at a configured base URL
(``https://api.twilio.com`` unless configured otherwise: the embedded stack configures its
loopback server); there is no other difference between a local run and the cloud.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import requests
from botocore.exceptions import ClientError
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from maestro.adapters.ddb import DynamoDBClient, from_item, is_conditional_failure, to_value
from maestro.adapters.twilio_status import status_rank
from maestro.domain.events import body_digest
from maestro.ports.evidence import MessageRead
from maestro.ports.messaging import SendFailedError, SentMessage
from maestro.ports.platform import Clock
from maestro.tables import MESSAGES, RETENTION_DAYS, SENDS, TTL_ATTRIBUTE, expires_at_epoch

__all__ = [
    "TWILIO_API",
    "TwilioApiHttpClient",
    "TwilioMessageReader",
    "TwilioMessenger",
    "twilio_client",
]

TWILIO_API = "https://api.twilio.com"
LOOKUP_SLACK = timedelta(minutes=5)
"""How far before its claim a message found by look-up may have been created (clock skew)."""
LOOKUP_LIMIT = 20
SEND_RECORD_DAYS = 30
"""How long a send record (the recipient and the text) is kept at most: a retried or redriven
action must find its claim (Step Functions redrives for 14 days). Never longer than the
messages: a shorter messages retention shortens it too."""


def send_record_days(messages_retention_days: int) -> int:
    """The send records' retention: :data:`SEND_RECORD_DAYS`, or the messages' when shorter (0,
    messages kept until erased, leaves it at :data:`SEND_RECORD_DAYS`)."""
    if messages_retention_days > 0:
        return min(SEND_RECORD_DAYS, messages_retention_days)
    return SEND_RECORD_DAYS


class TwilioApiHttpClient(TwilioHttpClient):  # type: ignore[misc]  # the SDK is untyped
    """The SDK's own HTTP client, sending Twilio API requests to ``base_url``
    (``https://api.twilio.com``, Twilio's own, unless configured otherwise)."""

    def __init__(self, base_url: str = TWILIO_API, timeout: float = 10.0) -> None:
        super().__init__(timeout=timeout)
        self.base_url = base_url.rstrip("/")

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if url.startswith(TWILIO_API):
            url = self.base_url + url[len(TWILIO_API) :]
        return super().request(method, url, *args, **kwargs)


def twilio_client(
    account_sid: str, auth_token: str, *, base_url: str = TWILIO_API, timeout: float = 10.0
) -> Client:
    return Client(
        account_sid,
        auth_token,
        http_client=TwilioApiHttpClient(base_url=base_url, timeout=timeout),
    )


def _transient(error: Exception) -> bool:
    """Worth another attempt: Twilio's 429 and 5xx, a timeout, a dropped connection."""
    if isinstance(error, TwilioRestException):
        status = int(error.status)
        return status == 429 or status >= 500
    return isinstance(error, requests.exceptions.RequestException)


def _ambiguous(error: Exception) -> bool:
    """The message may have been accepted although the answer says otherwise (or never came)."""
    if isinstance(error, TwilioRestException):
        return int(error.status) >= 500
    return isinstance(error, requests.exceptions.RequestException) and not isinstance(
        error, requests.exceptions.ConnectTimeout
    )


def _describe(error: Exception) -> str:
    if isinstance(error, TwilioRestException):
        code = f" (code {error.code})" if error.code and error.code != error.status else ""
        return f"Twilio answered {error.status}{code}: {error.msg}"[:300]
    return f"{type(error).__name__}: {error}"[:300]


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        return parsedate_to_datetime(value)
    return None


class TwilioMessenger:
    """:class:`maestro.ports.messaging.Messenger` on Twilio (see the module's docstring)."""

    def __init__(
        self,
        client: Client,
        ddb: DynamoDBClient,
        *,
        sends_table: str,
        messages_table: str,
        from_number: str,
        status_callback: str | None,
        clock: Clock,
        attempts: int = 4,
        backoff_seconds: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        retention_days: int = RETENTION_DAYS["messages"],
    ) -> None:
        self._retention_days = retention_days
        self._twilio = client
        self._ddb = ddb
        self._sends = sends_table
        self._messages = messages_table
        self._from = from_number
        self._callback = status_callback
        self._clock = clock
        self._attempts = max(1, attempts)
        self._backoff = backoff_seconds
        self._sleep = sleep

    # -- the port -------------------------------------------------------------------------------

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        now = self._clock.now()
        record = self._claim(idempotency_key, to, body, now)
        if record is not None and record.get("sid"):
            # Sent by an earlier run: that message, as it was sent.
            return SentMessage(
                sid=record["sid"],
                to=record["to"],
                body=record["body"],
                status=str(record.get("status", "queued")),
                via="twilio",
            )
        if record is not None:
            # An earlier run claimed it and never recorded a SID: it may have crashed after
            # Twilio accepted the message. Look before sending again.
            to, body = record["to"], record["body"]
            claimed_at = datetime.fromisoformat(record["claimed_at"])
        else:
            claimed_at = now
        message = self._create_once(idempotency_key, to, body, claimed_at, look_first=bool(record))
        return self._record_sid(idempotency_key, message)

    # -- claiming -------------------------------------------------------------------------------

    def _claim(self, key: str, to: str, body: str, now: datetime) -> dict[str, Any] | None:
        """None when this run claimed the key afresh; else the earlier run's record."""
        try:
            self._ddb.put_item(
                TableName=self._sends,
                Item={
                    SENDS.partition.name: to_value(key),
                    "to": to_value(to),
                    "body": to_value(body),
                    "body_sha256": to_value(body_digest(body)),
                    "from": to_value(self._from),
                    "state": to_value("sending"),
                    "claimed_at": to_value(now.isoformat()),
                    "attempts": to_value(0),
                    TTL_ATTRIBUTE: to_value(
                        expires_at_epoch(now, send_record_days(self._retention_days))
                    ),
                },
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": SENDS.partition.name},
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            item = self._ddb.get_item(
                TableName=self._sends,
                Key={SENDS.partition.name: to_value(key)},
                ConsistentRead=True,
            )["Item"]
            return from_item(item)
        return None

    # -- sending --------------------------------------------------------------------------------

    def _create_once(
        self, key: str, to: str, body: str, claimed_at: datetime, *, look_first: bool
    ) -> Any:
        last: Exception | None = None
        look = look_first
        for attempt in range(1, self._attempts + 1):
            if attempt > 1:
                self._sleep(self._delay(attempt - 1))
            try:
                if look:
                    found = self._look_up(key, to, body, claimed_at)
                    if found is not None:
                        return found
                self._note_attempt(key, attempt)
                return self._twilio.messages.create(
                    to=to, from_=self._from, body=body, status_callback=self._callback
                )
            except (TwilioException, requests.exceptions.RequestException) as error:
                if not _transient(error):
                    self._fail(key, error, attempt, transient=False)
                last = error
                look = look or _ambiguous(error)
        assert last is not None
        self._fail(key, last, self._attempts, transient=True)
        raise AssertionError("unreachable")  # pragma: no cover - _fail raises

    def _delay(self, retry: int) -> float:
        # Exponential backoff with full jitter, capped at 8 s (a Lambda must finish its step).
        delay: float = min(8.0, self._backoff * (2 ** (retry - 1)))
        return delay * (0.5 + random.random() / 2)

    def _look_up(self, key: str, to: str, body: str, claimed_at: datetime) -> Any | None:
        """A message this key's earlier attempt made: same numbers and text, created since the
        claim, and not another action's (two actions may send the same words)."""
        for message in self._twilio.messages.list(to=to, from_=self._from, limit=LOOKUP_LIMIT):
            created = _when(message.date_created)
            if message.body != body or created is None or created < claimed_at - LOOKUP_SLACK:
                continue
            if self._owner(message.sid) in (None, key):
                return message
        return None

    def _owner(self, sid: str) -> str | None:
        item = self._ddb.get_item(
            TableName=self._messages,
            Key={MESSAGES.partition.name: to_value(sid)},
            ConsistentRead=True,
        ).get("Item")
        data = from_item(item) if item else {}
        owner = data.get("idempotency_key")
        return str(owner) if owner else None

    def _note_attempt(self, key: str, attempt: int) -> None:
        self._ddb.update_item(
            TableName=self._sends,
            Key={SENDS.partition.name: to_value(key)},
            UpdateExpression="SET attempts = :n, #state = :sending REMOVE #error",
            ExpressionAttributeNames={"#state": "state", "#error": "error"},
            ExpressionAttributeValues={":n": to_value(attempt), ":sending": to_value("sending")},
        )

    def _fail(self, key: str, error: Exception, attempts: int, *, transient: bool) -> None:
        reason = _describe(error)
        self._ddb.update_item(
            TableName=self._sends,
            Key={SENDS.partition.name: to_value(key)},
            UpdateExpression="SET #state = :failed, #error = :error, attempts = :n",
            ExpressionAttributeNames={"#state": "state", "#error": "error"},
            ExpressionAttributeValues={
                ":failed": to_value("failed"),
                ":error": to_value(reason),
                ":n": to_value(attempts),
            },
        )
        code = str(error.code) if isinstance(error, TwilioRestException) and error.code else None
        raise SendFailedError(
            key, reason, transient=transient, attempts=attempts, code=code
        ) from error

    # -- recording --------------------------------------------------------------------------------

    def _record_sid(self, key: str, message: Any) -> SentMessage:
        sid, status = str(message.sid), str(message.status or "queued")
        sent = SentMessage(sid=sid, to=message.to, body=message.body, status=status, via="twilio")
        # The message's item first (status callbacks may have made it already: they keep their
        # status; a SID already owned by another key is a bug, never overwritten).
        values = {
            ":out": to_value("outbound"),
            ":to": to_value(sent.to),
            ":body": to_value(sent.body),
            ":key": to_value(key),
            ":via": to_value("twilio"),
            ":status": to_value(status),
            ":rank": to_value(status_rank(status)),
        }
        names = {"#dir": "direction", "#to": "to", "#status": "status"}
        expiry = ""
        expires = expires_at_epoch(self._clock.now(), self._retention_days)
        if expires is not None:  # what was sent (a body, a number) expires with the messages
            expiry = ", #ttl = if_not_exists(#ttl, :expires)"
            names["#ttl"] = TTL_ATTRIBUTE
            values[":expires"] = to_value(expires)
        self._ddb.update_item(
            TableName=self._messages,
            Key={MESSAGES.partition.name: to_value(sid)},
            UpdateExpression="SET #dir = :out, #to = :to, body = :body, idempotency_key = :key, "
            "via = :via, #status = if_not_exists(#status, :status), "
            "status_rank = if_not_exists(status_rank, :rank)" + expiry,
            ConditionExpression="attribute_not_exists(idempotency_key) OR idempotency_key = :key",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
        self._ddb.update_item(
            TableName=self._sends,
            Key={SENDS.partition.name: to_value(key)},
            UpdateExpression="SET sid = :sid, #state = :sent, #status = :status REMOVE #error",
            ExpressionAttributeNames={"#state": "state", "#status": "status", "#error": "error"},
            ExpressionAttributeValues={
                ":sid": to_value(sid),
                ":sent": to_value("sent"),
                ":status": to_value(status),
            },
        )
        return sent


class TwilioMessageReader:
    """:class:`maestro.ports.evidence.MessageReader` on Twilio: ``GET …/Messages/{Sid}.json``."""

    provenance: Literal["twilio-read", "ddb-read"] = "twilio-read"
    surface = "Twilio Messages API"

    def __init__(
        self,
        client: Client,
        *,
        attempts: int = 3,
        backoff_seconds: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        retention_days: int = RETENTION_DAYS["messages"],
    ) -> None:
        self._retention_days = retention_days
        self._twilio = client
        self._attempts = max(1, attempts)
        self._backoff = backoff_seconds
        self._sleep = sleep

    def read(self, sid: str) -> MessageRead | None:
        last: Exception | None = None
        for attempt in range(1, self._attempts + 1):
            if attempt > 1:
                self._sleep(self._backoff * (2 ** (attempt - 2)))
            try:
                message = self._twilio.messages(sid).fetch()
            except TwilioRestException as error:
                if error.status == 404:
                    return None
                if not _transient(error):
                    raise
                last = error
                continue
            except requests.exceptions.RequestException as error:
                last = error
                continue
            return MessageRead(
                sid=str(message.sid),
                to=str(message.to),
                from_number=str(message.from_) if message.from_ else None,
                body=str(message.body or ""),
                status=str(message.status),
                error_code=str(message.error_code) if message.error_code else None,
                created_at=_when(message.date_created),
                provenance="twilio-read",
                surface=f"Twilio Messages API: GET Messages/{sid}.json",
            )
        assert last is not None
        raise last
