"""The Anthropic adapter, offline: the SDK talks to a fake Messages API (httpx2.MockTransport).

The replies are the Messages API's own JSON shapes; the assertions read the HTTP request the SDK
actually sent. The SDK's retry sleeps are recorded, not slept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from maestro.adapters.anthropic_model import AnthropicModel, failure_kind, retry_after_seconds
from maestro.brain.model_port import (
    LanguageModel,
    ModelError,
    ModelRequest,
    ToolResult,
    ToolSpec,
    ToolUse,
    Turn,
)

KEY = "sk-ant-api03-test-key-that-must-never-leak-0123456789"
SERVED_MODEL = "claude-haiku-4-5-20251001"

DECIDE_TOOL = ToolSpec(
    name="decide",
    description="Record the decision.",
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["reply", "escalate"]},
            "confidence": {"type": "number"},
        },
        "required": ["action", "confidence"],
    },
)
LOOKUP_TOOL = ToolSpec(
    name="lookup_work_order",
    description="Read a work order.",
    input_schema={"type": "object", "properties": {"wo_id": {"type": "string"}}},
)

Reply = httpx2.Response | Exception


class FakeApi:
    """The Messages API: answers the requests in order (the last answer repeats), records them."""

    def __init__(self, *replies: Reply) -> None:
        self._replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def body(self, index: int = -1) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.requests[index].content)
        return parsed


def message(
    content: list[dict[str, Any]],
    stop_reason: str = "tool_use",
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> httpx2.Response:
    """A 200 with a Messages API ``message``."""
    body = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": SERVED_MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        if usage is not None
        else {
            "input_tokens": 312,
            "output_tokens": 41,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 2048,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "service_tier": "standard",
        },
        **extra,
    }
    return httpx2.Response(200, json=body, headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"})


def tool_use(
    input_: Any, name: str = "decide", id_: str = "toolu_01A09q90qw90lq917835lq9"
) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def api_error(
    status: int, error_type: str, text: str, headers: dict[str, str] | None = None
) -> httpx2.Response:
    """An error as the API sends it."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return httpx2.Response(
        status, json=body, headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", **(headers or {})}
    )


def model_on(api: FakeApi, **options: Any) -> AnthropicModel:
    return AnthropicModel(
        KEY, http_client=httpx2.Client(transport=httpx2.MockTransport(api)), **options
    )


def request(**fields: Any) -> ModelRequest:
    base: dict[str, Any] = {
        "purpose": "decide",
        "tier": "cheap",
        "system": "You route maintenance messages. The vocabulary: ...",
        "turns": (Turn(role="user", text="Water is coming through the ceiling"),),
        "tools": (DECIDE_TOOL,),
        "force_tool": "decide",
        "max_tokens": 300,
        "temperature": 0.0,
    }
    return ModelRequest(**{**base, **fields})


@pytest.fixture(autouse=True)
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The SDK's retry waits (``time.sleep`` in its retry loop), recorded instead of slept."""
    waited: list[float] = []
    monkeypatch.setattr(time, "sleep", waited.append)
    return waited


def failure(call: Callable[[], object]) -> ModelError:
    with pytest.raises(ModelError) as caught:
        call()
    return caught.value


def assert_no_key(error: ModelError) -> None:
    assert KEY not in str(error)
    assert KEY not in repr(error)
    assert KEY not in error.detail
    assert error.__cause__ is None
    assert error.__context__ is None  # the SDK's error (and its request's headers) is not kept


# --- the request -------------------------------------------------------------------------------


