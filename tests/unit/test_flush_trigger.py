from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maestro.domain.models import FlushTrigger
from maestro.ingest.flusher import flush_trigger
from maestro.ports.conversations import ConversationMeta
from maestro.ports.workflows import DebounceSignal

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
MAX_WAIT = timedelta(minutes=15)


def _meta(
    seq: int, flushed: int = 0, first_unflushed_minutes_ago: float | None = 1
) -> ConversationMeta:
    first = None
    if first_unflushed_minutes_ago is not None and seq > flushed:
        first = T0 - timedelta(minutes=first_unflushed_minutes_ago)
    return ConversationMeta(
        conversation_id="c",
        seq=seq,
        flush_number=0,
        flushed_through=flushed,
        first_unflushed_at=first,
        last_inbound_at=T0,
    )


def _signal(seq: int, trigger: FlushTrigger | None = None) -> DebounceSignal:
    return DebounceSignal(conversation_id="c", seq=seq, trigger=trigger, sent_at=T0)


def test_the_latest_signal_after_the_idle_window_flushes() -> None:
    assert flush_trigger(_meta(3), _signal(3), T0, MAX_WAIT) is FlushTrigger.IDLE_TIMEOUT


def test_an_older_signal_waits_for_the_newer_one() -> None:
    assert flush_trigger(_meta(4), _signal(3), T0, MAX_WAIT) is None


def test_max_wait_flushes_even_while_messages_keep_coming() -> None:
    meta = _meta(9, first_unflushed_minutes_ago=15)
    assert flush_trigger(meta, _signal(3), T0, MAX_WAIT) is FlushTrigger.MAX_WAIT


@pytest.mark.parametrize(
    "trigger",
    [FlushTrigger.KICKOFF, FlushTrigger.CONVERSATION_ENDED, FlushTrigger.URGENCY_EXPEDITE],
)
def test_explicit_triggers_flush_at_once_whatever_the_seq(trigger: FlushTrigger) -> None:
    assert flush_trigger(_meta(5), _signal(2, trigger), T0, MAX_WAIT) is trigger


def test_nothing_unflushed_means_no_flush() -> None:
    assert flush_trigger(_meta(3, flushed=3), _signal(3), T0, MAX_WAIT) is None
    assert flush_trigger(None, _signal(1, FlushTrigger.KICKOFF), T0, MAX_WAIT) is None
