"""What a package costs, counted on the embedded stack and priced at list prices (#21).

For each package type (single-action, escalation, handback, two-action), one embedded stack with
a scripted model answering as a good model would: 10 tenants each with a short history (3 earlier
questions), then each tenant's package of that type, one after another, then 75 virtual minutes
so every sweep that looks at them runs. Counted, never assumed:

- every AWS SDK call at moto's stubber (``Wire.tap``): DynamoDB read/write units from the items'
  sizes (before and after each write, the items each read returns; GSI writes from the indexes'
  keys; transactions twice), SQS requests in 64 KB chunks (plus the rules' deliveries to queues,
  read from the template), EventBridge entries in 64 KB chunks, Step Functions API calls;
- Lambda invocations and handler wall time per function (``Stages``, plus the webhook and the
  wo-start poller), GB-s from each function's memory in the synthesized prod template, plus the
  model's wait at a stated latency (prices.json's assumptions);
- state transitions from the executions' histories (both machines);
- the Powertools log lines the handlers emit at the prod level (INFO), in bytes, plus stated
  per-invocation, per-history-event and per-request log sizes;
- every model call as the Anthropic SDK sends it (the real SDK against an ``httpx2``
  MockTransport answering the scripted answer): tokens by characters / 4, the cache laid out from
  the request's own ``cache_control`` breakpoints, cold (empty at the package's start) and warm;
- Twilio texts and segments out and in.

A quiet stretch of the same virtual length (no packages) is measured first on the same stack and
subtracted: what runs on a schedule (sweeps, the stranded sweep, the digest) is reported as a
fixed cost, not charged to the packages.

Merges ``cost`` and ``scale`` into bench/results.json and rewrites the generated part of
docs/cost.md. Run: .venv/bin/python benchmarks/bench_cost.py   (make bench runs it; 2-5 min)
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _cost import (
    DOCS_PATH,
    MIX,
    IndexSpec,
    ModelCall,
    Resource,
    generated_part,
    gsi_writes,
    item_size,
    layout_request,
    load_prices,
    load_quotas,
    mix_of,
    package_tokens,
    price_type,
    read_units,
    render_tables,
    scale_report,
    sms_segments,
    write_targets,
    write_units,
)
from _results import merge_results

ROOT = Path(__file__).resolve().parents[1]
TENANTS = int(os.environ.get("BENCH_COST_TENANTS", "6"))  # a smaller run to try it out
HISTORY = int(os.environ.get("BENCH_COST_HISTORY", "3"))
SETTLE_S = 75 * 60  # past the sweeper's lookback (an hour) and window (10 minutes)
CHUNK = 64 * 1024

# -- what the tenants write, per package type ----------------------------------------------------

HISTORY_TEXTS = [
    "quick question, is the laundry room open on sundays? I work late most days",
    "do you know if the parking permits for next year are out yet",
    "who do I ask about a spare key for the mailbox, I lost mine last week",
]
TEXTS: dict[str, list[str]] = {
    "single_action": [
        "the dishwasher is broken, it stops halfway and leaves water at the bottom",
        "the kitchen tap is dripping all night, can someone look at it",
        "my bedroom window won't close properly anymore, there is a draft",
        "the front door lock is jammed, I have to jiggle the key for minutes",
        "the bathroom fan is really loud and rattles when it runs",
        "the fridge stopped keeping things cold since yesterday",
        "the oven does not heat up at all, the light comes on but nothing",
        "the hallway light is out and the switch feels loose",
        "the toilet keeps running after every flush",
        "the shower drain is clogged and the water stays for an hour",
    ],
    "escalation": [
        "there is water pouring through the ceiling onto the light fixture",
        "I smell gas in the kitchen and the stove is off",
        "sparks came out of the outlet and now it smells like burning",
        "the carbon monoxide alarm is going off and my kids have headaches",
        "sewage is coming up through the bathtub drain into the apartment",
        "the ceiling in the living room is bulging and cracking",
        "there is smoke coming from the electrical panel in the hall",
        "someone is trying to break in through the back door right now",
        "water is flooding from under the water heater across the floor",
        "my neighbor collapsed in the hallway and is not responding",
    ],
    "handback": [
        "thanks so much!",
        "ok great, thank you",
        "perfect, thanks again",
        "got it, appreciate it",
        "awesome, thank you!",
        "ok thanks",
        "great, have a nice day",
        "thank you very much",
        "cool, thanks",
        "ok sounds good, thanks",
    ],
    "two_action": [
        "the kitchen sink is leaking and the bedroom outlet doesn't work",
        "the dryer won't start and the balcony door sticks",
        "the heater makes a banging noise and the closet door came off",
        "the garbage disposal is stuck and the hallway light flickers",
        "the thermostat is blank and the bathroom sink drains slowly",
        "the washer leaks a little and a cabinet hinge broke",
        "mice in the kitchen and the window screen is torn",
        "the shower head leaks and the towel bar came loose",
        "the oven door won't shut and the smoke detector chirps",
        "the fridge is noisy and the front door sticks",
    ],
}


def _kind(text: str) -> str:
    for kind, texts in TEXTS.items():
        if any(t in text for t in texts):
            return kind
    return "history"


def _responder(request: Any) -> Any:
    """A good model's answers: triage right, one action per problem, a plain reply."""
    from maestro_dev.eval_harness.model import new_messages

    text = new_messages(request)
    kind = _kind(text)
    if request.purpose in ("probe", "precheck"):
        if kind == "escalation":
            return {
                "route": "escalate",
                "severity": "emergency",
                "confidence": 0.97,
                "evidence": text[:80],
            }
        if kind == "handback":
            return {"route": "handback", "severity": "none", "confidence": 0.95, "evidence": text}
        return {"route": "reasoning", "severity": "low", "confidence": 0.9, "evidence": text[:80]}
    if request.purpose == "reasoning":
        return {"actions": _plan(kind, text)}
    if request.purpose == "compose":
        return {"text": "You're welcome! Text us any time something needs fixing."}
    if request.purpose == "decide":
        return _decision(request)
    return None


def _plan(kind: str, text: str) -> list[dict[str, Any]]:
    if kind in ("single_action", "two_action"):
        parts = text.split(" and ") if kind == "two_action" else [text]
        return [
            {
                "lane": "create_wo",
                "confidence": 0.93,
                "why": "a new problem in the tenant's unit, no open request covers it",
                "evidence": part.strip()[:120],
                "params": {
                    "ref": f"new:{n}",
                    "summary": part.strip()[:80],
                    "category": "general",
                    "urgency": "routine",
                },
            }
            for n, part in enumerate(parts, start=1)
        ]
    return [
        {
            "lane": "continue_with_assistant",
            "confidence": 0.9,
            "why": "a question for the assistant, nothing to change",
            "evidence": text[:120],
        }
    ]