def test_a_forced_tool_call_sends_the_tier_model_the_system_the_tools_and_the_choice() -> None:
    api = FakeApi(message([tool_use({"action": "escalate", "confidence": 0.93})]))
    model = model_on(api)

    model.ask(request())

    sent = api.requests[0]
    assert sent.method == "POST"
    assert sent.url.path == "/v1/messages"
    assert sent.headers["authorization"] == f"Bearer {KEY}"  # SDK 2.x: the key as a bearer token
    assert sent.headers["anthropic-version"]
    body = api.body()
    assert body["model"] == "claude-haiku-5-5"
    assert body["max_tokens"] == 300
    # A prefix this short is under every model's cacheable minimum: no breakpoint is sent.
    assert body["system"] == [
        {"type": "text", "text": "You route maintenance messages. The vocabulary: ..."}
    ]
    assert body["tools"] == [
        {
            "name": "decide",
            "description": "Record the decision.",
            "input_schema": DECIDE_TOOL.input_schema,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "decide"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Water is coming through the ceiling"}],
        }
    ]
    assert "stream" not in body


def test_no_sampling_parameter_is_sent_as_the_api_version_rejects_them() -> None:
    api = FakeApi(message([tool_use({"action": "reply", "confidence": 0.5})]))
    model_on(api).ask(request(temperature=0.7))
    assert not {"temperature", "top_p", "top_k"} & set(api.body())


def test_the_timeout_bounds_each_attempt() -> None:
    api = FakeApi(message([tool_use({"action": "reply", "confidence": 0.5})]))
    model_on(api, timeout=7.5).ask(request())
    assert api.requests[0].extensions["timeout"] == {
        "connect": 7.5,
        "read": 7.5,
        "write": 7.5,
        "pool": 7.5,
    }


def test_tools_without_a_forced_one_let_the_model_choose() -> None:
    api = FakeApi(message([{"type": "text", "text": "Noted."}], stop_reason="end_turn"))
    model_on(api).ask(request(force_tool=None, tools=(DECIDE_TOOL, LOOKUP_TOOL)))
    assert api.body()["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in api.body()["tools"]] == ["decide", "lookup_work_order"]


def test_no_tools_sends_neither_tools_nor_a_choice_and_no_system_when_empty() -> None:
    api = FakeApi(message([{"type": "text", "text": "Hello"}], stop_reason="end_turn"))
    model_on(api).ask(request(force_tool=None, tools=(), system=""))
    assert not {"tools", "tool_choice", "system"} & set(api.body())


def test_the_strong_tier_uses_the_strong_model_id() -> None:
    api = FakeApi(message([tool_use({"action": "reply", "confidence": 0.5})]))
    model = model_on(api, cheap="claude-cheap-x", strong="claude-strong-y")
    model.ask(request(tier="strong", purpose="reasoning"))
    assert api.body()["model"] == "claude-strong-y"
    assert model.model_id("cheap") == "claude-cheap-x"
    assert model.describe() == "anthropic (cheap: claude-cheap-x, strong: claude-strong-y)"


def test_describe_names_the_default_models_and_never_the_key() -> None:
    model: LanguageModel = AnthropicModel(KEY)
    assert model.describe() == "anthropic (cheap: claude-haiku-5-5, strong: claude-sonnet-5-5)"
    assert model.model_id("strong") == "claude-sonnet-5-5"
    assert KEY not in repr(model)


def test_the_tool_loop_sends_tool_use_then_tool_results_first_in_the_next_user_turn() -> None:
    api = FakeApi(message([tool_use({"action": "reply", "confidence": 0.8})]))
    turns = (
        Turn(role="user", text="Is my plumber coming today?"),
        Turn(
            role="assistant",
            text="Let me check the work order.",
            tool_uses=(
                ToolUse(id="toolu_1", name="lookup_work_order", input={"wo_id": "WO-7"}),
                ToolUse(id="toolu_2", name="lookup_work_order", input={"wo_id": "WO-8"}),
            ),
        ),
        Turn(
            role="user",
            text="Continue.",
            tool_results=(
                ToolResult(tool_use_id="toolu_1", content='{"status": "scheduled"}'),
                ToolResult(tool_use_id="toolu_2", content="no such work order", is_error=True),
            ),
        ),
    )

    model_on(api).ask(request(purpose="manage", turns=turns, force_tool=None))

    assert api.body()["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Is my plumber coming today?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check the work order."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "lookup_work_order",
                    "input": {"wo_id": "WO-7"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "lookup_work_order",
                    "input": {"wo_id": "WO-8"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"status": "scheduled"}',
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such work order",
                    "is_error": True,
                },
                {"type": "text", "text": "Continue."},
            ],
        },
    ]


