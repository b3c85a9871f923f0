"""An ingestion rig on moto: real DynamoDB buffer, real Step Functions executions, virtual time.

SQS's DelaySeconds runs on wall-clock time, so the debounce queue here is a virtual-time stand-in
(named as such) that delivers signals when the virtual clock reaches them, in SQS-shaped batches,
through the same record handler the flusher Lambda uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from twilio.rest import Client

from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer, DynamoOutboundStatusStore
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.stepfunctions import StepFunctionsStarter
from maestro.adapters.twilio_sms import TwilioMessenger
from maestro.domain.models import Package
from maestro.ingest.flusher import Flusher
from maestro.ingest.service import Ingestor
from maestro.ingest.webhooks import WebhookDeps, build_resolver
from maestro_dev.local import events
from maestro_dev.local.clock import VirtualClock, VirtualDelayQueue
from maestro_dev.local.events import MAESTRO_LINE as MAESTRO_LINE
from maestro_dev.local.events import form_body as form_body
from maestro_dev.local.events import twilio_sid as twilio_sid
from maestro_dev.local.twilio_loopback import LoopbackHttpClient, TwilioLoopback
from maestro_dev.local.world import MARIA as MARIA
from maestro_dev.local.world import WORLD, seed_directory

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
TOKEN = "twilio-test-auth-token"
APP_SECRET = "app-test-secret"
ACCOUNT = twilio_sid("AC", "the rig's Twilio account")
"""The Twilio account the rig's webhooks accept (every form here names it)."""
HOST = "abc123.execute-api.us-east-1.amazonaws.com"
STAGE = "prod"

PASS_MACHINE = json.dumps(
    {"StartAt": "Received", "States": {"Received": {"Type": "Pass", "End": True}}}
)


