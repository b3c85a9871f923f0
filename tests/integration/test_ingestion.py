"""Ingestion on moto: signed webhooks → buffer → debounce → exactly one package per flush."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from harness import (
    ACCOUNT,
    APP_SECRET,
    MAESTRO_LINE,
    MARIA,
    Rig,
    app_event,
    form_body,
    make_rig,
    rest_event,
    twilio_event,
    twilio_sid,
)

from maestro.adapters.twilio_status import message_statuses, status_rank
from maestro.adapters.webhook_auth import app_signature
from maestro.domain.models import Channel, FlushTrigger, MediaRef, conversation_id_for
from maestro.ingest.service import app_message_id
from maestro.ingest.webhooks import WebhookDeps, build_resolver
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
    sid = twilio_sid("SM", "the sink")
    response = rig.sms("the sink is leaking", sid=sid)
    assert response["statusCode"] == 200
    assert response["multiValueHeaders"]["Content-Type"] == ["text/xml"]
    assert response["body"].endswith("<Response></Response>")
    stored = rig.buffer.get_message(sid)
    assert stored is not None
    assert stored.body == "the sink is leaking"
    assert stored.seq == 1


@pytest.mark.parametrize(
    "tamper",
    ["forged", "missing", "altered_body", "wrong_token", "other_url"],
)
def test_unsigned_or_forged_requests_get_403_and_store_nothing(rig: Rig, tamper: str) -> None:
    params = {
        "MessageSid": twilio_sid("SM", "forged"),
        "AccountSid": ACCOUNT,
        "From": MARIA.phone,
        "To": MAESTRO_LINE,
        "Body": "hi",
    }
    if tamper == "forged":  # in the shape of a signature, and not one
        event = twilio_event("/twilio/sms", params, signature="bm90IGEgc2lnbmF0dXJlIGF0IGFsbA=")
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

    params = {
        "MessageSid": twilio_sid("SM", "sha256"),
        "AccountSid": ACCOUNT,
        "From": MARIA.phone,
        "To": MAESTRO_LINE,
        "Body": "x",
    }
    url = "https://abc123.execute-api.us-east-1.amazonaws.com/prod/twilio/sms"
    signature = RequestValidator("twilio-test-auth-token").compute_signature(
        url, params, "HMAC_SHA256"
    )
    event = twilio_event("/twilio/sms", params, signature=signature)
    event["headers"]["X-Twilio-Webhooks-Signature-Settings"] = "key=k1,algorithm=HMAC_SHA256"
    assert rig.call(event)["statusCode"] == 200
    event["headers"].pop("X-Twilio-Webhooks-Signature-Settings")
    assert rig.call(event)["statusCode"] == 403  # the same signature read as SHA-1 fails


# -- forgery: one signature, one reading ---------------------------------------------------------

# Twilio signs the URL and the form's names and values run together, sorted by name: the same
# signature fits every way of cutting that text into names and values.


def _same_signature(sent: list[tuple[str, str]], recut: list[tuple[str, str]]) -> dict[str, Any]:
    """``recut`` posted with the signature Twilio gave ``sent`` (checked to be the same)."""
    signature = twilio_event("/twilio/sms", sent)["headers"]["X-Twilio-Signature"]
    assert twilio_event("/twilio/sms", recut)["headers"]["X-Twilio-Signature"] == signature
    return twilio_event("/twilio/sms", recut, signature=signature)


def _refusal(response: dict[str, Any]) -> tuple[int, str]:
    """The answer's status and the reason it gives ("" when it is not a refusal)."""
    body = response["body"]
    reason = json.loads(body).get("message", "") if body.startswith("{") else ""
    return response["statusCode"], str(reason)


