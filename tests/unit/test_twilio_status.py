"""Message statuses come from the twilio SDK's own enum, and every one of them is ranked."""

from __future__ import annotations

import pytest
from twilio.rest.api.v2010.account.message import MessageInstance

from maestro.adapters.twilio_status import STATUS_RANK, message_statuses, status_rank


def test_the_statuses_are_the_sdks_own() -> None:
    sdk = {v for k, v in vars(MessageInstance.Status).items() if k.isupper()}
    assert message_statuses() == sdk
    assert "partially_delivered" in message_statuses()  # the hand-kept list lacked it


def test_every_sdk_status_has_a_rank() -> None:
    assert set(STATUS_RANK) == message_statuses()


def test_delivered_outranks_every_status_before_it_and_read_outranks_delivered() -> None:
    for before in ("scheduled", "accepted", "queued", "sending", "sent"):
        assert status_rank(before) < status_rank("delivered")
    assert status_rank("read") > status_rank("delivered")
    # The final outcomes share a rank: the first one recorded stays.
    finals = {"delivered", "undelivered", "failed", "canceled", "partially_delivered"}
    assert len({status_rank(s) for s in finals}) == 1


def test_a_status_the_sdk_does_not_define_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown message status"):
        status_rank("teleported")
