"""Prompt caching, as the real SDK sends it (httpx2.MockTransport): where the breakpoints go.

The reasoning prefix (tools, system) is cached across packages, the package window across the
samples of one package; a prefix under the model's cacheable minimum gets no breakpoint (the
cheap tier's triage, decide and compose prompts); a sample sent while the window's first write is
in flight asks for no window breakpoint (it would miss and pay the write premium).
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest

from maestro.adapters.anthropic_model import AnthropicModel, cache_minimum_tokens
from maestro.brain.model_port import (
    ModelAnswer,
    ModelError,
    ModelRequest,
    Tier,
    ToolSpec,
    ToolUse,
    Turn,
    cacheable_breakpoints,
)
from maestro.brain.reasoning import PROPOSE_TOOL_NAME, ModelBrain, reasoning_request
from maestro.brain.triage import ModelTriage
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.models import FlushTrigger, Message, Package
from maestro_dev.prompt_cache import PromptCache

EPHEMERAL = {"type": "ephemeral"}
T0 = datetime(2026, 11, 3, 9, 30, tzinfo=UTC)
PHONE = "+15550104477"
PLAN = {"actions": [{"lane": "continue_with_assistant", "confidence": 0.9}]}
TRIAGE = {"route": "reasoning", "severity": "low", "confidence": 0.9, "evidence": ""}


def _reply(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


class Api:
    """The Messages API: answers the forced tool, keeps every body as sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body: dict[str, Any] = json.loads(request.content)
        self.bodies.append(body)
        name = body["tool_choice"]["name"]
        answer = PLAN if name == PROPOSE_TOOL_NAME else TRIAGE
        use = {"type": "tool_use", "id": "toolu_01", "name": name, "input": answer}
        return httpx2.Response(200, json=_reply([use]))


def anthropic(
    api: Api, *, cheap: str = "claude-haiku-4-5", strong: str = "claude-sonnet-4-5"
) -> AnthropicModel:
    return AnthropicModel(
        "sk-ant-test-key",
        cheap=cheap,
        strong=strong,
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(api)),
    )


def brain_request(history: int = 12) -> BrainRequest:
    def message(n: int, text: str) -> Message:
        return Message(
            message_id=f"SM{n:032d}",
            conversation_id="conv-7",
            from_phone=PHONE,
            body=text,
            received_at=T0 - timedelta(minutes=90 - n),
            seq=n,
        )

    earlier = [message(n, f"the radiator in the hall clanks, note {n}") for n in range(history)]
    package = Package(
        package_id="pkg-conv-7-4",
        conversation_id="conv-7",
        flush_number=4,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=PHONE,
        messages=(message(80, "and now the bathroom tap drips too"),),
        flushed_at=T0,
    )
    window = build_window(package, earlier, [], [], "tenant")
    return BrainRequest(package=package, sender_role="tenant", contexts=(), window=window)