def test_a_form_recut_around_its_message_sid_is_refused_and_stored_once(rig: Rig) -> None:
    sid = twilio_sid("SM", "the heater rattles")
    sent = [
        ("MessageSid", sid),
        ("AccountSid", ACCOUNT),
        ("From", MARIA.phone),
        ("To", MAESTRO_LINE),
        ("Body", "the heater rattles at night"),
        ("NumMedia", "0"),
    ]
    assert rig.call(twilio_event("/twilio/sms", sent))["statusCode"] == 200
    # MessageSid=<sid>NumMedia0, NumMedia dropped: another SID to dedupe on, the same text.
    recut = [(k, v + "NumMedia0" if k == "MessageSid" else v) for k, v in sent if k != "NumMedia"]
    status, message = _refusal(rig.call(_same_signature(sent, recut)))
    assert status == 400
    assert "MessageSid" in message
    assert rig.stored_message_count() == 1
    rig.drain()
    assert _bodies(rig) == [["the heater rattles at night"]]


def test_a_text_carrying_a_second_form_cannot_be_recut_into_someone_elses_message(
    rig: Rig,
) -> None:
    # A stranger texts words that spell a form (Maria's number, a new SID) and end in a name
    # sorted after every parameter; cut there, the signed text reads as a message from Maria
    # under a SID never seen, and the stranger's real parameters as one unknown one.
    stranger, new_sid = "+14155550166", twilio_sid("SM", "a SID of the stranger's making")
    smuggled = f"From{MARIA.phone}MessageSid{new_sid}NumMedia0To{MAESTRO_LINE}"
    sent = sorted(
        [
            ("AccountSid", ACCOUNT),
            ("Body", f"cancel every order{smuggled}Zz"),
            ("From", stranger),
            ("MessageSid", twilio_sid("SM", "the stranger's text")),
            ("NumMedia", "0"),
            ("To", MAESTRO_LINE),
        ]
    )
    rest = "".join(k + v for k, v in sent if k > "Body")
    recut = [
        ("AccountSid", ACCOUNT),
        ("Body", "cancel every order"),
        ("From", MARIA.phone),
        ("MessageSid", new_sid),
        ("NumMedia", "0"),
        ("To", MAESTRO_LINE),
        ("Zz", rest),
    ]
    status, message = _refusal(rig.call(_same_signature(sent, recut)))
    assert status == 400
    assert "not as Twilio sent it" in message
    # The stranger's own text holds that second form: it reads two ways, and is refused too.
    assert rig.call(twilio_event("/twilio/sms", sent))["statusCode"] == 400
    assert rig.stored_message_count() == 0
    assert rig.buffer.meta(CONV) is None  # nothing in Maria's conversation


def test_a_transcript_recut_to_hide_its_transcription_sid_is_refused(rig: Rig) -> None:
    # Deduplicated on its TranscriptionSid, else on its CallSid: a cut that folds the
    # TranscriptionSid into an unknown name would store the same call again under the CallSid.
    call, transcription = twilio_sid("CA", "a call"), twilio_sid("TR", "a call")
    sent = [
        ("AccountSid", ACCOUNT),
        ("CallSid", call),
        ("From", MARIA.phone),
        ("To", MAESTRO_LINE),
        ("TranscriptionSid", transcription),
        ("TranscriptionStatus", "completed"),
        ("TranscriptionText", "the gate code stopped working"),
    ]
    signature = twilio_event("/twilio/transcript", sent)["headers"]["X-Twilio-Signature"]
    assert rig.call(twilio_event("/twilio/transcript", sent))["statusCode"] == 200
    recut = [
        *sent[:4],
        (f"TranscriptionSid{transcription}TranscriptionStatus", "completed"),
        sent[-1],
    ]
    replay = twilio_event("/twilio/transcript", recut, signature=signature)
    assert twilio_event("/twilio/transcript", recut)["headers"]["X-Twilio-Signature"] == signature
    assert rig.call(replay)["statusCode"] == 400
    assert rig.stored_message_count() == 1
    assert rig.buffer.get_message(call) is None


