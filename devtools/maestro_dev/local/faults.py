"""Faults for the embedded stack (#11's fault matrix), injected where the real ones happen, so
what follows comes from the real retry paths and nowhere else.

- :class:`Wire`: every AWS SDK call made under moto (the pipeline's adapters, the flusher's, the
  watcher's and the sweeper's, and Step Functions' own EventBridge integration) reaches moto
  through one stubber; the wire sees each call there, after botocore built it and before moto
  answers, tagged with the stage that made it. A :class:`WireError` answers matching calls with
  an AWS error (a throttle, a 500, an error after the write applied: a lost answer); botocore's
  retries, the adapters' handling, the state machine's Retry and Catch and the SQS redrive do
  the rest. The SDK's retry backoff runs at the stack's ``RETRY_TIME_SCALE``, like Step
  Functions'. DynamoDB replays a retried transaction with the same ``ClientRequestToken``
  (moto does not): the wire does, for the transactions whose answer it lost.
- :class:`Stages` tags the stack's stages (each Lambda step, the inbound webhook, the flusher,
  the watcher, the sweeper) and crashes one on request, before its handler runs or after it
  returned: Step Functions' Retry, the SQS redelivery or Twilio's retry runs it again.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
import types
import uuid
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from unittest import mock

from maestro.pipeline.digest import DigestReport
from maestro.verify.sweeper import SweepReport
from maestro_dev.local.stack import PREFIX, RETRY_TIME_SCALE, LambdaFunctionError, LocalStack
from maestro_dev.local.twilio_loopback import Answer, TwilioLoopback

__all__ = [
    "DYNAMODB_WRITES",
    "Crash",
    "PartialPublish",
    "Stages",
    "TwilioError",
    "TwilioFaults",
    "Wire",
    "WireCall",
    "WireError",
    "sdk_attempts",
]

DYNAMODB_WRITES = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
)
_JSON_PREFIX = {"dynamodb": "com.amazonaws.dynamodb.v20120810#"}
_CONTENT_TYPE = {"dynamodb": "application/x-amz-json-1.0"}


@dataclass(frozen=True)
class WireCall:
    """One SDK request as it goes out (each retry of a call is another request, same call)."""

    service: str  # botocore's event name for it: "dynamodb", "eventbridge", "sfn", "sqs"
    operation: str
    targets: tuple[str, ...]  # the tables (logical names), or the events' detail types
    stage: str | None  # the stage whose code made it; None: the harness's own reads
    invocation: str  # the SDK call's id: its retries share it
    attempt: int

    @property
    def is_write(self) -> bool:
        return self.service == "dynamodb" and self.operation in DYNAMODB_WRITES


Match = Callable[[WireCall], bool]


@dataclass
class WireError:
    """Answer matching calls with an AWS error: ``per_call`` times for each SDK call (its own
    retries then pass), and at most ``budget`` times in all. ``applied``: the request reaches
    moto first (the write happens) and its answer is lost."""

    code: str
    status: int
    when: Match
    per_call: int = 1
    budget: int | None = None
    applied: bool = False
    message: str = "injected by the fault matrix"
    injected: int = 0
    _per: Counter[str] = field(default_factory=Counter)

    def takes(self, call: WireCall) -> bool:
        if not self.when(call):
            return False
        if self.budget is not None and self.injected >= self.budget:
            return False
        return self._per[call.invocation] < self.per_call

    def count(self, call: WireCall) -> None:
        self.injected += 1
        self._per[call.invocation] += 1


@dataclass
class PartialPublish:
    """EventBridge answers 200 with ``FailedEntryCount``: none of the batch's entries went."""

    when: Match
    budget: int | None = 1
    code: str = "FailedEntryCount"
    injected: int = 0

    def takes(self, call: WireCall) -> bool:
        if call.service != "eventbridge" or call.operation != "PutEvents":
            return False
        return self.when(call) and (self.budget is None or self.injected < self.budget)

    def count(self, call: WireCall) -> None:  # noqa: ARG002 - the same shape as WireError's
        self.injected += 1


Fault = WireError | PartialPublish


