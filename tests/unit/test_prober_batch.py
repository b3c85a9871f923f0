"""A probe batch's probes are asked at once: one probe (a model call of about a second) does
not hold up the batch's other records, and each record's failure is its own."""

from __future__ import annotations

import threading
from typing import Any

from builders import T0

from maestro.ingest.prober import ProbeSignals
from maestro.ingest.prober_entry import process_probe_batch
from maestro.ports.workflows import DebounceSignal


class _Signals:
    """Stands in for :class:`ProbeSignals`: each probe waits at a barrier for the batch's other
    probes (only probes handled at the same time pass it); ``failing`` probes raise."""

    def __init__(self, probes: int, failing: frozenset[str] = frozenset()) -> None:
        self.barrier = threading.Barrier(probes, timeout=10)
        self.failing = failing
        self.handled: list[str] = []
        self._lock = threading.Lock()

    def handle(self, signal: DebounceSignal) -> bool:
        assert signal.probe is not None
        self.barrier.wait()
        if signal.probe in self.failing:
            raise RuntimeError(f"the model timed out on {signal.probe}")
        with self._lock:
            self.handled.append(signal.probe)
        return False


def _record(n: int, signal: DebounceSignal) -> dict[str, Any]:
    return {
        "messageId": f"m{n}",
        "receiptHandle": f"rh-{n}",
        "body": signal.model_dump_json(),
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:probe",
        "awsRegion": "us-east-1",
    }


def _batch(*signals: DebounceSignal) -> dict[str, Any]:
    return {"Records": [_record(n, s) for n, s in enumerate(signals)]}


def _probe(message_id: str) -> DebounceSignal:
    return DebounceSignal(conversation_id=f"conv-{message_id}", seq=1, probe=message_id, sent_at=T0)


def _probe_all(signals: _Signals, event: dict[str, Any]) -> dict[str, Any]:
    fake: Any = signals  # the batch function only calls handle
    real: ProbeSignals = fake
    return process_probe_batch(event, real, None)


def test_a_batchs_probes_are_asked_at_the_same_time() -> None:
    signals = _Signals(probes=4)
    response = _probe_all(
        signals, _batch(_probe("SM1"), _probe("SM4"), _probe("SM2"), _probe("SM3"))
    )
    assert response == {"batchItemFailures": []}
    assert sorted(signals.handled) == ["SM1", "SM2", "SM3", "SM4"]


def test_a_probe_that_fails_is_that_records_failure_alone() -> None:
    signals = _Signals(probes=3, failing=frozenset({"SM2"}))
    response = _probe_all(signals, _batch(_probe("SM1"), _probe("SM2"), _probe("SM3")))
    assert response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert sorted(signals.handled) == ["SM1", "SM3"]


def test_a_record_that_is_no_probe_signal_fails_alone() -> None:
    signals = _Signals(probes=1)
    idle = DebounceSignal(conversation_id="conv-quiet", seq=3, sent_at=T0)
    event = _batch(_probe("SM1"), idle)
    event["Records"].append({**_record(9, idle), "body": "not a signal"})
    response = _probe_all(signals, event)
    failed = [f["itemIdentifier"] for f in response["batchItemFailures"]]
    assert failed == ["m1", "m9"]
    assert signals.handled == ["SM1"]