@pytest.mark.parametrize(
    ("account", "status"),
    [
        (twilio_sid("AC", "someone else's account"), 403),
        ("AClocal", 400),  # not an account SID at all
        (None, 400),  # Twilio always names the account
    ],
    ids=["another account", "a stand-in", "none"],
)
def test_a_webhook_of_another_account_is_refused(
    rig: Rig, account: str | None, status: int
) -> None:
    sid = twilio_sid("SM", "another account")
    params = {"MessageSid": sid, "From": MARIA.phone, "To": MAESTRO_LINE, "Body": "hi"}
    if account is not None:
        params["AccountSid"] = account
    code, message = _refusal(rig.call(twilio_event("/twilio/sms", params)))
    assert code == status
    assert "AccountSid" in message
    assert rig.stored_message_count() == 0


def _counting(deps: WebhookDeps, **changes: Any) -> tuple[Any, list[str]]:
    """A resolver on ``deps`` (changed) that notes each secret it reads."""
    read: list[str] = []

    def secret(name: str, value: Callable[[], str]) -> Callable[[], str]:
        return lambda: read.append(name) or value()

    counted = replace(
        deps,
        twilio_auth_token=secret("twilio", deps.twilio_auth_token),
        app_signing_secret=secret("app", deps.app_signing_secret),
        **changes,
    )
    return build_resolver(counted), read


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-Twilio-Signature", "forged"),
        ("X-Twilio-Signature", "x" * 28),  # an HMAC-SHA1's length, without base64's padding
        ("X-Twilio-Signature", "QUJD" * 11),  # base64 of 33 bytes: no HMAC's length
        ("X-Twilio-Signature", "Zm9v" * 6 + "Zm9=" + "\n"),  # a well-formed one, and a newline
        ("X-Maestro-Signature", "v1=" + "0" * 63),
        ("X-Maestro-Signature", "sha256=" + "0" * 64),
        ("X-Maestro-Timestamp", "1.7e9"),
    ],
)
def test_signature_headers_out_of_shape_are_refused_before_any_secret_is_read(
    rig: Rig, header: str, value: str
) -> None:
    resolver, read = _counting(rig.deps)
    if header.startswith("X-Twilio"):
        params = {
            "MessageSid": twilio_sid("SM", "shape"),
            "AccountSid": ACCOUNT,
            "From": MARIA.phone,
        }
        event = twilio_event("/twilio/sms", params)
    else:
        event = app_event(
            "/app/messages", {"message_id": "s-1", "from_phone": MARIA.phone, "body": "x"}
        )
    assert resolver.resolve(event, None)["statusCode"] == 200  # well formed: read, and checked
    assert len(read) == 1
    event["headers"][header] = value
    response = resolver.resolve(event, None)
    assert response["statusCode"] == 403
    assert "well-formed" in json.loads(response["body"])["message"]
    assert len(read) == 1  # no secret read for it


def test_with_no_twilio_account_configured_the_twilio_routes_answer_503(rig: Rig) -> None:
    resolver, read = _counting(rig.deps, twilio_account_sid=None)
    sid = twilio_sid("SM", "no account")
    for path, params in (
        ("/twilio/sms", {"MessageSid": sid, "AccountSid": ACCOUNT, "From": MARIA.phone}),
        ("/twilio/status", {"MessageSid": sid, "AccountSid": ACCOUNT, "MessageStatus": "sent"}),
        (
            "/twilio/transcript",
            {"CallSid": twilio_sid("CA", "no account"), "AccountSid": ACCOUNT, "From": MARIA.phone},
        ),
    ):
        response = resolver.resolve(twilio_event(path, params), None)
        assert response["statusCode"] == 503, path
        assert "MAESTRO_TWILIO_ACCOUNT_SID" in json.loads(response["body"])["message"]
    assert read == []
    assert rig.stored_message_count() == 0
    # The in-app routes need no Twilio account.
    payload = {"message_id": "n-1", "from_phone": MARIA.phone, "body": "is anyone there"}
    assert resolver.resolve(app_event("/app/messages", payload), None)["statusCode"] == 200


# -- dedupe, debounce, max wait -----------------------------------------------------------------


def test_the_same_message_sid_three_times_is_one_message_and_one_package(rig: Rig) -> None:
    for _ in range(3):
        assert rig.sms("no hot water", sid=twilio_sid("SM", "hot water"))["statusCode"] == 200
    assert rig.stored_message_count() == 1
    rig.drain()
    assert len(rig.packages) == 1
    assert _bodies(rig) == [["no hot water"]]
    assert len(rig.executions()) == 1


