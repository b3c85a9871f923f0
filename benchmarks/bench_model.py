"""What a package costs the model, in calls and tokens, and what the window costs to build.

Merges into bench/results.json (and regenerates bench/results.md from it):

- ``model_calls_per_package``: ``{"clear": n, "ambiguous": n}``, averages over 20 one-message
  packages of each kind on the embedded stack with the scripted model, the severity probe and
  the pre-check included. Clear: every reasoning sample agrees. Ambiguous: the samples split and
  say they are unsure (a sure new request settles a package with one sample, docs/sampling.md).
- ``prompt_tokens_by_history``: ``{"10", "100", "1000", "10000"}``: the reasoning prompt's tokens
  for one package whose conversation already has that many prior messages and decisions. With
  ``ANTHROPIC_API_KEY`` set, the SDK's token counting; otherwise an approximation: characters / 4
  of the system prompt, the tool schema and the rendered window (said in the output).
- ``window_build_ms_by_history``: the same keys: the pipeline's window step (two bounded reads,
  the newest messages and the newest decisions, then ``build_window``), median of 20 runs, on
  an in-memory store that reads as DynamoDB's Query with ``Limit`` and
  ``ScanIndexForward=False`` does (the newest N items, whatever the partition's size). moto's
  Query filters the whole partition in Python (measured: 5 ms at 100 items, 80 ms at 10,000), so
  it would measure moto, not the design; its figures are printed alongside for the record.

Run: .venv/bin/python benchmarks/bench_model.py   (make bench runs it)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from _results import merge_results, render_markdown

from maestro.brain.model_port import ModelRequest
from maestro.brain.reasoning import propose_tool, reasoning_request
from maestro.domain.directory import Person, PersonRole
from maestro.domain.memory import DEFAULT_LIMITS, SenderRole, build_window
from maestro.domain.models import (
    FlushTrigger,
    Message,
    OpenContext,
    Package,
    WorkOrder,
    context_for_work_order,
)
from maestro.domain.records import Disposition, MaestroDecision
from maestro_dev.eval_harness.model import new_messages
from maestro_dev.scripted import Scripted, ScriptedModel

HISTORIES = (10, 100, 1000, 10000)
T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)

CLEAR = [
    "the dishwasher is broken", "the kitchen tap is dripping", "my bedroom window won't close",
    "the front door lock is jammed", "the bathroom fan is really loud",
    "the fridge stopped working",
    "the oven does not heat", "the hallway light is out", "the toilet keeps running",
    "the shower drain is clogged", "the garbage disposal is stuck", "the heater is making noise",
    "the bedroom outlet doesn't work", "mice in the kitchen", "the closet door came off",
    "the dryer won't start", "the balcony door sticks", "the washer leaks a little",
    "the thermostat is blank", "the kitchen cabinet hinge broke",
]  # fmt: skip
AMBIGUOUS = [f"{text}, not sure which one" for text in CLEAR]
_TRIAGE = {"route": "reasoning", "severity": "low", "confidence": 0.9, "evidence": ""}


def _plan(lane: str, confidence: float = 0.9) -> dict[str, Any]:
    if lane == "create":
        return {"actions": [{"lane": "create_wo", "confidence": confidence,
                             "params": {"summary": "a maintenance request"}}]}  # fmt: skip
    return {"actions": [{"lane": "continue_with_assistant", "confidence": confidence}]}


def _responder(request: ModelRequest) -> Scripted | None:
    if request.purpose in ("probe", "precheck"):
        return _TRIAGE
    if request.purpose == "reasoning":
        if "not sure which one" in new_messages(request):
            # Split, and unsure (a sure first sample of a new request settles a package alone:
            # docs/sampling.md).
            return _plan("create" if request.sample_index % 2 == 0 else "reply", 0.6)
        return _plan("create")
    if request.purpose == "decide":
        return {"status": "decided", "action": "escalate_to_pm", "confidence": 1.0}
    return None


def model_calls_per_package() -> dict[str, float]:
    from maestro_dev.local.events import signed_sms_event, twilio_sid
    from maestro_dev.local.stack import LocalStack
    from maestro_dev.local.world import housed, seed_directory

    averages: dict[str, float] = {}
    for kind, texts in (("clear", CLEAR), ("ambiguous", AMBIGUOUS)):
        model = ScriptedModel(responder=_responder)
        per_package: list[int] = []
        with LocalStack(model=model) as stack:
            tenants = housed(
                *(
                    Person(
                        person_id=f"tenant-{n}",
                        role=PersonRole.TENANT,
                        phones=(f"+1415558{n:04d}",),
                        unit_id=f"{n + 1}A",
                    )
                    for n in range(len(texts))
                )
            )
            seed_directory(stack, tenants)
            for n, (text, tenant) in enumerate(zip(texts, tenants.parties(), strict=True)):
                before = len(model.calls)
                sid = twilio_sid("SM", f"{kind} {n}")
                event = signed_sms_event(stack.twilio_token, sid, tenant.phone, text)
                assert stack.http(event)["statusCode"] == 200
                stack.advance(stack.idle + 1)
                per_package.append(len(model.calls) - before)
        averages[kind] = round(statistics.fmean(per_package), 2)
    return averages


# -- the window at any history length -------------------------------------------------------------


class _IndexedHistory:
    """Messages and decisions read as DynamoDB Query with Limit, newest first, reads them: the
    cost of a read is the items returned, not the partition's size."""

    def __init__(self, messages: list[Message], decisions: list[MaestroDecision]) -> None:
        self._messages = messages  # in seq order: the newest are the last
        self._decisions = decisions  # in recorded order

    def recent_messages(self, limit: int) -> list[Message]:
        return self._messages[-limit:]

    def recent(self, limit: int) -> list[MaestroDecision]:
        return self._decisions[-limit:]


