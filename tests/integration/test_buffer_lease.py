"""The per-conversation lease: one package at a time, in flush order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer

pytestmark = pytest.mark.integration

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)


@pytest.fixture
def buffer(aws: Any) -> DynamoConversationBuffer:
    return DynamoConversationBuffer(
        aws.dynamodb, aws.table_names["messages"], aws.table_names["conversations"]
    )


def test_turns_go_in_flush_order(buffer: DynamoConversationBuffer) -> None:
    assert not buffer.acquire_lease("c", "p2", 2, T0, 60), "flush 2 may not go before flush 1"
    assert buffer.acquire_lease("c", "p1", 1, T0, 60)
    assert buffer.acquire_lease("c", "p1", 1, T0, 60), "the holder may take it again (a retry)"
    assert not buffer.acquire_lease("c", "p2", 2, T0, 60), "held"
    assert buffer.release_lease("c", "p1", 1)
    assert not buffer.release_lease("c", "p1", 1), "released once"
    assert buffer.acquire_lease("c", "p2", 2, T0, 60)


def test_an_expired_holder_is_overtaken_by_the_next_flush_in_order(
    buffer: DynamoConversationBuffer,
) -> None:
    assert buffer.acquire_lease("c", "p1", 1, T0, 60)
    later = T0 + timedelta(seconds=61)
    assert not buffer.acquire_lease("c", "p3", 3, later, 60), "flush 3 must wait for flush 2"
    assert buffer.acquire_lease("c", "p2", 2, later, 60)
    assert not buffer.release_lease("c", "p1", 1), "the crashed holder no longer holds it"
    assert not buffer.renew_lease("c", "p1", later, 60), "nor can it renew it"
    assert buffer.release_lease("c", "p2", 2)
    assert buffer.acquire_lease("c", "p3", 3, later, 60)


def test_an_expired_holder_is_overtaken_whoever_held_it(
    buffer: DynamoConversationBuffer,
) -> None:
    """Naive takeover ("only flush n-1 may overtake"): flush 1 holds and crashes, flush 2 has
    failed open (forfeited); flush 3 could never take over and every later package would fail."""
    assert buffer.acquire_lease("c", "p1", 1, T0, 60)
    buffer.forfeit_turn("c", 2)
    later = T0 + timedelta(seconds=61)
    assert buffer.acquire_lease("c", "p3", 3, later, 60)
    assert buffer.release_lease("c", "p3", 3)
    assert buffer.acquire_lease("c", "p4", 4, later, 60)


def test_a_renewed_lease_is_not_overtaken(buffer: DynamoConversationBuffer) -> None:
    assert buffer.acquire_lease("c", "p1", 1, T0, 60)
    assert buffer.renew_lease("c", "p1", T0 + timedelta(seconds=50), 86_400)
    assert not buffer.acquire_lease("c", "p2", 2, T0 + timedelta(hours=20), 60)
    assert buffer.acquire_lease("c", "p2", 2, T0 + timedelta(hours=25), 60)


def test_leases_of_different_conversations_are_independent(
    buffer: DynamoConversationBuffer,
) -> None:
    assert buffer.acquire_lease("a", "pa1", 1, T0, 60)
    assert buffer.acquire_lease("b", "pb1", 1, T0, 60)


def test_a_package_that_never_got_the_lease_forfeits_its_turn(
    buffer: DynamoConversationBuffer,
) -> None:
    """Naive lease: flush 2 gives up waiting (fails open) while flush 1 holds the lease; when
    flush 1 releases, the turn is 2's forever and flush 3 never runs. Forfeiting moves it on."""
    assert buffer.acquire_lease("c", "p1", 1, T0, 600)
    buffer.forfeit_turn("c", 2)  # flush 2 failed open without ever holding the lease
    assert not buffer.acquire_lease("c", "p3", 3, T0, 600), "flush 1 still holds it"
    assert buffer.release_lease("c", "p1", 1)
    assert buffer.acquire_lease("c", "p3", 3, T0, 600)


def test_forfeiting_the_current_turn_frees_it_at_once(buffer: DynamoConversationBuffer) -> None:
    buffer.forfeit_turn("c", 1)
    buffer.forfeit_turn("c", 2)
    assert buffer.acquire_lease("c", "p3", 3, T0, 600)