def test_a_tool_loop_feeds_the_answer_back_as_the_next_request() -> None:
    api = FakeApi(
        message(
            [
                {"type": "text", "text": "Checking."},
                tool_use({"wo_id": "WO-7"}, name="lookup_work_order", id_="toolu_01"),
            ]
        ),
        message([{"type": "text", "text": "The plumber comes at 2 pm."}], stop_reason="end_turn"),
    )
    model = model_on(api)
    first = request(
        purpose="manage",
        force_tool=None,
        tools=(LOOKUP_TOOL,),
        turns=(Turn(role="user", text="When?"),),
    )

    asked = model.ask(first)
    called = asked.tool_uses[0]
    second = first.model_copy(
        update={
            "turns": (
                *first.turns,
                Turn(role="assistant", text=asked.text, tool_uses=asked.tool_uses),
                Turn(
                    role="user",
                    tool_results=(ToolResult(tool_use_id=called.id, content='{"at": "14:00"}'),),
                ),
            )
        }
    )
    final = model.ask(second)

    assert final.text == "The plumber comes at 2 pm."
    assert final.stop_reason == "end_turn"
    assert api.body(1)["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "lookup_work_order",
                    "input": {"wo_id": "WO-7"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": '{"at": "14:00"}',
                    "is_error": False,
                }
            ],
        },
    ]
    assert api.body(0)["system"] == api.body(1)["system"]  # the cached prefix does not move


def test_an_assistant_turn_of_tool_calls_alone_sends_no_empty_text() -> None:
    api = FakeApi(message([tool_use({"action": "reply", "confidence": 0.8})]))
    turns = (
        Turn(role="user", text="hi"),
        Turn(role="assistant", tool_uses=(ToolUse(id="toolu_1", name="lookup_work_order"),)),
        Turn(role="user", tool_results=(ToolResult(tool_use_id="toolu_1", content="ok"),)),
    )
    model_on(api).ask(request(turns=turns, tools=(DECIDE_TOOL, LOOKUP_TOOL)))
    sent = api.body()["messages"]
    assert sent[1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup_work_order", "input": {}}
    ]
    assert [block["type"] for block in sent[2]["content"]] == ["tool_result"]


# --- the answer --------------------------------------------------------------------------------


def test_a_forced_tool_reply_is_an_answer_with_the_served_model_the_call_and_the_usage() -> None:
    api = FakeApi(
        message(
            [tool_use({"action": "escalate", "confidence": 0.93})],
            usage={
                "input_tokens": 312,
                "output_tokens": 41,
                "cache_creation_input_tokens": 1500,
                "cache_read_input_tokens": 2048,
            },
        )
    )

    answer = model_on(api).ask(request())

    assert answer.model == SERVED_MODEL
    assert answer.tool_uses == (
        ToolUse(
            id="toolu_01A09q90qw90lq917835lq9",
            name="decide",
            input={"action": "escalate", "confidence": 0.93},
        ),
    )
    assert answer.tool_input("decide") == {"action": "escalate", "confidence": 0.93}
    assert answer.stop_reason == "tool_use"
    assert answer.text == ""
    assert (answer.input_tokens, answer.output_tokens) == (312, 41)
    assert (answer.cache_read_tokens, answer.cache_write_tokens) == (2048, 1500)


def test_usage_without_cache_counts_is_zero_cache() -> None:
    api = FakeApi(message([tool_use({})], usage={"input_tokens": 20, "output_tokens": 5}))
    answer = model_on(api).ask(request())
    assert (answer.cache_read_tokens, answer.cache_write_tokens) == (0, 0)
    assert (answer.input_tokens, answer.output_tokens) == (20, 5)