def _history(
    n: int,
) -> tuple[Package, list[Message], list[MaestroDecision], tuple[OpenContext, ...]]:
    messages = [
        Message(
            message_id=f"SM{i:06d}",
            conversation_id="conv-1",
            from_phone="+14155550100",
            body=f"message {i}: the kitchen sink is leaking again, please send someone",
            received_at=T0 - timedelta(minutes=n - i),
            seq=i + 1,
        )
        for i in range(n)
    ]
    decisions = [
        MaestroDecision(
            decision_id=f"pkg-{i}#dispose#0",
            package_id=f"pkg-{i}",
            conversation_id="conv-1",
            stage="dispose",
            index=0,
            disposition=Disposition.QUEUED,
            lane="relay_to_open_wo",
            target_wo_id="WO-204",
            open_context_count=1,
            confidence=1.0,
            reason="5/5 samples agree",
            recorded_at=T0 - timedelta(minutes=n - i),
        )
        for i in range(n)
    ]
    new = Message(
        message_id="SMnew",
        conversation_id="conv-1",
        from_phone="+14155550100",
        body="any update on the leak?",
        received_at=T0,
        seq=n + 1,
    )
    package = Package(
        package_id="pkg-new",
        conversation_id="conv-1",
        flush_number=n + 1,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone="+14155550100",
        messages=(new,),
        flushed_at=T0,
    )
    wo = WorkOrder(
        wo_id="WO-204",
        tenant_id="tenant-maria",
        unit="3B",
        summary="leak under the kitchen sink",
        created_at=T0 - timedelta(days=3),
        updated_at=T0 - timedelta(hours=1),
    )
    return package, [*messages, new], decisions, (context_for_work_order(wo),)


