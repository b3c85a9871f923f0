"""Every message type delivered again (#11, the fault matrix's SQS redelivery): each kind of
debounce signal to the flusher, each domain event type to the watcher, and each inbound webhook,
delivered twice more after it was handled, changes no store.

Its own embedded stack (the offline brain, which answers the scenarios that ask questions and
hold calls), apart from the matrix's shared one: two stacks cannot share one process's moto.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from embedded import open_wo

from maestro.adapters.stepfunctions import StepFunctionsTaskTokens
from maestro.domain.directory import Directory, Trade, Vendor
from maestro.domain.dispatch import WaitAnswer
from maestro.domain.events import EVENT_TYPES
from maestro.domain.models import FlushTrigger
from maestro_dev.local.events import (
    signed_app_event,
    signed_sms_event,
    signed_transcript_event,
    twilio_sid,
)
from maestro_dev.local.faults import Stages, Wire
from maestro_dev.local.stack import SWEEP_WINDOW_SECONDS, LocalStack
from maestro_dev.local.world import MARIA, seed, seed_directory

pytestmark = pytest.mark.integration

FIXER = Vendor(
    vendor_id="v-fixit", name="Fixit Appliances", phone="+14155550166", trades=(Trade.APPLIANCE,)
)


def _stores(stack: LocalStack) -> dict[str, list[str]]:
    """Every item of every table that records what happened, and every text Twilio has."""
    found = {
        name: sorted(
            json.dumps(item, sort_keys=True)
            for item in stack.ddb.scan(TableName=table, ConsistentRead=True)["Items"]
        )
        for name, table in stack.tables.items()
        if name not in ("gates", "idempotency")
    }
    found["twilio"] = sorted(json.dumps(m, sort_keys=True) for m in stack.twilio.messages())
    found["executions"] = sorted(e["name"] for e in stack.executions())
    return found


@pytest.mark.slow
def test_every_message_type_delivered_again_changes_nothing() -> None:
    """Every kind of debounce signal (idle, max-wait, kickoff, call ended, urgency; the probe's
    is in the matrix) and every domain event type, each delivered twice more after it was
    handled, and every inbound webhook posted twice more: no store changes."""
    # Every routine job needs the PM's approval here, and the directory has an appliance
    # repairer: the two appliance WOs below run the work order machine through every wo.* event.
    with Wire() as wire, LocalStack(settings={"approval_over_usd": 100}) as stack:
        seed(stack)
        seed_directory(stack, Directory(vendors=(FIXER,)))
        stages = Stages(stack, wire)
        tokens = StepFunctionsTaskTokens(stack.sfn)

        def answer(wo_id: str, said: str) -> None:
            """What the package pipeline sends when the waited-for party replies."""
            run = stack.dispatch.deps.runs.get(wo_id)
            assert run is not None
            assert run.waiting is not None
            reply = WaitAnswer(kind=run.waiting.kind, answer=said)  # type: ignore[arg-type]
            tokens.succeed(run.waiting.token, reply.model_dump(mode="json"))
            stack.wait_for_executions(allow_paused=True)

        posted: list[Callable[[], dict[str, Any]]] = []  # each request, signed when sent

        def post(event: Callable[[], dict[str, Any]]) -> None:
            posted.append(event)
            assert stack.http(event())["statusCode"] == 200

        def text(body: str, then: float) -> None:
            sid = twilio_sid("SM", f"text {len(posted)}")
            post(lambda: signed_sms_event(stack.twilio_token, sid, MARIA.phone, body))
            stack.advance(then)

        idle = stack.idle + 1
        text("5 stars, Vic did a great job with the tap", idle)  # rating.recorded
        open_wo(stack, "WO-204", "leak under the kitchen sink")
        open_wo(stack, "WO-211", "leak from the bathroom ceiling")
        text("the leak is back", idle)  # clarification.asked
        text("1", idle)  # wo.updated
        text("cancel all of them", idle)  # confirm.held
        text("YES", idle)  # confirm.released
        text("my fridge stopped working", 1)  # wo.created, then the assistant's kickoff
        kickoff = json.dumps({"from_phone": MARIA.phone})
        post(lambda: signed_app_event(stack.app_secret, "/assistant/kickoff", kickoff))
        stack.advance(1)
        call = "hi, the dishwasher is broken, bye"  # a call transcript: the call ended
        call_sid = twilio_sid("TR", "the dishwasher call")
        post(lambda: signed_transcript_event(stack.twilio_token, call_sid, MARIA.phone, call))
        stack.advance(1)
        text("I smell gas in the kitchen", 1)  # urgency: escalation.paged
        text("the bedroom window latch is broken and won't lock", stack.idle + 1)
        appliance, latch = (e["name"] for e in stack.wo_executions())
        for said in ("details", "approve", "accept"):  # wo.gathered, .approval_requested,
            answer(appliance, said)  # .offered, .dispatched
        for said in ("details", "refuse"):  # wo.dispatch_failed
            answer(latch, said)
        stack.advance(SWEEP_WINDOW_SECONDS + 60)
        stack.sweep()

        envelopes = list(stack.domain_events())
        kinds = {e["detail"]["type"] for e in envelopes}
        assert kinds == set(EVENT_TYPES)
        signals = [args[0] for args in stages.seen["flusher"]]
        # A signal without a trigger is an idle check or the max-wait backstop (sent at once
        # with its delay): both are among them.
        triggers = {s.trigger for s in signals}
        assert triggers == {
            None,
            FlushTrigger.KICKOFF,
            FlushTrigger.CONVERSATION_ENDED,
            FlushTrigger.URGENCY_EXPEDITE,
        }
        before = _stores(stack)

        for event in posted * 2:
            assert stack.http(event())["statusCode"] == 200
        for signal in signals * 2:
            stack.sqs.send_message(
                QueueUrl=stack.debounce_url, MessageBody=signal.model_dump_json()
            )
        for envelope in envelopes * 2:
            stack.sqs.send_message(QueueUrl=stack.events_url, MessageBody=json.dumps(envelope))
        stack.advance(5)
        stack.poll_watcher()
        stack.advance(SWEEP_WINDOW_SECONDS + 60)
        stack.sweep()
        after = _stores(stack)
        assert stages.entered["flusher"] >= 2 * len(signals) + len(signals)
        assert {name: len(items) for name, items in after.items()} == {
            name: len(items) for name, items in before.items()
        }
        assert after == before