def test_a_text_reply_without_a_tool_call_is_an_answer_not_an_error() -> None:
    api = FakeApi(
        message(
            [
                {"type": "thinking", "thinking": "The tenant...", "signature": "EqQBCgIYAhIM"},
                {"type": "text", "text": "I can't decide ", "citations": None},
                {"type": "text", "text": "without more detail."},
            ],
            stop_reason="end_turn",
        )
    )
    answer = model_on(api).ask(request())
    assert answer.text == "I can't decide without more detail."
    assert answer.tool_uses == ()
    assert answer.tool_input("decide") is None
    assert answer.stop_reason == "end_turn"


def test_a_tool_input_the_schema_does_not_want_is_returned_as_is() -> None:
    off_schema = {"action": "demolish", "why": ["no", "confidence"]}
    api = FakeApi(message([tool_use(off_schema)]))
    assert model_on(api).ask(request()).tool_input("decide") == off_schema


def test_text_and_several_tool_calls_are_all_returned_in_order() -> None:
    api = FakeApi(
        message(
            [
                {"type": "text", "text": "Checking both."},
                tool_use({"wo_id": "WO-7"}, name="lookup_work_order", id_="toolu_a"),
                tool_use({"wo_id": "WO-8"}, name="lookup_work_order", id_="toolu_b"),
            ]
        )
    )
    answer = model_on(api).ask(request(force_tool=None, tools=(LOOKUP_TOOL,)))
    assert answer.text == "Checking both."
    assert [(use.id, use.input) for use in answer.tool_uses] == [
        ("toolu_a", {"wo_id": "WO-7"}),
        ("toolu_b", {"wo_id": "WO-8"}),
    ]


def test_a_truncated_answer_is_returned_with_its_stop_reason() -> None:
    api = FakeApi(message([{"type": "text", "text": "The tenant says"}], stop_reason="max_tokens"))
    answer = model_on(api).ask(request())
    assert (answer.text, answer.stop_reason) == ("The tenant says", "max_tokens")


def test_a_refusal_is_refused() -> None:
    api = FakeApi(
        message(
            [{"type": "text", "text": ""}],
            stop_reason="refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": None},
        )
    )
    error = failure(lambda: model_on(api).ask(request()))
    assert error.kind == "refused"
    assert "cyber" in error.detail
    assert len(api.requests) == 1


# --- failures ----------------------------------------------------------------------------------


def test_overloaded_529_is_retried_max_retries_times_with_backoff_then_overloaded(
    sleeps: list[float],
) -> None:
    api = FakeApi(api_error(529, "overloaded_error", "Overloaded"))

    error = failure(lambda: model_on(api, max_retries=2).ask(request()))

    assert error.kind == "overloaded"
    assert len(api.requests) == 3
    assert [r.headers["x-stainless-retry-count"] for r in api.requests] == ["0", "1", "2"]
    # the SDK's backoff: 0.5 s then 1 s, each less up to 25 % of jitter
    assert len(sleeps) == 2
    assert 0.375 <= sleeps[0] <= 0.5
    assert 0.75 <= sleeps[1] <= 1.0
    assert "overloaded_error" in error.detail
    assert "req_011CSHoEeqs5C35K2UUqR7Fy" in error.detail
    assert_no_key(error)


def test_overloaded_then_an_answer_is_the_answer(sleeps: list[float]) -> None:
    api = FakeApi(
        api_error(529, "overloaded_error", "Overloaded"),
        message([tool_use({"action": "reply", "confidence": 0.9})]),
    )
    answer = model_on(api).ask(request())
    assert answer.tool_input("decide") == {"action": "reply", "confidence": 0.9}
    assert len(api.requests) == 2
    assert len(sleeps) == 1