@pytest.mark.slow
def test_a_burst_of_50_inside_the_idle_window_is_one_package_in_order(rig: Rig) -> None:
    for n in range(50):
        rig.sms(f"part {n}", sid=twilio_sid("SM", f"1{n:03d}"))
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
        rig.sms(body, sid=twilio_sid("SM", f"2{n:03d}"))
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
    rig.sms("the door lock is jammed", sid=twilio_sid("SM", "3001"))
    rig.sms("and the window latch", sid=twilio_sid("SM", "3002"))
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
    rig.sms("leak", sid=twilio_sid("SM", "3101"))
    seen = rig.buffer.meta(CONV)
    assert seen is not None
    first = rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now())
    second = rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now())
    assert first is not None
    assert second is None


def test_a_newer_message_defeats_a_claim_made_on_older_state(rig: Rig) -> None:
    rig.sms("leak", sid=twilio_sid("SM", "3201"))
    seen = rig.buffer.meta(CONV)
    assert seen is not None
    rig.sms("and it's getting worse", sid=twilio_sid("SM", "3202"))
    assert rig.buffer.claim_flush(seen, FlushTrigger.IDLE_TIMEOUT, rig.clock.now()) is None


def test_a_claim_made_while_a_message_is_stored_is_not_undone_by_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The inbound webhook reads the conversation's counters, a flusher claims a flush, then the
    # webhook writes the counters it read with the new seq: unless its write is conditional on
    # the flush count too, the claim is undone (flush 1 exists but the counters say none), every
    # later claim of flush 1 fails, and the conversation is never flushed again.
    rig.sms("the sink is leaking", sid=twilio_sid("SM", "3301"))
    read_meta = rig.buffer.meta
    raced: list[bool] = []

    def meta_then_rival_claim(conversation_id: str) -> Any:
        seen = read_meta(conversation_id)
        if not raced and seen is not None and seen.seq == 1:
            raced.append(True)
            assert rig.buffer.claim_flush(seen, FlushTrigger.MAX_WAIT, rig.clock.now())
        return seen

    monkeypatch.setattr(rig.buffer, "meta", meta_then_rival_claim)
    rig.sms("and now under the cabinet", sid=twilio_sid("SM", "3302"))
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
    rig.sms("tomorrow works", sid=twilio_sid("SM", "4001"))
    rig.advance(30)
    rig.sms("wait i smell gas in the kitchen", sid=twilio_sid("SM", "4002"))
    started = rig.run_due()
    assert len(started) == 1
    assert started[0].trigger is FlushTrigger.URGENCY_EXPEDITE
    assert [m.body for m in started[0].messages] == [
        "tomorrow works",
        "wait i smell gas in the kitchen",
    ]


def test_a_call_transcript_is_one_package_ended(rig: Rig) -> None:
    params = {
        "CallSid": twilio_sid("CA", "boiler"),
        "TranscriptionSid": twilio_sid("TR", "boiler"),
        "AccountSid": ACCOUNT,
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
        "CallSid": twilio_sid("CA", "inaudible"),
        "TranscriptionSid": twilio_sid("TR", "inaudible"),
        "AccountSid": ACCOUNT,
        "TranscriptionStatus": "failed",
        "From": MARIA.phone,
        "To": MAESTRO_LINE,
    }
    assert rig.call(twilio_event("/twilio/transcript", params))["statusCode"] == 200
    assert rig.stored_message_count() == 0


def test_an_unknown_number_is_stored_and_flagged_never_bound(rig: Rig) -> None:
    sid = twilio_sid("SM", "new phone")
    rig.sms("hi it's maria, new phone", sid=sid, sender="+14155559999")
    table = rig.aws.table_names["messages"]
    item = rig.aws.dynamodb.get_item(TableName=table, Key={"message_id": {"S": sid}})["Item"]
    assert item["unknown_sender"] == {"BOOL": True}
    assert "sender_party_id" not in item
    known = rig.aws.dynamodb.get_item(TableName=table, Key={"message_id": {"S": sid}})
    assert known["Item"]["conversation_id"]["S"] == conversation_id_for("+14155559999")