def window_and_tokens() -> tuple[dict[str, float], dict[str, int], str]:
    build_ms: dict[str, float] = {}
    tokens: dict[str, int] = {}
    counter = _token_counter()
    how = (
        "the Anthropic SDK's token counting"
        if counter is not None
        else ("approximation: characters / 4 of system prompt, tool schema and rendered window")
    )
    role: SenderRole = "tenant"
    for n in HISTORIES:
        package, messages, decisions, contexts = _history(n)
        store = _IndexedHistory(messages, decisions)
        timings: list[float] = []
        window = None
        for _ in range(20):
            started = time.perf_counter()
            history = store.recent_messages(DEFAULT_LIMITS.max_messages + 1)
            recent = store.recent(DEFAULT_LIMITS.max_decisions)
            window = build_window(package, history, recent, contexts, role)
            timings.append((time.perf_counter() - started) * 1000)
        assert window is not None
        build_ms[str(n)] = round(statistics.median(timings), 3)
        request = reasoning_request(window)
        if counter is not None:
            tokens[str(n)] = counter(request)
        else:
            schema = json.dumps(propose_tool().input_schema)
            (turn,) = request.turns
            tokens[str(n)] = (len(request.system) + len(schema) + len(turn.text)) // 4
    return build_ms, tokens, how


def _token_counter() -> Any:
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        return None
    from maestro.adapters.anthropic_model import AnthropicModel

    return AnthropicModel(key).count_tokens


def moto_window_ms() -> dict[str, float]:
    """The same window step on moto's DynamoDB, for the record (its Query is O(partition))."""
    import boto3
    from moto import mock_aws

    from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer
    from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
    from maestro.tables import CONVERSATIONS, DECISIONS, MESSAGES

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    out: dict[str, float] = {}
    with mock_aws():
        ddb = boto3.client("dynamodb")
        for spec in (CONVERSATIONS, DECISIONS, MESSAGES):
            ddb.create_table(**spec.create_table_kwargs(spec.logical_name))
        for n in (100, 10000):
            _, messages, decisions, _ = _history(n)
            cid = f"conv-{n}"
            for m in messages:
                item = json.loads(m.model_copy(update={"conversation_id": cid}).model_dump_json())
                ddb.put_item(
                    TableName="conversations",
                    Item={
                        "conversation_id": {"S": cid},
                        "item": {"S": f"msg#{m.seq:010d}"},
                        "message": {"S": json.dumps(item)},
                    },
                )
            log = DynamoDecisionLog(ddb, "decisions")
            for d in decisions:
                log.append(
                    d.model_copy(
                        update={
                            "conversation_id": cid,
                            "package_id": f"{cid}-{d.package_id}",
                            "decision_id": f"{cid}-{d.decision_id}",
                        }
                    )
                )
            buffer = DynamoConversationBuffer(ddb, "messages", "conversations")
            timings = []
            for _ in range(5):
                started = time.perf_counter()
                buffer._query(cid, "msg#", "msg#~", newest=DEFAULT_LIMITS.max_messages + 1)
                log.recent(cid, DEFAULT_LIMITS.max_decisions)
                timings.append((time.perf_counter() - started) * 1000)
            out[str(n)] = round(statistics.median(timings), 1)
    return out


def main() -> int:
    calls = model_calls_per_package()
    build_ms, tokens, how = window_and_tokens()
    moto = moto_window_ms()
    results = {
        "model_calls_per_package": calls,
        "prompt_tokens_by_history": tokens,
        "prompt_tokens_method": how,
        "window_build_ms_by_history": build_ms,
        "window_reads_on_moto_ms": moto,
    }
    merged = merge_results(results)
    print(render_markdown({k: v for k, v in merged.items() if k in results}))
    spread = max(tokens[k] for k in ("100", "1000", "10000"))
    low = min(tokens[k] for k in ("100", "1000", "10000"))
    clear_ok = calls["clear"] <= 3
    flat = (spread - low) / low <= 0.02 and build_ms["10000"] <= 1.5 * build_ms["100"]
    return 0 if clear_ok and flat else 1


if __name__ == "__main__":
    sys.exit(main())