class Wire:
    """Every SDK call under moto, seen at moto's stubber (see the module's docstring).

    Enter it before the :class:`LocalStack` it watches (its SDK clients are made then);
    faults are added with :meth:`add` and removed with :meth:`clear`. ``log`` keeps each
    injected fault's call and code, ``calls`` counts every call by stage, operation and table.
    ``tap``, when set, is handed each call no fault takes, with its request body and the way on
    to moto, and returns moto's answer: a meter (benchmarks/bench_cost.py) reads the items
    before and after a write and the items an answer carries, to count capacity units.
    """

    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self.log: list[tuple[WireCall, str]] = []
        self.calls: Counter[tuple[str | None, str, str, tuple[str, ...]]] = Counter()
        # A context variable, not a thread local: a new thread starts with none set, as before,
        # and a worker running in a copy of a stage's context is that stage's.
        self._stage: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"wire-stage-{id(self)}", default=None
        )
        self._tokens: set[str] = set()  # transactions applied whose answer was lost
        self._lock = threading.Lock()
        self._exit = ExitStack()
        self._quotas: weakref.WeakSet[Any] = weakref.WeakSet()
        self.tap: Callable[[WireCall, dict[str, Any], Callable[[], Any]], Any] | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> Wire:
        import botocore.endpoint
        from botocore.retries.quota import RetryQuota
        from moto.core.botocore_stubber import BotocoreStubber

        original = BotocoreStubber.__call__
        wire = self

        def call(stubber: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            def forward() -> Any:
                return original(stubber, event_name, request, **kwargs)

            return wire._answer(event_name, request, forward)

        self._exit.enter_context(mock.patch.object(BotocoreStubber, "__call__", call))
        fast = types.SimpleNamespace(
            **{k: getattr(time, k) for k in dir(time) if not k.startswith("__")}
        )
        fast.sleep = lambda seconds: time.sleep(seconds * RETRY_TIME_SCALE)
        self._exit.enter_context(mock.patch.object(botocore.endpoint, "time", fast))
        real_init = RetryQuota.__init__
        quotas = self._quotas

        def init(quota: RetryQuota, *args: Any, **kwargs: Any) -> None:
            real_init(quota, *args, **kwargs)
            quotas.add(quota)

        self._exit.enter_context(mock.patch.object(RetryQuota, "__init__", init))
        return self

    def __exit__(self, *exc: object) -> None:
        self._exit.close()

    # -- what a test asks for -------------------------------------------------------------------

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def refill_retry_quotas(self) -> None:
        """Every SDK client's retry quota back to full (botocore's standard mode spends it on
        retries and earns it back slowly): a run starts as a fresh container would, whatever
        the runs before it spent."""
        for quota in list(self._quotas):
            with quota._lock:
                quota._available_capacity = quota._max_capacity

    @property
    def stage(self) -> str | None:
        return self._stage.get()

    @contextmanager
    def in_stage(self, name: str) -> Iterator[None]:
        """Calls made by this thread in the block are the stage's, and those of the threads it
        hands a copy of its context (the sweeper's checks, as the function's own)."""
        token = self._stage.set(name)
        try:
            yield
        finally:
            self._stage.reset(token)

    def injected(self) -> list[tuple[WireCall, str]]:
        with self._lock:
            return list(self.log)

    # -- answering ------------------------------------------------------------------------------

    def _answer(self, event_name: str, request: Any, forward: Callable[[], Any]) -> Any:
        parts = event_name.split(".")
        if len(parts) < 3 or parts[1] not in ("dynamodb", "eventbridge", "sfn", "sqs"):
            return forward()
        service, operation = parts[1], parts[2]
        body = _json(request.body)
        call = WireCall(
            service=service,
            operation=operation,
            targets=_targets(service, body),
            stage=self.stage or _own_stage(service, operation, body),
            invocation=_header(request, "amz-sdk-invocation-id") or uuid.uuid4().hex,
            attempt=_attempt(_header(request, "amz-sdk-request")),
        )
        token = body.get("ClientRequestToken") if operation == "TransactWriteItems" else None
        with self._lock:
            self.calls[(call.stage, service, operation, call.targets)] += 1
            if token is not None and token in self._tokens:
                # DynamoDB's idempotent replay: the same token within 10 minutes succeeds
                # without writing again (moto would refuse it as a cancelled transaction).
                return _response(request, 200, service, {})
            fault = next((f for f in self.faults if f.takes(call)), None)
            if fault is not None:
                fault.count(call)
                self.log.append((call, fault.code))
        if fault is None:
            return forward() if self.tap is None else self.tap(call, body, forward)
        if isinstance(fault, PartialPublish):
            entries = body.get("Entries", [])
            failed = {"ErrorCode": "InternalFailure", "ErrorMessage": fault.code}
            return _response(
                request,
                200,
                service,
                {"FailedEntryCount": len(entries), "Entries": [failed for _ in entries]},
            )
        if fault.applied:
            forward()  # the write reaches the service; its answer never comes back
            if token is not None:
                with self._lock:
                    self._tokens.add(token)
        error = {"__type": _JSON_PREFIX.get(service, "") + fault.code, "message": fault.message}
        return _response(request, fault.status, service, error)


def _json(body: Any) -> dict[str, Any]:
    if not body:
        return {}
    try:
        loaded = json.loads(body)
    except (TypeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _targets(service: str, body: dict[str, Any]) -> tuple[str, ...]:
    found: set[str] = set()
    if service == "dynamodb":
        if "TableName" in body:
            found.add(str(body["TableName"]))
        for item in body.get("TransactItems", []):
            found.update(str(op["TableName"]) for op in item.values())
        found.update(body.get("RequestItems", {}))
        return tuple(sorted(name.removeprefix(PREFIX) for name in found))
    if service == "eventbridge":
        return tuple(sorted({str(e.get("DetailType")) for e in body.get("Entries", [])}))
    return ()


def _own_stage(service: str, operation: str, body: dict[str, Any]) -> str | None:
    """Calls no Lambda makes: Step Functions' own EventBridge integration (the announce)."""
    if service == "eventbridge" and operation == "PutEvents":
        types_ = {e.get("DetailType") for e in body.get("Entries", [])}
        if types_ == {"decision.recorded"}:
            return "announce"
    return None


def _header(request: Any, name: str) -> str | None:
    value = request.headers.get(name)
    if isinstance(value, bytes):
        return value.decode()
    return None if value is None else str(value)


def _attempt(header: str | None) -> int:
    for part in (header or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == "attempt" and value.isdigit():
            return int(value)
    return 1


def _response(request: Any, status: int, service: str, body: dict[str, Any]) -> Any:
    from botocore.awsrequest import AWSResponse, HTTPHeaders
    from moto.core.botocore_stubber import MockRawResponse

    headers = HTTPHeaders()
    headers["Content-Type"] = _CONTENT_TYPE.get(service, "application/x-amz-json-1.1")
    headers["x-amzn-RequestId"] = uuid.uuid4().hex
    return AWSResponse(request.url, status, headers, MockRawResponse(json.dumps(body).encode()))


def sdk_attempts(service: str) -> int:
    """How many attempts botocore's retry mode (standard, the default) makes for ``service``."""
    from botocore.retries import standard

    per_service: dict[str, int] = getattr(standard, "_SERVICE_MAX_ATTEMPTS", {})
    return per_service.get(service, standard.DEFAULT_MAX_ATTEMPTS)


# -- stages ---------------------------------------------------------------------------------------

When = Literal["before", "after"]


@dataclass
class Crash:
    """The stage's Lambda dies ``times`` times: ``before`` its handler runs, or ``after`` it
    returned (its effects are done; its answer is lost). ``error_type`` is what the service
    reports: ``Lambda.ServiceException`` is retried by the state machine."""

    stage: str
    when: When
    times: int = 1
    error_type: str = "Lambda.ServiceException"
    match: Callable[[tuple[Any, ...]], bool] | None = None  # which invocations (their args)
    crashed: int = 0

    def fire(self, stage: str, when: When, args: tuple[Any, ...]) -> None:
        if stage != self.stage or when != self.when or self.crashed >= self.times:
            return
        if self.match is not None and not self.match(args):
            return
        self.crashed += 1
        raise LambdaFunctionError(self.error_type, f"{stage}: the container died ({when})")


class Stages:
    """Tags every stage of ``stack`` on ``wire`` and crashes the ones asked for.

    Lambda steps through the stack's ``fault`` hook; the flusher's and the watcher's record
    handlers (their pollers' SQS calls are the event source mapping's, not the function's); the
    inbound webhook around the ingestor (status callbacks stay untagged), and the fallback drain
    around its own (``fallback``); the sweeper and the hourly digest, each invoked as a schedule
    invokes a Lambda: asynchronously, so a failed run is retried twice and then dropped until the
    next schedule. ``entered`` counts each stage's invocations, ``failed``
    the ones that raised, ``active`` the ones running now; ``seen`` keeps each invocation's
    arguments (the signals the flusher handled, the events the watcher read).
    """

    SWEEP_ASYNC_RETRIES = 2

    def __init__(self, stack: LocalStack, wire: Wire) -> None:
        self.stack = stack
        self.wire = wire
        self.crashes: list[Crash] = []
        self.entered: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.active: Counter[str] = Counter()
        self.seen: dict[str, list[tuple[Any, ...]]] = {}
        self.errors: list[tuple[str, str]] = []  # (stage, the exception in words)
        self._lock = threading.Lock()
        stack.fault = self._lambda
        self._wrap(stack.flusher, "handle", "flusher")
        self._wrap(stack.prober, "handle", "prober")
        self._wrap(stack.watcher, "watch", "watcher")
        self._wrap(stack.ingestor, "receive", "webhook")
        self._wrap(stack.fallback_ingestor, "receive", "fallback")
        sweep = stack.sweeper.sweep

        def scheduled(time_left: Callable[[], float] | None = None) -> SweepReport:
            for _ in range(1 + self.SWEEP_ASYNC_RETRIES):
                try:
                    report: SweepReport = self.run("sweeper", lambda: sweep(time_left))
                except Exception:
                    continue
                return report
            return SweepReport()  # dropped: the next scheduled sweep looks again

        stack.sweeper.sweep = scheduled  # type: ignore[method-assign]
        send_digest = stack.digest.run

        def digest() -> DigestReport:  # hourly, invoked as the sweeper is
            for _ in range(1 + self.SWEEP_ASYNC_RETRIES):
                try:
                    report: DigestReport = self.run("digest", send_digest)
                except Exception:
                    continue
                return report
            return DigestReport()  # dropped: the next run sends the hours still due

        stack.digest.run = digest  # type: ignore[method-assign]

    def crash(self, crash: Crash) -> Crash:
        self.crashes.append(crash)
        return crash

    def clear(self) -> None:
        self.crashes.clear()
        with self._lock:
            self.entered.clear()
            self.failed.clear()
            self.seen.clear()
            self.errors.clear()

    def running(self, stage: str) -> bool:
        with self._lock:
            return self.active[stage] > 0

    def run(self, stage: str, call: Callable[[], Any], args: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            self.entered[stage] += 1
            self.active[stage] += 1
            self.seen.setdefault(stage, []).append(args)
        try:
            for crash in self.crashes:
                crash.fire(stage, "before", args)
            with self.wire.in_stage(stage):
                result = call()
            for crash in self.crashes:
                crash.fire(stage, "after", args)
        except Exception as error:
            with self._lock:
                self.failed[stage] += 1
                self.errors.append((stage, f"{type(error).__name__}: {error}"[:300]))
            raise
        finally:
            with self._lock:
                self.active[stage] -= 1
        return result

    def _lambda(
        self, step: str, event: dict[str, Any], call: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        result: dict[str, Any] = self.run(step, call, (event,))
        return result

    def _wrap(self, target: Any, method: str, stage: str) -> None:
        real = getattr(target, method)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            return self.run(stage, lambda: real(*args, **kwargs), args)

        setattr(target, method, wrapped)


# -- Twilio ---------------------------------------------------------------------------------------


@dataclass
class TwilioError:
    """What the loopback Twilio answers a matching request instead: an HTTP error (``status``,
    ``code``), after creating the message when ``accept`` (Twilio took it; the answer is lost),
    and ``hang_seconds`` late (longer than the client waits: a timeout). ``on``: ``create``
    (sending) or ``fetch`` (the watcher's read by SID)."""

    when: Callable[[str], bool]  # given the recipient (create) or the SID (fetch)
    on: Literal["create", "fetch"] = "create"
    status: int = 503
    code: int | None = None
    message: str = "Service Unavailable"
    accept: bool = False
    hang_seconds: float = 0.0
    budget: int | None = None
    injected: int = 0


class TwilioFaults:
    """Faults at the loopback Twilio's API: every request the SDK makes passes its ``handle``."""

    def __init__(self, loopback: TwilioLoopback) -> None:
        self.loopback = loopback
        self.faults: list[TwilioError] = []
        self._lock = threading.Lock()
        real = loopback.handle
        self._real = real

        def handle(
            method: str,
            path: str,
            query: dict[str, str],
            form: dict[str, str],
            authorization: str | None,
        ) -> Answer:
            return self._handle(method, path, query, form, authorization)

        loopback.handle = handle  # type: ignore[method-assign]

    def add(self, fault: TwilioError) -> TwilioError:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def _handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        form: dict[str, str],
        authorization: str | None,
    ) -> Answer:
        on: Literal["create", "fetch"] | None = None
        subject = ""
        if method == "POST" and path.endswith("/Messages.json"):
            on, subject = "create", form.get("To", "")
        elif method == "GET" and "/Messages/" in path:
            on, subject = "fetch", path.rsplit("/", 1)[-1].removesuffix(".json")
        fault = None
        if on is not None:
            with self._lock:
                fault = next(
                    (
                        f
                        for f in self.faults
                        if f.on == on
                        and (f.budget is None or f.injected < f.budget)
                        and f.when(subject)
                    ),
                    None,
                )
                if fault is not None:
                    fault.injected += 1
        if fault is None:
            return self._real(method, path, query, form, authorization)
        if fault.accept:
            accepted = self._real(method, path, query, form, authorization)
            if accepted.status >= 300:
                return accepted
        code = fault.code or fault.status
        return Answer(
            fault.status,
            {
                "code": code,
                "message": fault.message,
                "more_info": f"https://www.twilio.com/docs/errors/{code}",
                "status": fault.status,
            },
            fault.hang_seconds,
        )