def marked(body: dict[str, Any]) -> list[str]:
    """Where the body carries cache_control: "tools:<name>", "system", "message:<i>:<block>"."""
    where = [f"tools:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    where += ["system" for block in body.get("system", []) if "cache_control" in block]
    for i, message in enumerate(body["messages"]):
        where += [
            f"message:{i}:{j}" for j, b in enumerate(message["content"]) if "cache_control" in b
        ]
    return where


# --- the reasoning samples of one package -------------------------------------------------------


def test_every_sample_of_a_package_sends_the_same_window_and_caches_prefix_and_window() -> None:
    """Naive: only the system block was marked, so the window (up to about 4,400 tokens on a long
    conversation) was paid in full by every one of the k samples."""
    api = Api()
    brain = ModelBrain(anthropic(api))
    request = brain_request()
    for index in range(5):
        assert brain.sample(request, index).failure is None
    assert len(api.bodies) == 5
    # The cache can hit only on an identical prefix: everything but nothing differs.
    assert all(body == api.bodies[0] for body in api.bodies)
    body = api.bodies[0]
    assert marked(body) == ["system", "message:0:0"]  # tools → system, then the window
    assert body["system"][0]["cache_control"] == EPHEMERAL
    assert body["messages"][-1]["content"][-1] == {
        "type": "text",
        "text": request.window.render(),
        "cache_control": EPHEMERAL,
    }
    assert len(marked(body)) <= 4  # the API's limit of breakpoints


def test_the_windows_of_two_packages_are_cached_apart() -> None:
    api = Api()
    brain = ModelBrain(anthropic(api))
    brain.sample(brain_request(history=12), 0)
    brain.sample(brain_request(history=13), 0)
    first, second = (body["messages"][0]["content"][0]["text"] for body in api.bodies)
    assert first != second
    assert [marked(body) for body in api.bodies] == [["system", "message:0:0"]] * 2


class Gate:
    """A model whose first call blocks until a second call has been sent (samples drawn at
    once), or fails, as told; it keeps every request."""

    def __init__(self, *, first_fails: bool = False) -> None:
        self.requests: list[ModelRequest] = []
        self.first_sent = threading.Event()
        self._second_sent = threading.Event()
        self._first_fails = first_fails
        self._lock = threading.Lock()

    def describe(self) -> str:
        return "gate"

    def model_id(self, tier: Tier) -> str:
        return f"gate-{tier}"

    def ask(self, request: ModelRequest) -> ModelAnswer:
        with self._lock:
            self.requests.append(request)
            first = len(self.requests) == 1
        if first:
            self.first_sent.set()
            assert self._second_sent.wait(timeout=30)
            if self._first_fails:
                raise ModelError("overloaded")
        else:
            self._second_sent.set()
        use = ToolUse(id="toolu_1", name=PROPOSE_TOOL_NAME, input=PLAN)
        return ModelAnswer(model="gate-strong", tool_uses=(use,))


def _draw_two_at_once(model: Gate, brain: ModelBrain, request: BrainRequest) -> None:
    first = threading.Thread(target=brain.sample, args=(request, 0))
    first.start()
    assert model.first_sent.wait(timeout=30)
    brain.sample(request, 1)
    first.join(timeout=30)
    assert not first.is_alive()


def test_a_sample_sent_while_the_window_is_being_written_asks_no_window_breakpoint() -> None:
    """Naive: the second of two samples drawn at once marked the window too: it cannot read an
    entry still being written, so it wrote the window again at 1.25x instead of 1x."""
    model = Gate()
    brain = ModelBrain(model)
    request = brain_request()
    _draw_two_at_once(model, brain, request)
    brain.sample(request, 2)  # after the writer was answered: it reads
    assert [r.cache for r in model.requests] == [
        ("system", "last_turn"),
        ("system",),
        ("system", "last_turn"),
    ]
    assert len({r.turns for r in model.requests}) == 1  # the window, byte for byte


def test_when_the_writer_fails_the_next_sample_writes_the_window() -> None:
    model = Gate(first_fails=True)
    brain = ModelBrain(model)
    request = brain_request()
    _draw_two_at_once(model, brain, request)
    brain.sample(request, 2)
    brain.sample(request, 3)
    assert [r.cache for r in model.requests][2:] == [("system", "last_turn")] * 2


class Recorder:
    """A model that answers every sample and keeps the requests, to replay them on a cache."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def describe(self) -> str:
        return "recorder"

    def model_id(self, tier: Tier) -> str:
        return f"recorder-{tier}"

    def ask(self, request: ModelRequest) -> ModelAnswer:
        self.requests.append(request)
        use = ToolUse(id="toolu_1", name=PROPOSE_TOOL_NAME, input=PLAN)
        return ModelAnswer(model="recorder-strong", tool_uses=(use,))


@pytest.mark.parametrize("k", [2, 5])
def test_samples_after_the_first_read_the_whole_prompt_from_cache(k: int) -> None:
    """The cache-hit share of a package's samples (Sonnet 4.5's minimum, a warm prefix): the
    first reads tools + system and writes the window; every later one reads all of it."""
    model = Recorder()
    brain = ModelBrain(model)
    request = brain_request(history=20)
    cache = PromptCache(minimum_tokens=1024)
    cache.send([reasoning_request(brain_request(history=3).window)])  # another package, warm
    for index in range(k):
        brain.sample(request, index)
    first, *later = cache.send(model.requests, at=60.0)
    prefix = cache.send([reasoning_request(request.window, cache_window=False)], at=61.0)[0]
    assert first.read == prefix.read > 0  # tools + system, from the other package
    assert first.written > 0  # the window
    assert first.uncached == 0
    assert all(use.read == use.total and use.written == 0 for use in later)
    share = sum(u.read for u in [first, *later]) / sum(u.total for u in [first, *later])
    assert share >= {2: 0.7, 5: 0.85}[k]


def test_a_sample_sent_with_the_writer_reads_only_the_prefix() -> None:
    request = brain_request(history=20)
    cache = PromptCache(minimum_tokens=1024)
    cache.send([reasoning_request(brain_request(history=3).window)])
    writer, alongside = cache.send(
        [
            reasoning_request(request.window, 0),
            reasoning_request(request.window, 1, cache_window=False),
        ],
        at=10.0,
        together=True,
    )
    assert writer.written > 0
    assert alongside.written == 0
    assert alongside.read == writer.read  # tools + system only: the window is paid in full
    (third,) = cache.send([reasoning_request(request.window, 2)], at=20.0)
    assert third.read == third.total


# --- the cheap tier: under its minimum, no breakpoint --------------------------------------------


@pytest.mark.parametrize("cheap", ["claude-haiku-4-5", "claude-haiku-5-5"])
def test_the_cheap_triage_prefix_is_under_the_minimum_and_gets_no_breakpoint(cheap: str) -> None:
    """Naive: the triage prompt (about 520 tokens of system and tool, under Haiku 4.5's 4,096)
    carried cache_control on every probe and pre-check: a breakpoint that cannot take effect."""
    api = Api()
    triage = ModelTriage(anthropic(api, cheap=cheap))
    message = brain_request().package.messages[0]
    triage.probe(message, ["WO-204 leak under the kitchen sink"])
    assert api.bodies[0]["model"] == cheap
    assert marked(api.bodies[0]) == []


def _long_request(system_chars: int) -> ModelRequest:
    tool = ToolSpec(name="t", description="d", input_schema={"type": "object"})
    return ModelRequest(
        purpose="precheck",
        tier="cheap",
        system="s" * system_chars,
        turns=(Turn(role="user", text="hello"),),
        tools=(tool,),
        force_tool="t",
    )


def test_a_cheap_prefix_over_the_minimum_is_cached() -> None:
    tool_chars = len('{"name":"t","description":"d","input_schema":{"type":"object"}}')
    at_minimum = 4096 * 4 - tool_chars  # characters / 4, the estimate the adapter uses
    api = Api()
    model = anthropic(api)
    for chars in (at_minimum - 4, at_minimum):
        model.ask(_long_request(chars))
    assert [marked(body) for body in api.bodies] == [[], ["system"]]


def test_the_minimums_are_the_documented_ones() -> None:
    assert cache_minimum_tokens("claude-haiku-4-5-20251001") == 4096
    assert cache_minimum_tokens("claude-sonnet-4-5-20250929") == 1024
    assert cache_minimum_tokens("claude-sonnet-5-5") == 1024  # not in the table: the low end


def test_breakpoints_are_kept_only_over_the_minimum_and_never_on_an_empty_system() -> None:
    window = brain_request().window
    request = reasoning_request(window)
    assert cacheable_breakpoints(request, 1024) == ("system", "last_turn")
    assert cacheable_breakpoints(request, 100_000) == ()
    empty = request.model_copy(update={"system": ""})
    assert "system" not in cacheable_breakpoints(empty, 1)