def test_rate_limited_honours_retry_after_then_is_rate_limited(sleeps: list[float]) -> None:
    api = FakeApi(
        api_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your limit.",
            {"retry-after": "3"},
        )
    )

    error = failure(lambda: model_on(api, max_retries=1).ask(request()))

    assert error.kind == "rate_limited"
    assert len(api.requests) == 2
    assert sleeps == [3.0]
    assert_no_key(error)


def test_rate_limited_honours_retry_after_ms(sleeps: list[float]) -> None:
    api = FakeApi(
        api_error(
            429, "rate_limit_error", "slow down", {"retry-after-ms": "1500", "retry-after": "2"}
        ),
        message([tool_use({"action": "reply", "confidence": 0.9})]),
    )
    model_on(api).ask(request())
    assert sleeps == [1.5]


def test_a_retry_after_longer_than_the_cap_fails_at_once(sleeps: list[float]) -> None:
    api = FakeApi(api_error(429, "rate_limit_error", "slow down", {"retry-after": "3600"}))

    error = failure(lambda: model_on(api, max_retries=2, max_retry_wait=10).ask(request()))

    assert error.kind == "rate_limited"
    assert "3600" in error.detail
    assert len(api.requests) == 1
    assert sleeps == []
    assert_no_key(error)


def test_an_overloaded_529_asking_for_a_long_wait_is_overloaded_at_once(
    sleeps: list[float],
) -> None:
    api = FakeApi(api_error(529, "overloaded_error", "Overloaded", {"retry-after": "120"}))
    error = failure(lambda: model_on(api).ask(request()))
    assert error.kind == "overloaded"
    assert (len(api.requests), sleeps) == (1, [])


def test_a_timeout_is_retried_then_timeout(sleeps: list[float]) -> None:
    api = FakeApi(httpx2.ReadTimeout("timed out"))

    error = failure(lambda: model_on(api, max_retries=2).ask(request()))

    assert error.kind == "timeout"
    assert len(api.requests) == 3
    assert len(sleeps) == 2
    assert_no_key(error)


def test_a_connection_error_is_a_transport_error() -> None:
    api = FakeApi(httpx2.ConnectError("[Errno 111] Connection refused"))
    error = failure(lambda: model_on(api, max_retries=1).ask(request()))
    assert error.kind == "transport_error"
    assert len(api.requests) == 2
    assert_no_key(error)


def test_a_400_is_a_bad_request_not_retried() -> None:
    api = FakeApi(
        api_error(
            400,
            "invalid_request_error",
            "messages.0.content: text content blocks must be non-empty",
        )
    )
    error = failure(lambda: model_on(api).ask(request()))
    assert error.kind == "bad_request"
    assert len(api.requests) == 1
    assert "text content blocks must be non-empty" in error.detail
    assert_no_key(error)


@pytest.mark.parametrize(
    ("status", "error_type", "kind", "attempts"),
    [
        (401, "authentication_error", "bad_request", 1),
        (403, "permission_error", "bad_request", 1),
        (404, "not_found_error", "bad_request", 1),
        (413, "request_too_large", "bad_request", 1),
        (422, "invalid_request_error", "bad_request", 1),
        (500, "api_error", "transport_error", 3),
        (503, "api_error", "transport_error", 3),
    ],
)
def test_each_status_has_its_kind(status: int, error_type: str, kind: str, attempts: int) -> None:
    api = FakeApi(api_error(status, error_type, "nope"))
    error = failure(lambda: model_on(api).ask(request()))
    assert error.kind == kind
    assert len(api.requests) == attempts


def test_an_error_that_echoes_the_key_is_redacted() -> None:
    api = FakeApi(api_error(401, "authentication_error", f"invalid x-api-key: {KEY}"))
    error = failure(lambda: model_on(api).ask(request()))
    assert error.kind == "bad_request"
    assert "[redacted]" in error.detail
    assert_no_key(error)


