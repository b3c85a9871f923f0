"""A debounce batch's probes are asked at once: one probe (a model call of about a second) no
longer holds up the batch's other records, and each record's failure is still its own."""

from __future__ import annotations

import threading
from typing import Any

from builders import T0

from maestro.ingest.flusher import Flusher
from maestro.ingest.flusher_entry import process_debounce_batch
from maestro.ports.workflows import DebounceSignal


class _Flusher:
    """Stands in for :class:`Flusher`: each probe waits at a barrier for the batch's other
    probes (only probes handled at the same time pass it); ``failing`` probes raise."""

    def __init__(self, probes: int, failing: frozenset[str] = frozenset()) -> None:
        self.barrier = threading.Barrier(probes, timeout=10)
        self.failing = failing
        self.handled: list[str] = []
        self._lock = threading.Lock()

    def handle(self, signal: DebounceSignal) -> list[Any]:
        if signal.probe is not None:
            self.barrier.wait()
            if signal.probe in self.failing:
                raise RuntimeError(f"the model timed out on {signal.probe}")
        with self._lock:
            self.handled.append(signal.probe or f"idle {signal.conversation_id}")
        return []

    def rescue(self) -> list[Any]:  # pragma: no cover - no stranded sweep in these batches
        return []


def _record(n: int, signal: DebounceSignal) -> dict[str, Any]:
    return {
        "messageId": f"m{n}",
        "receiptHandle": f"rh-{n}",
        "body": signal.model_dump_json(),
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:debounce",
        "awsRegion": "us-east-1",
    }


def _batch(*signals: DebounceSignal) -> dict[str, Any]:
    return {"Records": [_record(n, s) for n, s in enumerate(signals)]}


def _probe(message_id: str) -> DebounceSignal:
    return DebounceSignal(conversation_id=f"conv-{message_id}", seq=1, probe=message_id, sent_at=T0)


def _flush(flusher: _Flusher, event: dict[str, Any]) -> dict[str, Any]:
    fake: Any = flusher  # the batch function only calls handle (and rescue)
    real: Flusher = fake
    return process_debounce_batch(event, real, None)


def test_a_batchs_probes_are_asked_at_the_same_time() -> None:
    idle = DebounceSignal(conversation_id="conv-quiet", seq=3, sent_at=T0)
    flusher = _Flusher(probes=3)
    response = _flush(flusher, _batch(_probe("SM1"), idle, _probe("SM2"), _probe("SM3")))
    assert response == {"batchItemFailures": []}
    assert sorted(flusher.handled) == ["SM1", "SM2", "SM3", "idle conv-quiet"]


def test_a_probe_that_fails_is_that_records_failure_alone() -> None:
    flusher = _Flusher(probes=3, failing=frozenset({"SM2"}))
    response = _flush(flusher, _batch(_probe("SM1"), _probe("SM2"), _probe("SM3")))
    assert response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert sorted(flusher.handled) == ["SM1", "SM3"]