def _decision(request: Any) -> dict[str, Any]:
    schema = request.tools[0].input_schema if request.tools else {}
    allowed = schema.get("properties", {}).get("action", {}).get("enum", [])
    liked = [a for a in allowed if any(w in a for w in ("valid", "proceed", "continue", "keep"))]
    action = (liked or allowed or ["escalate_to_pm"])[0]
    return {"status": "decided", "action": action, "confidence": 0.9, "reason": "it still holds"}


# -- the prod template: one source of truth for memory, concurrency, throttles -------------------


@dataclass
class Template:
    functions: dict[str, dict[str, Any]]  # function key (e.g. "brain") → memory, arch, ...
    flusher_max_concurrency: int | None
    stage_rate: float
    stage_burst: int
    sweeper_env: dict[str, str]
    sweep_every_s: int
    rule_queues: list[tuple[dict[str, Any], int]]  # (event pattern, SQS targets)
    sfn_log_level: str = "ALL"  # the package pipeline's LoggingConfiguration level
    prober_max_concurrency: int | None = None


def synth_prod() -> Template:
    """``python app.py`` for prod (bundling skipped, as the infra tests synthesize)."""
    sys.path.insert(0, str(ROOT / "tests" / "infra"))
    from infra_synth import REACHABLE, cdk_json_environments

    # cdk.json as committed; of the infra tests' stand-ins only what synthesis requires (someone
    # to page and alert), not their caps or retention, so the settings are prod's own.
    environments = cdk_json_environments()
    needed = ("alarm_email", "alarm_sms", "on_call_pm_phone")
    environments["prod"] |= {k: v for k, v in REACHABLE["prod"].items() if k in needed}

    out = Path(tempfile.mkdtemp(prefix="cost-synth-"))
    env = {
        **os.environ,
        "CDK_OUTDIR": str(out),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_CONTEXT_JSON": json.dumps(
            {
                "aws:cdk:bundling-stacks": [],
                "env": "prod",
                "maestro:environments": environments,
            }
        ),
    }
    subprocess.run(
        [sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env, check=True, capture_output=True
    )
    template = json.loads((out / "maestro-prod.template.json").read_text())
    resources = template["Resources"]
    ids: dict[str, str] = {}
    functions: dict[str, dict[str, Any]] = {}
    for lid, r in resources.items():
        if r["Type"] != "AWS::Lambda::Function":
            continue
        p = r["Properties"]
        key = str(p["FunctionName"]).removeprefix("maestro-prod-").replace("-", "_")
        ids[lid] = key
        functions[key] = {
            "memory_mb": p.get("MemorySize", 128),
            "arch": (p.get("Architectures") or ["x86_64"])[0],
            "reserved": p.get("ReservedConcurrentExecutions"),
            "timeout_s": p.get("Timeout", 3),
            "env": p.get("Environment", {}).get("Variables", {}),
        }
    flusher_max = prober_max = None
    for r in resources.values():
        if r["Type"] == "AWS::Lambda::EventSourceMapping":
            target = ids.get(r["Properties"]["FunctionName"].get("Ref", ""))
            limit = r["Properties"].get("ScalingConfig", {}).get("MaximumConcurrency")
            if target == "flusher":
                flusher_max = limit
            elif target == "prober":
                prober_max = limit
    (stage,) = [
        r["Properties"]
        for lid, r in resources.items()
        if r["Type"] == "AWS::ApiGateway::Stage" and lid.startswith("Webhooks")
    ]
    throttle = stage["MethodSettings"][0]
    sweep_every = 300
    rule_queues: list[tuple[dict[str, Any], int]] = []
    for r in resources.values():
        if r["Type"] != "AWS::Events::Rule":
            continue
        p = r["Properties"]
        refs = [
            t["Arn"].get("Fn::GetAtt", [""])[0] if isinstance(t["Arn"], dict) else ""
            for t in p.get("Targets", [])
        ]
        if "ScheduleExpression" in p and any(
            ids.get(ref) == "sweeper" or "Sweep" in ref for ref in refs
        ):
            amount, unit = p["ScheduleExpression"].removeprefix("rate(").rstrip(")").split()
            sweep_every = int(amount) * (60 if unit.startswith("minute") else 3600)
        if "EventPattern" in p:
            queues = sum(1 for t in p.get("Targets", []) if "Queue" in json.dumps(t.get("Arn", "")))
            rule_queues.append((p["EventPattern"], queues))
    sfn_log_level = "ALL"
    for r in resources.values():
        if r["Type"] == "AWS::StepFunctions::StateMachine" and "package-pipeline" in json.dumps(
            r["Properties"].get("StateMachineName", "")
        ):
            sfn_log_level = r["Properties"].get("LoggingConfiguration", {}).get("Level", "OFF")
    return Template(
        sfn_log_level=sfn_log_level,
        functions=functions,
        flusher_max_concurrency=flusher_max,
        prober_max_concurrency=prober_max,
        stage_rate=float(throttle["ThrottlingRateLimit"]),
        stage_burst=int(throttle["ThrottlingBurstLimit"]),
        sweeper_env={
            k.removeprefix("MAESTRO_").lower(): v
            for k, v in functions["sweeper"]["env"].items()
            if k.startswith("MAESTRO_") and isinstance(v, str)
        },
        sweep_every_s=sweep_every,
        rule_queues=rule_queues,
    )


def _matches(pattern: dict[str, Any], entry: dict[str, Any]) -> bool:
    for field_, key in (("source", "Source"), ("detail-type", "DetailType")):
        if field_ in pattern and entry.get(key) not in pattern[field_]:
            return False
    return True


# -- the meter -----------------------------------------------------------------------------------

STAGE_FUNCTION = {
    "webhook": "inbound_sms",
    "inbound": "inbound_sms",
    "fallback": "inbound_fallback",
}


@dataclass
class Counts:
    invocations: Counter[str] = field(default_factory=Counter)
    handler_s: Counter[str] = field(default_factory=Counter)
    model_wait_s: Counter[str] = field(default_factory=Counter)
    rru: Counter[str] = field(default_factory=Counter)  # by table (index reads under the table)
    wru: Counter[str] = field(default_factory=Counter)  # by table, GSI writes included
    gsi_wru: Counter[str] = field(default_factory=Counter)
    key_wru: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    key_packages: dict[tuple[str, str, str], set[int]] = field(default_factory=dict)
    index_rru: Counter[tuple[str, str]] = field(default_factory=Counter)
    ddb_requests: Counter[str] = field(default_factory=Counter)
    sqs_requests: float = 0
    events: float = 0
    event_bytes: float = 0
    put_events_calls: float = 0
    sfn_calls: Counter[str] = field(default_factory=Counter)
    log_bytes: Counter[str] = field(default_factory=Counter)
    api_requests: float = 0
    sqs_invocations: float = 0  # SQS-triggered Lambda invocations (trace roots)
    by_stage_ddb: Counter[str] = field(default_factory=Counter)
    wru_by_stage: Counter[str] = field(default_factory=Counter)
    rru_by_stage: Counter[str] = field(default_factory=Counter)


class _LogMeter(io.TextIOBase):
    def __init__(self, meter: Meter) -> None:
        self.meter = meter

    def write(self, text: str) -> int:
        self.meter.count_log(len(text.encode()))
        return len(text)


class Meter:
    """Counts what the stack does (see the module's docstring); ``reset`` starts a phase."""

    def __init__(self, wire: Any, template: Template, prices: dict[str, Any]) -> None:
        self.wire = wire
        self.template = template
        self.prices = prices
        self.counts = Counts()
        self.package_index = 0
        self._lock = threading.Lock()
        wire.tap = self.tap

    def reset(self) -> Counts:
        with self._lock:
            done, self.counts = self.counts, Counts()
        return done

    def count_log(self, size: int) -> None:
        stage = self.wire.stage
        with self._lock:
            self.counts.log_bytes[STAGE_FUNCTION.get(stage, stage) or "unattributed"] += size

    def invoked(self, stage: str, seconds: float) -> None:
        function = STAGE_FUNCTION.get(stage, stage)
        with self._lock:
            self.counts.invocations[function] += 1
            self.counts.handler_s[function] += seconds
            if function in ("flusher", "prober", "watcher", "wo_start", "inbound_fallback"):
                self.counts.sqs_invocations += 1

    def model_waited(self, stage: str | None, seconds: float) -> None:
        function = STAGE_FUNCTION.get(stage or "", stage or "unattributed")
        with self._lock:
            self.counts.model_wait_s[function] += seconds

    # -- the wire -------------------------------------------------------------------------------

    def tap(self, call: Any, body: dict[str, Any], forward: Callable[[], Any]) -> Any:
        if call.service == "dynamodb" and call.stage is not None:
            return self._dynamodb(call, body, forward)
        response = forward()
        if call.service == "sqs":  # the stack's pollers are untagged: they are the ESM's calls
            self._sqs(call.operation, body, response)
        elif call.stage is not None and call.service == "eventbridge":
            self._eventbridge(body)
        elif call.stage is not None and call.service == "sfn":
            with self._lock:
                self.counts.sfn_calls[call.operation] += 1
        return response

    def _sqs(self, operation: str, body: dict[str, Any], response: Any) -> None:
        if operation in ("SendMessage",):
            size = len(str(body.get("MessageBody", "")).encode()) + len(
                json.dumps(body.get("MessageAttributes", {}))
            )
            requests = max(1, math.ceil(size / CHUNK))
        elif operation == "SendMessageBatch":
            size = sum(len(str(e.get("MessageBody", "")).encode()) for e in body.get("Entries", []))
            requests = max(1, math.ceil(size / CHUNK))
        elif operation == "ReceiveMessage":
            payload = _json(response)
            size = sum(len(str(m.get("Body", "")).encode()) for m in payload.get("Messages", []))
            requests = max(1, math.ceil(size / CHUNK))
        elif operation in ("DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility"):
            requests = 1
        else:
            return  # queue management (CreateQueue, GetQueueAttributes): the stack's set-up
        with self._lock:
            self.counts.sqs_requests += requests

    def _eventbridge(self, body: dict[str, Any]) -> None:
        entries = body.get("Entries", [])
        deliveries = 0
        events = 0
        size_total = 0
        for entry in entries:
            size = len(json.dumps(entry).encode())
            size_total += size
            events += max(1, math.ceil(size / CHUNK))
            deliveries += sum(
                q for pattern, q in self.template.rule_queues if _matches(pattern, entry)
            )
        with self._lock:
            self.counts.events += events
            self.counts.event_bytes += size_total
            self.counts.put_events_calls += 1
            self.counts.sqs_requests += deliveries  # each rule's SendMessage to its queue

    def _dynamodb(self, call: Any, body: dict[str, Any], forward: Callable[[], Any]) -> Any:
        op = call.operation
        writes = write_targets(op, body)
        before = [_stored(table, key) for table, key, _ in writes]
        response = forward()
        ok = response.status_code < 300
        after = [_stored(table, key) for table, key, _ in writes] if ok else before
        payload = _json(response) if ok else {}
        with self._lock:
            c = self.counts
            for table in call.targets:
                c.ddb_requests[table] += 1
            c.by_stage_ddb[call.stage] += 1
            for (table, key, transactional), old, new in zip(writes, before, after, strict=True):
                size = max(item_size(old), item_size(new))
                units = write_units(size, transactional=transactional)
                c.wru[_logical(table)] += units
                c.wru_by_stage[call.stage] += units
                hash_attr = _key_attrs(table)[0]
                hot = (_logical(table), "", _key_value(new or old or key, hash_attr))
                c.key_wru[hot] += units
                c.key_packages.setdefault(hot, set()).add(self.package_index)
                if ok:
                    for index, gsi_units, value in _gsi_writes(table, old, new):
                        c.wru[_logical(table)] += gsi_units
                        c.gsi_wru[_logical(table)] += gsi_units
                        c.wru_by_stage[call.stage] += gsi_units
                        where = (_logical(table), index, value)
                        c.key_wru[where] += gsi_units
                        c.key_packages.setdefault(where, set()).add(self.package_index)
            for table, index, units in _read_units(op, body, payload):
                c.rru[_logical(table)] += units
                c.index_rru[(_logical(table), index)] += units
                c.rru_by_stage[call.stage] += units
        return response


def _json(response: Any) -> dict[str, Any]:
    try:
        loaded = json.loads(response.content or b"{}")
    except (TypeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _logical(table: str) -> str:
    from maestro_dev.local.stack import PREFIX

    return table.removeprefix(PREFIX)


def _table(name: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    from maestro_dev.local.stack import ACCOUNT, REGION

    return dynamodb_backends[ACCOUNT][REGION].get_table(name)


def _key_attrs(name: str) -> tuple[str, str | None]:
    table = _table(name)
    return table.hash_key_attr, table.range_key_attr


def _key_value(item: dict[str, Any], attr: str) -> str:
    value = item.get(attr, {})
    return json.dumps(value, sort_keys=True)


def _stored(name: str, key: dict[str, Any]) -> dict[str, Any] | None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = _table(name)
    hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
    if hash_attr not in key:
        return None
    try:
        item = table.get_item(
            DynamoType(key[hash_attr]),
            DynamoType(key[range_attr]) if range_attr and range_attr in key else None,
        )
    except Exception:
        return None
    if item is None:
        return None
    found: dict[str, Any] = item.to_json()["Attributes"]
    return found


def _gsi_writes(
    name: str, old: dict[str, Any] | None, new: dict[str, Any] | None
) -> list[tuple[str, int, str]]:
    table = _table(name)
    indexes = [
        IndexSpec(g.name, tuple(k["AttributeName"] for k in g.schema), g.projection or {})
        for g in table.global_indexes
    ]
    return gsi_writes(indexes, (table.hash_key_attr, table.range_key_attr), old, new)


def _read_units(
    op: str, body: dict[str, Any], payload: dict[str, Any]
) -> list[tuple[str, str, float]]:
    consistent = bool(body.get("ConsistentRead"))
    if op == "GetItem":
        return [
            (
                body["TableName"],
                "",
                read_units(item_size(payload.get("Item")), consistent=consistent),
            )
        ]
    if op in ("Query", "Scan"):
        items = payload.get("Items", [])
        size = sum(item_size(i) for i in items)
        count, scanned = payload.get("Count", len(items)), payload.get("ScannedCount", len(items))
        if count and scanned > count:  # a filter: every item it read is charged
            size = size * scanned // count
        elif not count and scanned:
            size = scanned * 100
        return [
            (body["TableName"], body.get("IndexName", ""), read_units(size, consistent=consistent))
        ]
    if op == "BatchGetItem":
        found = []
        for table, items in payload.get("Responses", {}).items():
            strong = bool(body.get("RequestItems", {}).get(table, {}).get("ConsistentRead"))
            found += [(table, "", read_units(item_size(i), consistent=strong)) for i in items]
        return found
    if op == "TransactGetItems":
        names = [next(iter(e.values()))["TableName"] for e in body.get("TransactItems", [])]
        return [
            (t, "", read_units(item_size(r.get("Item")), consistent=True, transactional=True))
            for t, r in zip(names, payload.get("Responses", []), strict=False)
        ]
    if op == "TransactWriteItems":  # condition checks read nothing extra: charged as writes
        return []
    return []


# -- the model, through the SDK ------------------------------------------------------------------


class MeteredModel:
    """The scripted model's answers, sent and parsed through the real Anthropic SDK (against a
    MockTransport), each request's body laid out for tokens and the cache."""

    def __init__(self, meter: Meter, prices: dict[str, Any]) -> None:
        import httpx2

        from maestro.adapters.anthropic_model import AnthropicModel
        from maestro_dev.scripted import ScriptedModel

        self.meter = meter
        self.prices = prices
        self.scripted = ScriptedModel(responder=_responder, name="good-model script")
        self.calls: list[ModelCall] = []
        self._local = threading.local()
        self.sdk = AnthropicModel(
            "bench-cost-offline",
            max_retries=0,
            http_client=httpx2.Client(transport=httpx2.MockTransport(self._api)),
        )

    def describe(self) -> str:
        return f"{self.scripted.describe()}, sent through the Anthropic SDK to a mock transport"

    def model_id(self, tier: str) -> str:
        return self.sdk.model_id(tier)  # type: ignore[arg-type]

    def ask(self, request: Any) -> Any:
        self._local.answer = self.scripted.ask(request)
        self._local.request = request
        return self.sdk.ask(request)

    def _api(self, http_request: Any) -> Any:
        import httpx2

        body = json.loads(http_request.content)
        answer, request = self._local.answer, self._local.request
        content: list[dict[str, Any]] = []
        if answer.text:
            content.append({"type": "text", "text": answer.text})
        content += [
            {"type": "tool_use", "id": u.id, "name": u.name, "input": u.input}
            for u in answer.tool_uses
        ]
        output = math.ceil(len(json.dumps(content)) / 4)
        call = layout_request(
            body,
            tier=request.tier,
            purpose=request.purpose,
            stage=self.meter.wire.stage or "unattributed",
            output_tokens=output,
            tool_system_tokens=self.prices["anthropic"]["tool_use_system_tokens"],
        )
        latency = self.prices["assumptions"]["model_latency"][request.tier]
        self.meter.model_waited(
            self.meter.wire.stage,
            latency["first_token_s"] + output / latency["output_tokens_per_s"],
        )
        self.calls.append(call)
        return httpx2.Response(
            200,
            json={
                "id": "msg_bench_cost",
                "type": "message",
                "role": "assistant",
                "model": self.model_id(request.tier),
                "content": content,
                "stop_reason": "tool_use" if answer.tool_uses else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": call.input_tokens, "output_tokens": output},
            },
        )


# -- one package type on one stack ---------------------------------------------------------------


@dataclass
class TypeRun:
    kind: str
    measured: Counts
    quiet: Counts
    transitions: float
    quiet_transitions: float
    executions: float
    history_events: float
    model_calls: list[list[ModelCall]]
    texts_out: list[str]
    pages: int  # texts to the on-call PM
    texts_in: list[str]
    seconds: float


def run_type(kind: str, template: Template, prices: dict[str, Any]) -> TypeRun:
    from maestro.domain.directory import Person, PersonRole
    from maestro.observability import logger
    from maestro.settings import SweeperSettings
    from maestro.verify.entry import build_sweeper
    from maestro_dev.local.events import signed_sms_event, twilio_sid
    from maestro_dev.local.faults import Stages, Wire
    from maestro_dev.local.stack import ON_CALL_PM, LocalStack
    from maestro_dev.local.world import housed, seed, seed_directory

    started = time.perf_counter()
    with Wire() as wire:
        meter = Meter(wire, template, prices)
        model = MeteredModel(meter, prices)
        with LocalStack(model=model, histories_kept=100_000) as stack:
            # The cloud's sweeper: the prod template's settings, this stack's tables.
            fields = SweeperSettings.model_fields
            given = {k: v for k, v in template.sweeper_env.items() if k in fields}
            given |= {
                "decisions_table": stack.tables["decisions"],
                "ledger_table": stack.tables["ledger"],
                "region": "us-east-1",
            }
            stack.sweeper = build_sweeper(SweeperSettings(**given), stack.clock)

            class TimedStages(Stages):
                def run(
                    self, stage: str, call: Callable[[], Any], args: tuple[Any, ...] = ()
                ) -> Any:
                    if stage == "webhook":  # inside the inbound function, timed around it
                        return super().run(stage, call, args)
                    begun = time.perf_counter()
                    try:
                        return super().run(stage, call, args)
                    finally:
                        meter.invoked(stage, time.perf_counter() - begun)

            stages = TimedStages(stack, wire)
            inbound = stack.http

            def http(event: dict[str, Any]) -> dict[str, Any]:
                with meter._lock:
                    meter.counts.api_requests += 1
                result: dict[str, Any] = stages.run("inbound", lambda: inbound(event), (event,))
                return result

            stack.http = http  # type: ignore[method-assign]
            starter = stack.wo_starter.start

            def wo_start(wo_id: str) -> bool:
                started_: bool = stages.run("wo_start", lambda: starter(wo_id), (wo_id,))
                return started_

            stack.wo_starter.start = wo_start  # type: ignore[method-assign]
            handler = logger.registered_handler
            handler.setStream(_LogMeter(meter))  # type: ignore[attr-defined]
            logging.getLogger("moto").setLevel(logging.CRITICAL)

            tenants = housed(
                *(
                    Person(
                        person_id=f"tenant-cost-{n}",
                        role=PersonRole.TENANT,
                        phones=(f"+1415557{n:04d}",),
                        unit_id=f"{n + 1}C",
                    )
                    for n in range(TENANTS)
                )
            )
            seed(stack)
            seed_directory(stack, tenants)
            parties = list(tenants.parties())

            def send(n: int, text: str, label: str) -> None:
                sid = twilio_sid("SM", f"{kind} {label} {n}")
                event = signed_sms_event(stack.twilio_token, sid, parties[n].phone, text)
                assert stack.api(event)["statusCode"] == 200

            for round_ in range(HISTORY):
                for n in range(TENANTS):
                    send(n, HISTORY_TEXTS[(n + round_) % len(HISTORY_TEXTS)], f"h{round_}")
                stack.advance(stack.idle + 1, patience=60)
            stack.advance(SETTLE_S, patience=60)
            logger.setLevel("INFO")  # the prod level, for the log bytes

            span = TENANTS * (stack.idle + 1)
            arns = _arns(stack)
            meter.reset()
            stack.advance(span, patience=60)
            stack.advance(SETTLE_S, patience=60)
            quiet = meter.reset()
            quiet_arns = _arns(stack) - arns
            quiet_transitions, _, _ = _transitions(stack, quiet_arns)

            arns = _arns(stack)
            outbox = len(stack.twilio.messages())
            calls_before = len(model.calls)
            per_package: list[list[ModelCall]] = []
            texts_in = []
            for n in range(TENANTS):
                meter.package_index = n + 1
                mark = len(model.calls)
                text = TEXTS[kind][n]
                texts_in.append(text)
                send(n, text, "measured")
                stack.advance(stack.idle + 1, patience=60)
                per_package.append(model.calls[mark:])
            meter.package_index = TENANTS + 1
            stack.advance(SETTLE_S, patience=60)
            measured = meter.reset()
            late = model.calls[calls_before + sum(len(c) for c in per_package) :]
            if late:  # calls after the packages' own advance (none expected): the last one's
                per_package[-1] = [*per_package[-1], *late]
            new_arns = _arns(stack) - arns
            transitions, executions, events = _transitions(stack, new_arns)
            sent = stack.twilio.messages()[outbox:]
            texts_out = [m["body"] for m in sent]
            pages = sum(1 for m in sent if m["to"] == ON_CALL_PM)
    return TypeRun(
        kind=kind,
        measured=measured,
        quiet=quiet,
        transitions=transitions,
        quiet_transitions=quiet_transitions,
        executions=executions,
        history_events=events,
        model_calls=per_package,
        texts_out=texts_out,
        pages=pages,
        texts_in=texts_in,
        seconds=time.perf_counter() - started,
    )


def _arns(stack: Any) -> set[str]:
    return {e["executionArn"] for e in [*stack.executions(), *stack.wo_executions()]}


def _transitions(stack: Any, arns: set[str]) -> tuple[float, float, float]:
    """State transitions (states entered), executions, history events of ``arns``."""
    transitions = 0
    events = 0
    for arn in arns:
        history = stack.history(arn)
        events += len(history)
        transitions += sum(1 for e in history if str(e["type"]).endswith("StateEntered"))
    return transitions, len(arns), events


# -- per package -----------------------------------------------------------------------------------


def per_package(run: TypeRun, template: Template, prices: dict[str, Any]) -> dict[str, Any]:
    """The run's counts minus the quiet stretch's, per package."""
    n = TENANTS
    m, q = run.measured, run.quiet
    assumptions = prices["assumptions"]

    def net(a: float, b: float) -> float:
        return max(0.0, (a - b) / n)

    functions = sorted(set(m.invocations) | set(m.model_wait_s))
    lam: dict[str, dict[str, float]] = {}
    gb_s = 0.0
    for f in functions:
        memory = template.functions.get(f, {}).get("memory_mb", 512) / 1024
        seconds = net(m.handler_s[f], q.handler_s[f]) + net(m.model_wait_s[f], q.model_wait_s[f])
        lam[f] = {
            "invocations": round(net(m.invocations[f], q.invocations[f]), 3),
            "handler_s": round(net(m.handler_s[f], q.handler_s[f]), 4),
            "model_wait_s": round(net(m.model_wait_s[f], q.model_wait_s[f]), 3),
            "gb_seconds": round(memory * seconds, 4),
        }
        gb_s += memory * seconds
    invocations = sum(v["invocations"] for v in lam.values())
    tables = sorted(set(m.wru) | set(m.rru))
    hot = _hot_keys(m, n, template)
    log_bytes = sum(net(m.log_bytes[k], q.log_bytes[k]) for k in set(m.log_bytes))
    tokens_cold = package_tokens(run.model_calls, _minimums(prices), warm=False)
    tokens_warm = package_tokens(run.model_calls, _minimums(prices), warm=True)
    calls: Counter[str] = Counter()
    for package in run.model_calls:
        calls.update(c.tier for c in package)
    by_purpose: Counter[str] = Counter()
    for package in run.model_calls:
        by_purpose.update(f"{c.tier}:{c.purpose}" for c in package)
    net_transitions = net(run.transitions, run.quiet_transitions)
    return {
        "lambda": {
            "invocations": round(invocations, 3),
            "gb_seconds": round(gb_s, 4),
            "by_function": lam,
        },
        "step_functions": {
            "transitions": round(net_transitions, 2),
            "executions": round(run.executions / n, 2),
            "history_events": round(run.history_events / n, 2),
            "api_calls": {k: round(net(v, q.sfn_calls[k]), 3) for k, v in m.sfn_calls.items()},
        },
        "dynamodb": {
            "rru": round(sum(net(m.rru[t], q.rru[t]) for t in tables), 3),
            "wru": round(sum(net(m.wru[t], q.wru[t]) for t in tables), 3),
            "gsi_wru": round(sum(net(m.gsi_wru[t], q.gsi_wru[t]) for t in tables), 3),
            "by_table": {
                t: {
                    "rru": round(net(m.rru[t], q.rru[t]), 3),
                    "wru": round(net(m.wru[t], q.wru[t]), 3),
                    "requests": round(net(m.ddb_requests[t], q.ddb_requests[t]), 3),
                }
                for t in tables
            },
            "requests_by_stage": {
                s: round(net(v, q.by_stage_ddb[s]), 3) for s, v in sorted(m.by_stage_ddb.items())
            },
            "wru_by_stage": {
                s: round(net(v, q.wru_by_stage[s]), 3) for s, v in sorted(m.wru_by_stage.items())
            },
            "rru_by_stage": {
                s: round(net(v, q.rru_by_stage[s]), 3) for s, v in sorted(m.rru_by_stage.items())
            },
            "shared_partitions": hot,
            "index_rru": {
                f"{t}/{i or '(table)'}": round(net(v, q.index_rru[(t, i)]), 3)
                for (t, i), v in sorted(m.index_rru.items())
            },
        },
        "sqs": {"requests": round(net(m.sqs_requests, q.sqs_requests), 3)},
        "eventbridge": {
            "events": round(net(m.events, q.events), 3),
            "bytes": round(net(m.event_bytes, q.event_bytes), 1),
            "put_events_calls": round(net(m.put_events_calls, q.put_events_calls), 3),
        },
        "api": {"requests": round(net(m.api_requests, q.api_requests), 3)},
        "logs": {
            "powertools_bytes": round(log_bytes, 1),
            "lambda_platform_bytes": round(
                invocations * assumptions["lambda_platform_log_bytes_per_invocation"]["value"], 1
            ),
            # At level ERROR only failed states log: the measured packages succeed.
            "step_functions_bytes": round(
                run.history_events / n * assumptions["sfn_log_bytes_per_history_event"]["value"], 1
            )
            if template.sfn_log_level == "ALL"
            else 0.0,
            "api_access_bytes": round(
                net(m.api_requests, q.api_requests)
                * assumptions["apigateway_access_log_bytes"]["value"],
                1,
            ),
        },
        "xray": {
            "traces": round(
                net(m.api_requests, q.api_requests)
                + net(m.sqs_invocations, q.sqs_invocations)
                + run.executions / n,
                3,
            )
        },
        "anthropic": {
            "calls": {t: round(v / n, 2) for t, v in sorted(calls.items())},
            "calls_by_purpose": {k: round(v / n, 2) for k, v in sorted(by_purpose.items())},
            "tokens_cold": {t: v.as_dict() for t, v in tokens_cold.items()},
            "tokens_warm": {t: v.as_dict() for t, v in tokens_warm.items()},
            "prompt_tokens_by_purpose": _prompt_sizes(run.model_calls),
        },
        "twilio": {
            "texts_out": round(len(run.texts_out) / n, 2),
            "pages": round(run.pages / n, 2),
            "segments_out": round(sum(sms_segments(t) for t in run.texts_out) / n, 2),
            "texts_in": round(len(run.texts_in) / n, 2),
            "segments_in": round(sum(sms_segments(t) for t in run.texts_in) / n, 2),
        },
        "fixed_per_hour": _fixed(q, run),
    }


def _minimums(prices: dict[str, Any]) -> dict[str, int]:
    return {t: prices["anthropic"][t]["cache_min_tokens"] for t in ("cheap", "strong")}


def _prompt_sizes(packages: list[list[ModelCall]]) -> dict[str, dict[str, float]]:
    sizes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for package in packages:
        for call in package:
            cached = max((t for _, t in call.prefixes), default=0)
            sizes[f"{call.tier}:{call.purpose}"].append((call.input_tokens, cached))
    return {
        k: {
            "input_tokens": round(statistics.fmean(a for a, _ in v), 1),
            "marked_prefix_tokens": round(statistics.fmean(b for _, b in v), 1),
        }
        for k, v in sorted(sizes.items())
    }


def _hot_keys(m: Counts, n: int, template: Template) -> dict[str, dict[str, Any]]:
    """Partitions written by more than one package's work (a key shared across packages, e.g.
    one per UTC day): their write units per package, which the scale check holds against a
    partition's 1,000 WCU/s. Keys of one package each (its id, its conversation) are not.

    The shards of a sharded key (the account's daily caps, a day's completions) count as one
    key, and its units are spread over its configured shard count: each shard's share of the
    writes, as the stable hash that picks a shard spreads them evenly (a handful of measured
    packages land unevenly on a few shards; at 100 packages/s they do not)."""
    units_of: Counter[tuple[str, str, str]] = Counter()
    packages_of: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    shards_of: dict[tuple[str, str, str], int] = {}
    for (table, index, value), units in m.key_wru.items():
        family, shards = _shard_family(table, index, value, template)
        where = (table, index, family)
        units_of[where] += units
        packages_of[where] |= m.key_packages.get((table, index, value), set()) - {0, n + 1}
        shards_of[where] = shards
    found: dict[str, dict[str, Any]] = {}
    for (table, index, value), units in units_of.items():
        packages = packages_of[(table, index, value)]
        # Each measured package is another tenant's: a key written during several of them is
        # shared (one written during two may be a callback landing in the next one's turn).
        if len(packages) < max(3, n // 2):
            continue
        name = f"{table}/{index or '(table)'}"
        shards = shards_of[(table, index, value)]
        share = units / n / shards
        if share > found.get(name, {}).get("wru_per_package", 0):
            found[name] = {
                "wru_per_package": round(share, 3),
                "packages_sharing": len(packages),
                "key": value[:60],
                "shards": shards,
            }
    return found


_ACCOUNT_SHARD = re.compile(r'^\{"S": "(caps#account)#\d+"\}$')
_DAY_SHARD = re.compile(r'^\{"S": "(\d{4}-\d{2}-\d{2})#\d+"\}$')


def _shard_family(table: str, index: str, value: str, template: Template) -> tuple[str, int]:
    """The key a sharded partition key is a shard of (``<name>#<n>``), and its shard count from
    the prod template (else the code's default); any other key is its own, one shard."""
    from maestro.adapters.dynamodb_caps import ACCOUNT_SHARDS
    from maestro.tables import COMPLETION_SHARDS

    if table == "conversations" and not index and (caps := _ACCOUNT_SHARD.match(value)):
        return f'{{"S": "{caps[1]}#<n>"}}', ACCOUNT_SHARDS
    if (table, index) == ("decisions", "completions_by_day") and (day := _DAY_SHARD.match(value)):
        given = template.sweeper_env.get("completion_shards")
        return f'{{"S": "{day[1]}#<n>"}}', int(given or COMPLETION_SHARDS)
    return value, 1


def _fixed(q: Counts, run: TypeRun) -> dict[str, float]:
    """What the quiet stretch cost, per hour (scheduled work: sweeps, stranded sweep, digest)."""
    hours = (TENANTS * 301 + SETTLE_S) / 3600
    return {
        "sweeper_invocations": round(q.invocations["sweeper"] / hours, 2),
        "dynamodb_requests": round(sum(q.ddb_requests.values()) / hours, 2),
        "rru": round(sum(q.rru.values()) / hours, 2),
        "sqs_requests": round(q.sqs_requests / hours, 2),
        "lambda_invocations": round(sum(q.invocations.values()) / hours, 2),
        "transitions": round(run.quiet_transitions / hours, 2),
    }


# -- scale -----------------------------------------------------------------------------------------


def scale_resources(
    mix: dict[str, Any], template: Template, quotas: dict[str, Any]
) -> list[Resource]:
    """Each resource's use per package/s against its default quota (quotas.json) or the prod
    template's setting."""
    from maestro.settings import SweeperSettings

    resources = []
    lam = mix["lambda"]["by_function"]

    def busy(f: str) -> float:  # concurrency per package/s: Little's law, invocations × duration
        return lam.get(f, {}).get("handler_s", 0) + lam.get(f, {}).get("model_wait_s", 0)

    total = sum(busy(f) for f in lam)
    q = quotas

    def held(name: str, per_package: float, quota: str, unit: str, **more: Any) -> Resource:
        """A resource held against a default quota of quotas.json, with its source."""
        return Resource(name, per_package, q[quota]["value"], unit, q[quota]["source"], **more)

    resources.append(
        held(
            "Lambda concurrency, account",
            total,
            "lambda_account_concurrency",
            "concurrent",
        )
    )
    for name, spec in sorted(template.functions.items()):
        if spec["reserved"]:
            resources.append(
                Resource(
                    f"Lambda {name} reserved concurrency",
                    busy(name),
                    spec["reserved"],
                    "concurrent",
                    "ReservedConcurrentExecutions in the prod template",
                    remedy="setting",
                )
            )
    if template.flusher_max_concurrency:
        resources.append(
            Resource(
                "flusher event source concurrency",
                busy("flusher"),
                template.flusher_max_concurrency,
                "concurrent",
                "ScalingConfig.MaximumConcurrency in the prod template",
                remedy="setting",
            )
        )
    if template.prober_max_concurrency:
        # Each probe's model wait as if it held an invocation alone: a batch's probes are asked
        # at once, so an upper bound (docs/headroom.md).
        resources.append(
            Resource(
                "prober event source concurrency",
                busy("prober"),
                template.prober_max_concurrency,
                "concurrent",
                "ScalingConfig.MaximumConcurrency in the prod template",
                remedy="setting",
            )
        )
    sweeper = template.functions.get("sweeper")
    if sweeper:
        per_run = mix["dynamodb"]["requests_by_stage"].get("sweeper", 0) * template.sweep_every_s
        latency = q["dynamodb_request_latency_s"]["value"]
        # A sweep checks its packages sweep_concurrency at a time (docs/headroom.md).
        at_once = int(
            template.sweeper_env.get("sweep_concurrency")
            or SweeperSettings.model_fields["sweep_concurrency"].default
        )
        resources.append(
            Resource(
                f"sweeper run time ({at_once} packages at once)",
                per_run * latency / at_once,
                sweeper["timeout_s"],
                "s per run",
                f"Timeout in the prod template; {latency * 1000:g} ms a DynamoDB request "
                f"(assumed), a run every {template.sweep_every_s} s, sweep_concurrency "
                f"{at_once}",
                remedy="setting",
            )
        )
    resources += _daily_caps(mix, template)
    sfn = mix["step_functions"]
    resources += [
        held(
            "Step Functions StartExecution",
            sfn["executions"],
            "sfn_standard_start_execution_per_s",
            "per s",
        ),
        held(
            "Step Functions state transitions",
            sfn["transitions"],
            "sfn_standard_state_transitions_per_s",
            "per s",
        ),
        Resource(
            "API Gateway stage throttle",
            mix["api"]["requests"],
            template.stage_rate,
            "requests/s",
            "ThrottlingRateLimit of the prod stage (infra/api.py, cdk.json api_rate_limit)",
            remedy="setting",
        ),
        held(
            "API Gateway account",
            mix["api"]["requests"],
            "apigateway_account_rps",
            "requests/s",
        ),
        held(
            "EventBridge PutEvents",
            mix["eventbridge"]["put_events_calls"],
            "eventbridge_put_events_per_s",
            "calls/s",
        ),
    ]
    for table, row in mix["dynamodb"]["by_table"].items():
        resources.append(
            held(
                f"DynamoDB {table} table (writes)",
                row["wru"],
                "dynamodb_table_on_demand_units_per_s",
                "WRU/s",
            )
        )
    for where, row in mix["dynamodb"]["shared_partitions"].items():
        shards = round(row.get("shards", 1))
        each = f", each of {shards} shards" if shards > 1 else ""
        resources.append(
            held(
                f"DynamoDB partition {where} (one key shared by packages{each}, writes)",
                row["wru_per_package"],
                "dynamodb_partition_wcu_per_s",
                "WCU/s",
                remedy="design",
            )
        )
        # An index's reads go to its key's partition (a day's queries); a table's reads spread
        # over its other keys, so only an index's are held against the partition.
        reads = mix["dynamodb"]["index_rru"].get(where, 0) if "(table)" not in where else 0
        if reads:
            resources.append(
                held(
                    f"DynamoDB partition {where} (reads)",
                    reads,
                    "dynamodb_partition_rcu_per_s",
                    "RCU/s",
                    remedy="design",
                )
            )
    model = mix["anthropic"]
    for tier in ("cheap", "strong"):
        limits = q["anthropic"][tier]
        warm = model["tokens_warm"].get(tier)
        if not warm:
            continue
        resources += [
            Resource(
                f"Anthropic {tier} requests",
                warm["calls"] * 60,
                limits["requests_per_min"],
                "per min",
                q["anthropic"]["source"],
            ),
            Resource(
                f"Anthropic {tier} input tokens (warm cache)",
                (warm["input"] + warm["cache_write"]) * 60,
                limits["input_tokens_per_min"],
                "per min",
                q["anthropic"]["source"],
            ),
            Resource(
                f"Anthropic {tier} output tokens",
                warm["output"] * 60,
                limits["output_tokens_per_min"],
                "per min",
                q["anthropic"]["source"],
            ),
        ]
    return resources


def _daily_caps(mix: dict[str, Any], template: Template) -> list[Resource]:
    """maestro's own account-wide daily caps (docs/unknown-senders.md): the prod value where the
    template sets one, else the setting's default; a day's use at the rate."""
    from maestro.settings import PipelineSettings, SendCapSettings

    def cap(name: str, model: Any) -> int:
        for spec in template.functions.values():
            given = spec["env"].get("MAESTRO_" + name.upper())
            if isinstance(given, str):
                return int(given)
        return int(model.model_fields[name].default)

    day = 86_400
    twilio = mix["twilio"]
    calls = sum(mix["anthropic"]["calls"].values())
    source = "maestro's account-wide daily cap (prod template, else the setting's default)"
    return [
        Resource(
            "maestro daily cap: model calls",
            calls * day,
            cap("account_daily_model_calls", PipelineSettings),
            "per UTC day",
            source,
            remedy="setting",
        ),
        Resource(
            "maestro daily cap: texts",
            max(0.0, twilio["texts_out"] - twilio["pages"]) * day,
            cap("account_daily_texts", SendCapSettings),
            "per UTC day",
            source,
            remedy="setting",
        ),
        Resource(
            "maestro daily cap: pages",
            twilio["pages"] * day,
            cap("account_daily_pages", SendCapSettings),
            "per UTC day",
            source,
            remedy="setting",
        ),
    ]


# -- main ------------------------------------------------------------------------------------------


def _blend(values: list[Any], weights: list[float]) -> Any:
    """The mix of per-package counts: numbers weighted, dicts key by key (missing keys 0)."""
    if isinstance(values[0], dict):
        keys = sorted({k for v in values for k in v})
        return {k: _blend([v.get(k, _zero(values, k)) for v in values], weights) for k in keys}
    if isinstance(values[0], (int, float)):
        return round(sum(w * float(v) for w, v in zip(weights, values, strict=True)), 4)
    return values[0]


def _zero(values: list[Any], key: str) -> Any:
    sample = next(v[key] for v in values if key in v)
    if isinstance(sample, dict):
        return {}
    return 0 if isinstance(sample, (int, float)) else sample


def write_docs(cost: dict[str, Any], scale: dict[str, Any]) -> None:
    text = DOCS_PATH.read_text(encoding="utf-8")
    fresh = render_tables(cost, scale)
    DOCS_PATH.write_text(text.replace(generated_part(text), fresh), encoding="utf-8")


def main() -> int:
    prices = load_prices()
    quotas = load_quotas()
    started = time.perf_counter()
    template = synth_prod()
    runs = {}
    for kind in MIX:
        runs[kind] = run_type(kind, template, prices)
        print(f"{kind}: {runs[kind].seconds:.0f} s", file=sys.stderr, flush=True)
    counts = {kind: per_package(run, template, prices) for kind, run in runs.items()}
    weights = list(MIX.values())
    mix_counts = _blend([counts[k] for k in MIX], weights)
    for name, row in mix_counts["dynamodb"]["shared_partitions"].items():  # a count, not a rate
        row["shards"] = max(
            counts[k]["dynamodb"]["shared_partitions"].get(name, {}).get("shards", 1) for k in MIX
        )
    by_type = {kind: price_type(c, prices) for kind, c in counts.items()}
    cost = {
        "prices_as_of": prices["as_of"],
        "method": (
            "counted on the embedded stack (benchmarks/bench_cost.py), priced by "
            "benchmarks/prices.json; $ per 1,000 packages"
        ),
        "mix_weights": MIX,
        "by_type": by_type,
        "mix": mix_of(by_type),
        "counts": counts,
        "mix_counts": mix_counts,
        "seconds": round(time.perf_counter() - started, 1),
    }
    scale = {
        "quotas_as_of": quotas["as_of"],
        "method": "use = packages/s x the mix's counts per package; Lambda concurrency by "
        "Little's law (invocations x handler time + model wait)",
        **scale_report(scale_resources(mix_counts, template, quotas)),
        "twilio_sender": {
            "segments_per_package": mix_counts["twilio"]["segments_out"],
            "segments_per_s_at_100": round(100 * mix_counts["twilio"]["segments_out"], 1),
            "long_code_mps": quotas["twilio_sender_mps"]["value"],
            "long_codes_at_100": math.ceil(
                100 * mix_counts["twilio"]["segments_out"] / quotas["twilio_sender_mps"]["value"]
            ),
            "source": quotas["twilio_sender_mps"]["source"],
        },
    }
    merge_results({"cost": cost, "scale": scale})
    write_docs(cost, scale)
    mix = cost["mix"]
    print(render_tables(cost, scale))
    ok = mix["total_warm"] <= 5.0 and mix["total_cold"] <= 12.0 and mix["aws_subtotal"] <= 0.5
    print(
        f"mix: warm ${mix['total_warm']:.2f}, cold ${mix['total_cold']:.2f}, AWS "
        f"${mix['aws_subtotal']:.2f} per 1,000 packages ({'ok' if ok else 'over the goal'})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
