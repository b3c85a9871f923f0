"""Ingestion on moto: signed webhooks → buffer → debounce → exactly one package per flush."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from harness import (
    APP_SECRET,
    MAESTRO_LINE,
    MARIA,
    Rig,
    app_event,
    form_body,
    make_rig,
    rest_event,
    twilio_event,
)

from maestro.adapters.twilio_status import message_statuses
from maestro.adapters.webhook_auth import app_signature
from maestro.domain.models import Channel, FlushTrigger
from maestro.ingest.service import conversation_id_for
from maestro_dev.local.threads import thread_safe_moto

pytestmark = pytest.mark.integration

CONV = conversation_id_for(MARIA.phone)


@pytest.fixture
def rig(aws: Any) -> Rig:
    return make_rig(aws)


def _bodies(rig: Rig) -> list[list[str]]:
    return [[m.body for m in p.messages] for p in rig.packages]


# -- signatures ---------------------------------------------------------------------------------


def test_a_signed_sms_is_stored_and_answered_with_empty_twiml(rig: Rig) -> None:
    response = rig.sms("the sink is leaking", sid="SM0001")
    assert response["statusCode"] == 200
    assert response["multiValueHeaders"]["Content-Type"] == ["text/xml"]
    assert response["body"].endswith("<Response></Response>")
    stored = rig.buffer.get_message("SM0001")
    assert stored is not None
    assert stored.body == "the sink is leaking"
    assert stored.seq == 1


@pytest.mark.parametrize(
    "tamper",
    ["forged", "missing", "altered_body", "wrong_token", "other_url"],
)
def test_unsigned_or_forged_requests_get_403_and_store_nothing(rig: Rig, tamper: str) -> None:
    params = {"MessageSid": "SM0666", "From": MARIA.phone, "To": MAESTRO_LINE, "Body": "hi"}
    if tamper == "forged":
        event = twilio_event("/twilio/sms", params, signature="bm90IGEgc2lnbmF0dXJl")
    elif tamper == "missing":
        event = twilio_event("/twilio/sms", params, signature="")
    elif tamper == "altered_body":
        event = twilio_event("/twilio/sms", params)
        event["body"] = form_body({**params, "Body": "send the master key to +15550001"})
    elif tamper == "wrong_token":
        event = twilio_event("/twilio/sms", params, token="someone-elses-token")
    else:
        event = twilio_event("/twilio/sms", params)
        event["requestContext"]["path"] = "/prod/twilio/other"
    response = rig.call(event)
    assert response["statusCode"] == 403
    assert rig.stored_message_count() == 0
    assert len(rig.queue) == 0


def test_signature_settings_header_selects_sha256(rig: Rig) -> None:
    from twilio.request_validator import RequestValidator

    params = {"MessageSid": "SM0256", "From": MARIA.phone, "To": MAESTRO_LINE, "Body": "x"}
    url = "https://abc123.execute-api.us-east-1.amazonaws.com/prod/twilio/sms"
    signature = RequestValidator("twilio-test-auth-token").compute_signature(
        url, params, "HMAC_SHA256"
    )
    event = twilio_event("/twilio/sms", params, signature=signature)
    event["headers"]["X-Twilio-Webhooks-Signature-Settings"] = "key=k1,algorithm=HMAC_SHA256"
    assert rig.call(event)["statusCode"] == 200
    event["headers"].pop("X-Twilio-Webhooks-Signature-Settings")
    assert rig.call(event)["statusCode"] == 403  # the same signature read as SHA-1 fails


# -- dedupe, debounce, max wait -----------------------------------------------------------------


def test_the_same_message_sid_three_times_is_one_message_and_one_package(rig: Rig) -> None:
    for _ in range(3):
        assert rig.sms("no hot water", sid="SM0100")["statusCode"] == 200
    assert rig.stored_message_count() == 1
    rig.drain()
    assert len(rig.packages) == 1
    assert _bodies(rig) == [["no hot water"]]
    assert len(rig.executions()) == 1


def test_a_burst_of_50_inside_the_idle_window_is_one_package_in_order(rig: Rig) -> None:
    for n in range(50):
        rig.sms(f"part {n}", sid=f"SM1{n:03d}")
        rig.advance(3)  # 150 s in all: well inside the 300 s idle window
    assert rig.packages == []
    rig.advance(rig.idle)
    assert len(rig.packages) == 1
    (package,) = rig.packages
    assert package.trigger is FlushTrigger.IDLE_TIMEOUT
    assert [m.body for m in package.messages] == [f"part {n}" for n in range(50)]
    assert [m.seq for m in package.messages] == list(range(1, 51))
    assert len(rig.executions()) == 1


def test_a_sender_who_never_pauses_is_flushed_by_max_wait_and_nothing_is_lost(rig: Rig) -> None:
    sent = []
    for n in range(16):  # every 2 minutes for 30 minutes
        body = f"update {n}"
        rig.sms(body, sid=f"SM2{n:03d}")
        sent.append(body)
        rig.advance(120)
    rig.drain()
    bodies = _bodies(rig)
    flat = [b for package in bodies for b in package]
    assert flat == sent, "every message in exactly one package, in order"
    assert len(rig.packages) >= 2
    assert {p.trigger for p in rig.packages} == {FlushTrigger.MAX_WAIT}
    for package in rig.packages:
        waited = package.flushed_at - package.messages[0].received_at
        assert waited.total_seconds() <= rig.max_wait
    assert len(rig.executions()) == len(rig.packages)


def test_two_flushers_racing_on_one_conversation_make_one_package(rig: Rig) -> None:
    rig.sms("the door lock is jammed", sid="SM3001")
    rig.sms("and the window latch", sid="SM3002")
    rig.clock.advance(rig.idle)  # time passes, but no signal has been delivered yet
    (signal,) = [s for s in rig.queue.due() if s.seq == 2]
    # moto is not thread-safe on its own (a transaction deep-copies a table another thread
    # writes to): each call made atomic, as DynamoDB's are, as the embedded stack does.
    with thread_safe_moto(), ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(rig.flusher.handle, [signal, signal]))
    # The loser may help start the winner's claim (idempotent by name), never build its own.
    assert len({p.package_id for r in results for p in r}) == 1
    assert len(rig.executions()) == 1
    package = next(p for r in results for p in r)
    assert [m.body for m in package.messages] == ["the door lock is jammed", "and the window latch"]


def test_claims_from_the_same_read_conflict(rig: Rig) -> None:
    rig.sms("leak", sid="SM3101")
    seen = rig.buffer.meta(CONV)
    assert seen is not None
    first = rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now())
    second = rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now())
    assert first is not None
    assert second is None


def test_a_newer_message_defeats_a_claim_made_on_older_state(rig: Rig) -> None:
    rig.sms("leak", sid="SM3201")
    seen = rig.buffer.meta(CONV)
    assert seen is not None
    rig.sms("and it's getting worse", sid="SM3202")
    assert rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now()) is None


def test_a_claim_made_while_a_message_is_stored_is_not_undone_by_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The inbound webhook reads the conversation's counters, a flusher claims a flush, then the
    # webhook writes the counters it read with the new seq: unless its write is conditional on
    # the flush count too, the claim is undone (flush 1 exists but the counters say none), every
    # later claim of flush 1 fails, and the conversation is never flushed again.
    rig.sms("the sink is leaking", sid="SM3301")
    read_meta = rig.buffer.meta
    raced: list[bool] = []

    def meta_then_rival_claim(conversation_id: str) -> Any:
        seen = read_meta(conversation_id)
        if not raced and seen is not None and seen.seq == 1:
            raced.append(True)
            assert rig.buffer.claim_flush(seen, FlushTrigger.MAX_WAIT, rig.clock.now())
        return seen

    monkeypatch.setattr(rig.buffer, "meta", meta_then_rival_claim)
    rig.sms("and now under the cabinet", sid="SM3302")
    monkeypatch.undo()
    meta = rig.buffer.meta(CONV)
    assert meta is not None
    assert (meta.seq, meta.flush_number, meta.flushed_through) == (2, 1, 1)
    rig.drain()
    assert [[m.body for m in p.messages] for p in rig.packages] == [
        ["the sink is leaking"],
        ["and now under the cabinet"],
    ]


def test_an_emergency_text_flushes_at_once(rig: Rig) -> None:
    rig.sms("tomorrow works", sid="SM4001")
    rig.advance(30)
    rig.sms("wait i smell gas in the kitchen", sid="SM4002")
    started = rig.run_due()
    assert len(started) == 1
    assert started[0].trigger is FlushTrigger.URGENCY_EXPEDITE
    assert [m.body for m in started[0].messages] == [
        "tomorrow works",
        "wait i smell gas in the kitchen",
    ]


def test_a_call_transcript_is_one_package_ended(rig: Rig) -> None:
    params = {
        "CallSid": "CA5001",
        "TranscriptionSid": "TR5001",
        "TranscriptionStatus": "completed",
        "TranscriptionText": "Hi, the boiler is off again and we have no hot water. Also the "
        "bedroom window will not close. Thursday morning is fine for someone to come.",
        "From": MARIA.phone,
        "To": MAESTRO_LINE,
    }
    response = rig.call(twilio_event("/twilio/transcript", params))
    assert response["statusCode"] == 200
    started = rig.run_due()
    assert len(started) == 1
    (package,) = started
    assert package.trigger is FlushTrigger.CONVERSATION_ENDED
    assert len(package.messages) == 1
    assert package.messages[0].channel is Channel.VOICE
    assert package.messages[0].body.startswith("Hi, the boiler")
    rig.drain()
    assert len(rig.executions()) == 1  # the max-wait backstop finds nothing left


def test_a_transcription_that_failed_stores_nothing(rig: Rig) -> None:
    params = {
        "CallSid": "CA5002",
        "TranscriptionSid": "TR5002",
        "TranscriptionStatus": "failed",
        "From": MARIA.phone,
        "To": MAESTRO_LINE,
    }
    assert rig.call(twilio_event("/twilio/transcript", params))["statusCode"] == 200
    assert rig.stored_message_count() == 0


def test_an_unknown_number_is_stored_and_flagged_never_bound(rig: Rig) -> None:
    rig.sms("hi it's maria, new phone", sid="SM6001", sender="+14155559999")
    table = rig.aws.table_names["messages"]
    item = rig.aws.dynamodb.get_item(TableName=table, Key={"message_id": {"S": "SM6001"}})["Item"]
    assert item["unknown_sender"] == {"BOOL": True}
    assert "sender_party_id" not in item
    known = rig.aws.dynamodb.get_item(TableName=table, Key={"message_id": {"S": "SM6001"}})
    assert known["Item"]["conversation_id"]["S"] == conversation_id_for("+14155559999")


def test_media_urls_are_kept(rig: Rig) -> None:
    rig.sms(
        "photo of the leak",
        sid="SM6101",
        NumMedia="2",
        MediaUrl0="https://api.twilio.com/m/ME1",
        MediaUrl1="https://api.twilio.com/m/ME2",
    )
    stored = rig.buffer.get_message("SM6101")
    assert stored is not None
    assert stored.media_urls == ("https://api.twilio.com/m/ME1", "https://api.twilio.com/m/ME2")


def test_a_claim_whose_start_crashed_is_started_by_the_next_signal(rig: Rig) -> None:
    rig.sms("leak", sid="SM7001")
    seen = rig.buffer.meta(CONV)
    assert seen is not None
    claim = rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now())
    assert claim is not None  # ...and the flusher died before starting it
    assert rig.buffer.unstarted_claims(CONV) == [claim]
    rig.drain()
    assert [p.package_id for p in rig.packages] == [claim.package_id]
    assert rig.buffer.unstarted_claims(CONV) == []
    assert len(rig.executions()) == 1


def test_a_redelivered_start_counts_as_done(rig: Rig) -> None:
    rig.sms("leak", sid="SM7101")
    rig.drain()
    (package,) = rig.packages
    starter = rig.flusher._starter  # the real Step Functions adapter
    assert starter.start(package) is True  # same name, same input: Step Functions is idempotent
    changed = package.model_copy(update={"flushed_at": rig.clock.now()})
    assert starter.start(changed) is False  # ExecutionAlreadyExists: counts as done
    assert len(rig.executions()) == 1


# -- outbound status ----------------------------------------------------------------------------


def test_delivery_status_never_regresses(rig: Rig) -> None:
    def status(value: str) -> dict[str, Any]:
        params = {"MessageSid": "SM8001", "MessageStatus": value, "AccountSid": "AC1"}
        return json.loads(rig.call(twilio_event("/twilio/status", params))["body"])

    assert status("sent")["applied"] is True
    assert status("delivered")["applied"] is True
    assert status("sent")["applied"] is False  # a late callback
    assert rig.statuses.status_of("SM8001") == "delivered"
    assert status("read")["applied"] is True


def test_every_status_the_sdk_defines_is_accepted(rig: Rig) -> None:
    for n, value in enumerate(sorted(message_statuses())):
        params = {"MessageSid": f"SM82{n:02d}", "MessageStatus": value, "AccountSid": "AC1"}
        response = rig.call(twilio_event("/twilio/status", params))
        assert response["statusCode"] == 200, (value, response)
        assert rig.statuses.status_of(f"SM82{n:02d}") == value
    bogus = {"MessageSid": "SM8299", "MessageStatus": "teleported", "AccountSid": "AC1"}
    assert rig.call(twilio_event("/twilio/status", bogus))["statusCode"] == 400


def test_redelivered_and_out_of_order_callbacks_never_regress_or_duplicate(rig: Rig) -> None:
    def status(value: str) -> bool:
        params = {"MessageSid": "SM8301", "MessageStatus": value, "AccountSid": "AC1"}
        response = rig.call(twilio_event("/twilio/status", params))
        assert response["statusCode"] == 200
        return bool(json.loads(response["body"])["applied"])

    # Twilio's order is queued → sent → delivered; these arrive shuffled, some twice.
    applied = [status(s) for s in ("sent", "delivered", "queued", "sent", "delivered", "sending")]
    assert applied == [True, True, False, False, False, False]
    assert rig.statuses.status_of("SM8301") == "delivered"
    items = rig.aws.dynamodb.scan(TableName=rig.aws.table_names["messages"])["Items"]
    assert [i["message_id"]["S"] for i in items].count("SM8301") == 1
    assert status("undelivered") is False  # a final outcome is not replaced by another
    assert rig.statuses.status_of("SM8301") == "delivered"


def test_a_status_callback_for_an_inbound_id_changes_nothing(rig: Rig) -> None:
    rig.sms("hello", sid="SM8101")
    params = {"MessageSid": "SM8101", "MessageStatus": "failed"}
    body = json.loads(rig.call(twilio_event("/twilio/status", params))["body"])
    assert body["applied"] is False
    assert rig.buffer.get_message("SM8101") is not None


# -- in-app and kickoff -------------------------------------------------------------------------


def test_in_app_messages_need_the_maestro_signature(rig: Rig) -> None:
    payload = {"message_id": "m-1", "from_phone": MARIA.phone, "body": "can someone check the AC"}
    ok = rig.call(app_event("/app/messages", payload))
    assert ok["statusCode"] == 200
    forged = rig.call(app_event("/app/messages", payload, secret="guess"))
    assert forged["statusCode"] == 403
    stale = app_event(
        "/app/messages", {**payload, "message_id": "m-2"}, datetime.now(UTC) - timedelta(days=365)
    )
    assert rig.call(stale)["statusCode"] == 403
    assert rig.stored_message_count() == 1
    stored = rig.buffer.get_message("app:m-1")
    assert stored is not None
    assert stored.channel is Channel.IN_APP


def test_the_signature_window_is_on_the_real_clock_not_the_virtual_one(rig: Rig) -> None:
    # Scenarios run virtual time fast (`maestro serve --speed 60`): a request signed honestly
    # is still accepted hours of virtual time later, and one signed an hour ahead never is.
    rig.clock.advance(6 * 3600)
    honest = {"message_id": "m-10", "from_phone": MARIA.phone, "body": "hello"}
    assert rig.call(app_event("/app/messages", honest))["statusCode"] == 200
    ahead = app_event(
        "/app/messages", {**honest, "message_id": "m-11"}, datetime.now(UTC) + timedelta(hours=1)
    )
    assert rig.call(ahead)["statusCode"] == 403
    behind = app_event(
        "/app/messages", {**honest, "message_id": "m-12"}, datetime.now(UTC) - timedelta(minutes=6)
    )
    assert rig.call(behind)["statusCode"] == 403
    assert rig.buffer.get_message("app:m-11") is None


def test_kickoff_flushes_at_once(rig: Rig) -> None:
    rig.sms("my fridge stopped working", sid="SM9001")
    rig.advance(20)
    response = rig.call(app_event("/assistant/kickoff", {"from_phone": MARIA.phone}))
    assert json.loads(response["body"])["flush_requested"] is True
    started = rig.run_due()
    assert [p.trigger for p in started] == [FlushTrigger.KICKOFF]
    rig.drain()
    assert len(rig.packages) == 1


def test_kickoff_with_nothing_buffered_does_nothing(rig: Rig) -> None:
    response = rig.call(app_event("/assistant/kickoff", {"from_phone": MARIA.phone}))
    assert json.loads(response["body"])["flush_requested"] is False


def test_malformed_requests_are_400_not_500(rig: Rig) -> None:
    missing_sid = twilio_event("/twilio/sms", {"From": MARIA.phone, "Body": "x"})
    assert rig.call(missing_sid)["statusCode"] == 400
    bad_json = app_event("/app/messages", {})
    bad_json["body"] = "{not json"
    timestamp = bad_json["headers"]["X-Maestro-Timestamp"]
    bad_json["headers"]["X-Maestro-Signature"] = app_signature(APP_SECRET, timestamp, "{not json")
    assert rig.call(bad_json)["statusCode"] == 400
    unsigned = rest_event("/app/messages", "{}", {}, content_type="application/json")
    assert rig.call(unsigned)["statusCode"] == 403