def test_an_mms_keeps_each_files_url_and_content_type_as_references(rig: Rig) -> None:
    sid = twilio_sid("MM", "photo")
    response = rig.sms(
        "the damp patch behind the fridge, two pictures",
        sid=sid,
        NumMedia="2",
        MediaUrl0="https://api.twilio.com/m/ME1",
        MediaContentType0="image/jpeg",
        MediaUrl1="https://api.twilio.com/m/ME2",
        MediaContentType1="Video/MP4",  # a MIME type is case-insensitive: kept in lower case
        MediaUrl2="https://api.twilio.com/m/ME3",  # beyond NumMedia: not one of this message's
    )
    assert response["statusCode"] == 200
    stored = rig.buffer.get_message(sid)
    assert stored is not None
    assert stored.media == (
        MediaRef(url="https://api.twilio.com/m/ME1", content_type="image/jpeg"),
        MediaRef(url="https://api.twilio.com/m/ME2", content_type="video/mp4"),
    )
    assert [ref.is_photo for ref in stored.media] == [True, False]
    rig.drain()
    (package,) = rig.packages
    assert package.media == stored.media  # the package carries them on to the lanes


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"NumMedia": "2", "MediaUrl0": "https://api.twilio.com/m/ME1"}, "MediaUrl1 is missing"),
        (
            {"NumMedia": "1", "MediaUrl0": "https://x/1", "MediaContentType0": "image/jpeg; x=<"},
            "media.0.content_type",
        ),
        (
            {"NumMedia": "1", "MediaUrl0": "https://x/1", "MediaContentType0": "a" * 200},
            "media.0.content_type",
        ),
        ({"NumMedia": "1", "MediaUrl0": "ftp://x/1", "MediaContentType0": "image/png"}, "url"),
    ],
    ids=["a declared file without its URL", "a content type with junk", "a 200-char type", "ftp"],
)
def test_an_mms_whose_files_are_out_of_shape_is_refused_and_nothing_stored(
    rig: Rig, fields: dict[str, str], why: str
) -> None:
    sid = twilio_sid("MM", f"bad media {why}")
    response = rig.sms("see attached", sid=sid, **fields)
    assert response["statusCode"] == 400, response
    assert why in json.loads(response["body"])["message"]
    assert rig.buffer.get_message(sid) is None


def test_a_claim_whose_start_crashed_is_started_by_the_next_signal(rig: Rig) -> None:
    rig.sms("leak", sid=twilio_sid("SM", "7001"))
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
    rig.sms("leak", sid=twilio_sid("SM", "7101"))
    rig.drain()
    (package,) = rig.packages
    starter = rig.flusher._starter  # the real Step Functions adapter
    assert starter.start(package) is True  # same name, same input: Step Functions is idempotent
    changed = package.model_copy(update={"flushed_at": rig.clock.now()})
    assert starter.start(changed) is False  # ExecutionAlreadyExists: counts as done
    assert len(rig.executions()) == 1


# -- outbound status ----------------------------------------------------------------------------


def _status(sid: str, value: str, **extra: str) -> dict[str, Any]:
    """A status callback as Twilio posts it, signed."""
    params = {"MessageSid": sid, "SmsSid": sid, "AccountSid": ACCOUNT, "MessageStatus": value}
    return twilio_event("/twilio/status", params | extra)


def test_delivery_status_never_regresses(rig: Rig) -> None:
    sid = rig.text("WO-2 is booked for Friday")

    def status(value: str) -> dict[str, Any]:
        return json.loads(rig.call(_status(sid, value))["body"])

    assert status("sent")["applied"] is True
    assert status("delivered")["applied"] is True
    assert status("sent")["applied"] is False  # a late callback
    assert rig.statuses.status_of(sid) == "delivered"
    assert status("read")["applied"] is True