@dataclass
class Rig:
    aws: Any
    clock: VirtualClock
    queue: VirtualDelayQueue
    buffer: DynamoConversationBuffer
    statuses: DynamoOutboundStatusStore
    parties: DynamoPartyDirectory
    directory: DynamoDirectory
    ingestor: Ingestor
    flusher: Flusher
    sfn: Any
    machine_arn: str
    deps: WebhookDeps
    resolver: Any
    idle: int = 300
    max_wait: int = 900
    packages: list[Package] = field(default_factory=list)

    # -- webhooks ---------------------------------------------------------------------------

    def call(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.resolver.resolve(event, None)  # type: ignore[no-any-return]

    def sms(
        self, body: str, *, sid: str, sender: str = MARIA.phone, **extra: str
    ) -> dict[str, Any]:
        params = events.sms_params(sid, sender, body, account=ACCOUNT) | extra
        return self.call(twilio_event("/twilio/sms", params))

    def text(self, words: str, to: str = MARIA.phone) -> str:
        """Text someone as maestro texts; the text's SID, as the messenger recorded it (a
        message maestro sent, whose status callbacks the webhook takes)."""
        return self._messenger.send(to, words, idempotency_key=f"{to}#{words}").sid

    @cached_property
    def _messenger(self) -> TwilioMessenger:
        """The Twilio messenger on the real SDK, against a loopback Twilio of the rig's account
        answered in-process (no sockets)."""
        loopback = TwilioLoopback(TOKEN, self.clock.now, account_sid=ACCOUNT)
        client = Client(ACCOUNT, TOKEN, http_client=LoopbackHttpClient(loopback, 5.0))
        return TwilioMessenger(
            client,
            self.aws.dynamodb,
            sends_table=self.aws.table_names["sends"],
            messages_table=self.aws.table_names["messages"],
            from_number=MAESTRO_LINE,
            status_callback=None,
            clock=self.clock,
        )

    # -- time -------------------------------------------------------------------------------

    def run_due(self) -> list[Package]:
        """Deliver every signal due now, as one SQS-shaped batch per signal."""
        started: list[Package] = []
        for signal in self.queue.due():
            started.extend(self.flusher.handle(signal))
        self.packages.extend(started)
        return started

    def advance(self, seconds: float) -> list[Package]:
        """Move virtual time forward, delivering signals as they fall due, in order."""
        target = self.clock.now().timestamp() + seconds
        started: list[Package] = []
        while (due := self.queue.next_due()) is not None and due.timestamp() <= target:
            self.clock.set(max(due, self.clock.now()))
            started.extend(self.run_due())
        self.clock.set(datetime.fromtimestamp(target, UTC))
        started.extend(self.run_due())
        return started

    def drain(self) -> list[Package]:
        return self.advance(self.max_wait + self.idle + 1)

    def executions(self) -> list[dict[str, Any]]:
        return self.sfn.list_executions(stateMachineArn=self.machine_arn)["executions"]  # type: ignore[no-any-return]

    def stored_message_count(self) -> int:
        table = self.aws.table_names["messages"]
        return int(self.aws.dynamodb.scan(TableName=table, Select="COUNT")["Count"])


def make_rig(aws: Any, *, idle: int = 300, max_wait: int = 900) -> Rig:
    clock = VirtualClock(T0)
    queue = VirtualDelayQueue(clock)
    ddb = aws.dynamodb
    names = aws.table_names
    buffer = DynamoConversationBuffer(ddb, names["messages"], names["conversations"])
    statuses = DynamoOutboundStatusStore(ddb, names["messages"])
    parties = DynamoPartyDirectory(ddb, names["parties"])
    directory = DynamoDirectory(ddb, names["directory"])
    sfn = aws.client("stepfunctions")
    iam_role = "arn:aws:iam::123456789012:role/maestro-test"
    arn = sfn.create_state_machine(
        name="package-pipeline", definition=PASS_MACHINE, roleArn=iam_role
    )["stateMachineArn"]
    ingestor = Ingestor(buffer, parties, queue, idle_window_seconds=idle, max_wait_seconds=max_wait)
    flusher = Flusher(buffer, StepFunctionsStarter(sfn, arn), clock, max_wait_seconds=max_wait)
    deps = WebhookDeps(
        ingestor=ingestor,
        statuses=statuses,
        twilio_auth_token=lambda: TOKEN,
        app_signing_secret=lambda: APP_SECRET,
        clock=clock,
        twilio_account_sid=ACCOUNT,
    )
    rig = Rig(
        aws=aws,
        clock=clock,
        queue=queue,
        buffer=buffer,
        statuses=statuses,
        parties=parties,
        directory=directory,
        ingestor=ingestor,
        flusher=flusher,
        sfn=sfn,
        machine_arn=arn,
        deps=deps,
        resolver=build_resolver(deps),
        idle=idle,
        max_wait=max_wait,
    )
    seed_directory(rig, WORLD.directory())  # Maria, Vic and Paula, imported
    return rig


def rest_event(
    path: str,
    body: str,
    headers: Mapping[str, str],
    *,
    query: Mapping[str, list[str]] | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, Any]:
    """An API Gateway REST (v1) proxy event, as a deployed stage's Lambda receives it."""
    return events.rest_event(
        path,
        body,
        headers,
        host=HOST,
        scheme="https",
        stage=STAGE,
        query=query,
        content_type=content_type,
    )


def twilio_event(
    path: str,
    params: Mapping[str, str] | Sequence[tuple[str, str]],
    *,
    token: str = TOKEN,
    signature: str | None = None,
) -> dict[str, Any]:
    """A correctly signed Twilio webhook (unless ``signature`` overrides it)."""
    return events.twilio_event(
        path, params, token=token, base_url=f"https://{HOST}", stage=STAGE, signature=signature
    )


def app_event(
    path: str,
    payload: str | Mapping[str, Any],
    at: datetime | None = None,
    *,
    secret: str = APP_SECRET,
) -> dict[str, Any]:
    """Signed now (the real clock the window is checked on) unless ``at`` says when; a str
    payload is the body exactly."""
    body = payload if isinstance(payload, str) else dict(payload)
    return events.signed_app_event(secret, path, body, at, host=HOST, scheme="https", stage=STAGE)