@pytest.mark.parametrize(
    "reply",
    [
        httpx2.Response(
            200, content=b"<html>502 Bad Gateway</html>", headers={"content-type": "text/html"}
        ),
        httpx2.Response(200, content=b"{not json", headers={"content-type": "application/json"}),
        httpx2.Response(200, json={"type": "message"}),
        httpx2.Response(200, json=[1, 2]),
        message([tool_use("not an object")]),
        message([{"type": "text"}], stop_reason="end_turn"),
        message([tool_use({})], usage={}),
    ],
    ids=[
        "html",
        "broken-json",
        "no-fields",
        "a-list",
        "tool-input-string",
        "text-missing",
        "no-usage",
    ],
)
def test_a_response_that_does_not_parse_is_a_transport_error(reply: httpx2.Response) -> None:
    error = failure(lambda: model_on(FakeApi(reply)).ask(request()))
    assert error.kind == "transport_error"
    assert_no_key(error)


def test_a_forced_tool_that_is_not_offered_fails_before_any_call() -> None:
    api = FakeApi(message([tool_use({})]))
    error = failure(lambda: model_on(api).ask(request(force_tool="lookup_work_order")))
    assert error.kind == "bad_request"
    assert api.requests == []


def test_an_empty_turn_fails_before_any_call() -> None:
    api = FakeApi(message([tool_use({})]))
    turns = (Turn(role="user", text="hi"), Turn(role="assistant"))
    error = failure(lambda: model_on(api).ask(request(turns=turns)))
    assert error.kind == "bad_request"
    assert api.requests == []


def test_the_constructor_wants_a_key() -> None:
    with pytest.raises(ValueError, match="key"):
        AnthropicModel("")


# --- count_tokens ------------------------------------------------------------------------------


def test_count_tokens_sends_the_same_prompt_and_returns_the_count() -> None:
    api = FakeApi(httpx2.Response(200, json={"input_tokens": 2361}))
    model = model_on(api)

    assert model.count_tokens(request(tier="strong")) == 2361

    assert api.requests[0].url.path == "/v1/messages/count_tokens"
    body = api.body()
    assert body["model"] == "claude-sonnet-5-5"
    assert body["system"][0]["text"] == "You route maintenance messages. The vocabulary: ..."
    assert body["tools"][0]["name"] == "decide"
    assert body["tool_choice"] == {"type": "tool", "name": "decide"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Water is coming through the ceiling"}],
        }
    ]
    assert "max_tokens" not in body


def test_count_tokens_fails_as_ask_does(sleeps: list[float]) -> None:
    api = FakeApi(api_error(529, "overloaded_error", "Overloaded"))
    error = failure(lambda: model_on(api, max_retries=1).count_tokens(request()))
    assert error.kind == "overloaded"
    assert len(api.requests) == 2
    assert_no_key(error)


def test_count_tokens_that_does_not_parse_is_a_transport_error() -> None:
    api = FakeApi(httpx2.Response(200, json={"tokens": "many"}))
    assert failure(lambda: model_on(api).count_tokens(request())).kind == "transport_error"


# --- the helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "bad_request"),
        (402, "bad_request"),
        (408, "timeout"),
        (409, "transport_error"),
        (429, "rate_limited"),
        (500, "transport_error"),
        (529, "overloaded"),
    ],
)
def test_failure_kind(status: int, kind: str) -> None:
    assert failure_kind(status) == kind


def test_retry_after_is_read_as_the_sdk_reads_it() -> None:
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "250"})) == 0.25
    assert retry_after_seconds(httpx2.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "x", "retry-after": "4"})) == 4.0
    assert retry_after_seconds(httpx2.Headers({})) is None
    assert retry_after_seconds(httpx2.Headers({"retry-after": "soon"})) is None
    in_an_hour = retry_after_seconds(
        httpx2.Headers({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"})
    )
    assert in_an_hour is not None
    assert in_an_hour > 3600