def test_every_status_the_sdk_defines_is_accepted(rig: Rig) -> None:
    for value in sorted(message_statuses()):
        sid = rig.text(f"a text that ends {value}")
        response = rig.call(_status(sid, value))
        assert response["statusCode"] == 200, (value, response)
        # The messenger recorded it queued: a status ranked no higher does not replace it.
        newer = status_rank(value) > status_rank("queued")
        assert rig.statuses.status_of(sid) == (value if newer else "queued")
    bogus = _status(rig.text("a text that teleports"), "teleported")
    assert rig.call(bogus)["statusCode"] == 400


def test_redelivered_and_out_of_order_callbacks_never_regress_or_duplicate(rig: Rig) -> None:
    sid = rig.text("the plumber comes at 9")

    def status(value: str) -> bool:
        response = rig.call(_status(sid, value))
        assert response["statusCode"] == 200
        return bool(json.loads(response["body"])["applied"])

    # Twilio's order is queued → sent → delivered; these arrive shuffled, some twice.
    applied = [status(s) for s in ("sent", "delivered", "queued", "sent", "delivered", "sending")]
    assert applied == [True, True, False, False, False, False]
    assert rig.statuses.status_of(sid) == "delivered"
    items = rig.aws.dynamodb.scan(TableName=rig.aws.table_names["messages"])["Items"]
    assert [i["message_id"]["S"] for i in items].count(sid) == 1
    assert status("undelivered") is False  # a final outcome is not replaced by another
    assert rig.statuses.status_of(sid) == "delivered"


@pytest.mark.parametrize("value", ["delivered", "failed", "queued"])
def test_a_status_callback_for_a_sid_maestro_never_sent_is_refused_and_stores_nothing(
    rig: Rig, value: str
) -> None:
    # Signed, well formed, of this account: and no text of maestro's has that SID. Recording
    # it would make up an outbound message, delivered.
    sid = twilio_sid("SM", "a text someone else sent")
    response = rig.call(_status(sid, value))
    assert response["statusCode"] == 404, response
    assert "not a message maestro sent" in json.loads(response["body"])["message"]
    assert rig.stored_message_count() == 0
    assert rig.statuses.status_of(sid) is None


def test_a_status_callback_for_an_inbound_id_is_refused_and_changes_nothing(rig: Rig) -> None:
    sid = twilio_sid("SM", "hello")
    rig.sms("hello", sid=sid)
    before = rig.buffer.get_message(sid)
    assert rig.call(_status(sid, "failed"))["statusCode"] == 404
    assert rig.buffer.get_message(sid) == before
    assert rig.stored_message_count() == 1


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
    stored = rig.buffer.get_message(app_message_id(MARIA.phone, "m-1"))
    assert stored is not None
    assert stored.channel is Channel.IN_APP


def test_in_app_ids_are_each_senders_own(rig: Rig) -> None:
    # The app numbers each user's messages its own way: two users may both send an "msg-41".
    vic = "+14155550177"
    maria = {"message_id": "msg-41", "from_phone": MARIA.phone, "body": "the dryer squeaks"}
    other = {"message_id": "msg-41", "from_phone": vic, "body": "my balcony door sticks"}
    for payload in (maria, other, maria):  # Maria's, Vic's, then Maria's redelivered
        assert rig.call(app_event("/app/messages", payload))["statusCode"] == 200
    assert rig.stored_message_count() == 2
    for payload in (maria, other):
        stored = rig.buffer.get_message(app_message_id(payload["from_phone"], "msg-41"))
        assert stored is not None
        assert (stored.from_phone, stored.body) == (payload["from_phone"], payload["body"])
    rig.drain()
    assert sorted(_bodies(rig)) == [["my balcony door sticks"], ["the dryer squeaks"]]


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
    assert rig.buffer.get_message(app_message_id(MARIA.phone, "m-11")) is None


def test_kickoff_flushes_at_once(rig: Rig) -> None:
    rig.sms("my fridge stopped working", sid=twilio_sid("SM", "9001"))
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
