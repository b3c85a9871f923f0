"""The debounce queue on SQS."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maestro.ports.workflows import MAX_DEBOUNCE_DELAY_SECONDS, DebounceSignal

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
else:
    SQSClient = Any


class SqsDebounceQueue:
    """:class:`maestro.ports.workflows.DebounceQueue`: one delayed message per signal (max 15
    min)."""

    def __init__(self, client: SQSClient, queue_url: str) -> None:
        self._sqs = client
        self._url = queue_url

    def send(self, signal: DebounceSignal, delay_seconds: int) -> None:
        self._sqs.send_message(
            QueueUrl=self._url,
            MessageBody=signal.model_dump_json(),
            DelaySeconds=max(0, min(delay_seconds, MAX_DEBOUNCE_DELAY_SECONDS)),
        )
