"""The language-model port on Anthropic's Messages API, through the official SDK (anthropic 2.x).

One SDK client, built once. Each :meth:`AnthropicModel.ask` is one ``messages.create``: the tier's
model id, the static prefix as ONE system text block, the turns as text, ``tool_use`` and
``tool_result`` blocks, and ``tool_choice`` forcing ``request.force_tool``.

Prompt caching (docs/model-cost.md): the request names its breakpoints (``ModelRequest.cache``);
``system`` marks the system block ``cache_control: ephemeral`` (with the tools before it in the
prompt, tools + system are the cached prefix), ``last_turn`` marks the last block of the last turn
(for the reasoning window, read back by the package's later samples). A breakpoint whose prefix
is under the model's cacheable minimum (:func:`cache_minimum_tokens`) is not sent: it could not
take effect.

What the SDK does and this module leaves to it: retries (``max_retries``) of 408, 409, 429, 5xx
(529 included) and connection failures, with exponential backoff and jitter, honouring
``retry-after-ms`` / ``retry-after``. The SDK honours any ``retry-after``, however long (it only
caps it near 50 days), so a middleware here refuses to wait longer than ``max_retry_wait``: such
an answer fails the call at once, with its kind.

What it does not send: ``temperature``. The SDK 2.x has no sampling parameters, and the API version
it sends (``anthropic-version: 2026-10-21``) rejects them with a 400, whatever the value; so
``ModelRequest.temperature`` has no effect here and the k samples differ by the model's own
sampling.

Every failure is a :class:`ModelError` with a kind; the SDK's exception is not chained to it (it
holds the request, whose headers carry the key), and no message carries the key.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anthropic
import httpx2
from anthropic.types import (
    AssistantMessageParam,
    Message,
    MessageParam,
    TextBlockParam,
    ToolChoiceParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    UserMessageParam,
)

from maestro.brain.model_port import (
    ModelAnswer,
    ModelError,
    ModelFailure,
    ModelRequest,
    Tier,
    ToolUse,
    Turn,
    cacheable_breakpoints,
)

__all__ = ["DEFAULT_CHEAP_MODEL", "DEFAULT_STRONG_MODEL", "AnthropicModel", "cache_minimum_tokens"]

DEFAULT_CHEAP_MODEL: Final = "claude-haiku-5-5"
DEFAULT_STRONG_MODEL: Final = "claude-sonnet-5-5"  # 4-5 reaches end of life on 2026-11-30

# The shortest prefix each model caches, in tokens, from Anthropic's prompt-caching docs (read
# 2026-12-02). A shorter one is processed uncached, whatever its cache_control.
_CACHE_MINIMUMS: Final = (
    ("claude-haiku-4-5", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
    ("claude-sonnet-4-5", 1024),
)
_UNKNOWN_CACHE_MINIMUM: Final = 1024
"""For a model the table does not name (the 5.x defaults among them): the minimum documented for
Sonnet 4.5, Sonnet 4, Opus 4 and 4.1. Too low costs nothing: a breakpoint under the real minimum is
ignored by the API; too high would forgo savings."""


def cache_minimum_tokens(model_id: str) -> int:
    """The shortest prefix ``model_id`` caches, in tokens."""
    return next(
        (tokens for prefix, tokens in _CACHE_MINIMUMS if model_id.startswith(prefix)),
        _UNKNOWN_CACHE_MINIMUM,
    )


_BAD_REQUEST_STATUSES: Final = frozenset({400, 401, 402, 403, 404, 413, 422, 431})
_DETAIL_CHARS: Final = 200

_T = TypeVar("_T")


def failure_kind(status: int) -> ModelFailure:
    """The kind of a failed call, from the HTTP status the API answered with."""
    if status == 529:
        return "overloaded"
    if status == 429:
        return "rate_limited"
    if status == 408:
        return "timeout"
    if status in _BAD_REQUEST_STATUSES:
        return "bad_request"
    return "transport_error"


class AnthropicModel:
    """:class:`maestro.brain.model_port.LanguageModel` on the Messages API.

    ``api_key`` is given by the caller (Secrets Manager or ``ANTHROPIC_API_KEY``), never read here.
    ``timeout`` bounds each HTTP attempt, in seconds; with ``max_retries`` retries and their waits,
    a call can take up to about ``(max_retries + 1) * timeout + max_retries * max_retry_wait``.
    ``http_client`` is for tests (an ``httpx2.Client`` with a ``MockTransport``).
    """

    # Calls are independent HTTP requests on a thread-safe client: the brain may draw its first
    # samples at once (maestro.brain.sample_drawing).
    concurrent_calls = True

    def __init__(
        self,
        api_key: str,
        *,
        cheap: str = DEFAULT_CHEAP_MODEL,
        strong: str = DEFAULT_STRONG_MODEL,
        timeout: float = 20.0,
        max_retries: int = 2,
        max_retry_wait: float = 10.0,
        http_client: httpx2.Client | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("an Anthropic API key is required")
        if not cheap or not strong:
            raise ValueError("both model ids are required")
        if timeout <= 0 or max_retries < 0 or max_retry_wait < 0:
            raise ValueError("timeout must be positive; max_retries, max_retry_wait not negative")
        self._models: dict[Tier, str] = {"cheap": cheap, "strong": strong}
        self._secret = api_key
        self._client = anthropic.Anthropic(
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            middleware=[_RetryWaitCap(max_retry_wait)],
        )

    def __repr__(self) -> str:
        return f"AnthropicModel({self.describe()})"

    def describe(self) -> str:
        return f"anthropic (cheap: {self._models['cheap']}, strong: {self._models['strong']})"

    def model_id(self, tier: Tier) -> str:
        return self._models[tier]

    def ask(self, request: ModelRequest) -> ModelAnswer:
        """One ``messages.create``. Raises :class:`ModelError` (never anything else)."""
        system, messages, tools, tool_choice = self._prompt(request)
        message = self._call(
            lambda: self._client.messages.create(
                model=self.model_id(request.tier),
                max_tokens=request.max_tokens,
                system=system,
                messages=messages,
                tools=tools,
                tool_choice=tool_choice,
            )
        )
        return _answer(message)

    def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens ``request`` would cost (``messages.count_tokens``, no generation)."""
        system, messages, tools, tool_choice = self._prompt(request)
        counted = self._call(
            lambda: self._client.messages.count_tokens(
                model=self.model_id(request.tier),
                system=system,
                messages=messages,
                tools=tools,
                tool_choice=tool_choice,
            )
        )
        tokens = getattr(counted, "input_tokens", None)
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            raise ModelError("transport_error", "the token count did not parse")
        return tokens

    def _prompt(
        self, request: ModelRequest
    ) -> tuple[
        list[TextBlockParam] | anthropic.Omit,
        list[MessageParam],
        list[ToolParam] | anthropic.Omit,
        ToolChoiceParam | anthropic.Omit,
    ]:
        cached = cacheable_breakpoints(request, cache_minimum_tokens(self.model_id(request.tier)))
        system: list[TextBlockParam] | anthropic.Omit = anthropic.omit
        if request.system:
            block: TextBlockParam = {"type": "text", "text": request.system}
            if "system" in cached:
                block["cache_control"] = {"type": "ephemeral"}
            system = [block]
        last = len(request.turns) - 1
        messages = [
            _message(index, turn, cache=index == last and "last_turn" in cached)
            for index, turn in enumerate(request.turns)
        ]
        tools: list[ToolParam] | anthropic.Omit = anthropic.omit
        tool_choice: ToolChoiceParam | anthropic.Omit = anthropic.omit
        if request.tools:
            tools = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in request.tools
            ]
            tool_choice = {"type": "auto"}
        if request.force_tool is not None:
            if request.force_tool not in {t.name for t in request.tools}:
                raise ModelError("bad_request", f"force_tool {request.force_tool!r} is not a tool")
            tool_choice = {"type": "tool", "name": request.force_tool}
        return system, messages, tools, tool_choice

    def _call(self, send: Callable[[], _T]) -> _T:
        try:
            return send()
        except ModelError:
            raise
        except Exception as err:  # every failure becomes a ModelError, chained to nothing
            error = _model_error(err)
        raise ModelError(error.kind, error.detail.replace(self._secret, "[redacted]"))


def _message(index: int, turn: Turn, *, cache: bool = False) -> MessageParam:
    """One turn as a message. A user turn puts its tool results first, as the API requires;
    ``cache`` marks its last block as a cache breakpoint."""
    text: list[TextBlockParam] = [{"type": "text", "text": turn.text}] if turn.text else []
    if turn.role == "user":
        results: list[ToolResultBlockParam] = [
            {
                "type": "tool_result",
                "tool_use_id": r.tool_use_id,
                "content": r.content,
                "is_error": r.is_error,
            }
            for r in turn.tool_results
        ]
        user_content: list[ToolResultBlockParam | TextBlockParam] = [*results, *text]
        if not user_content:
            raise ModelError("bad_request", f"turn {index} (user) is empty")
        if cache:
            user_content[-1]["cache_control"] = {"type": "ephemeral"}
        return UserMessageParam(role="user", content=user_content)
    if turn.tool_results:
        raise ModelError("bad_request", f"turn {index}: tool results belong to a user turn")
    uses: list[ToolUseBlockParam] = [
        {"type": "tool_use", "id": u.id, "name": u.name, "input": u.input} for u in turn.tool_uses
    ]
    assistant_content: list[TextBlockParam | ToolUseBlockParam] = [*text, *uses]
    if not assistant_content:
        raise ModelError("bad_request", f"turn {index} (assistant) is empty")
    if cache:
        assistant_content[-1]["cache_control"] = {"type": "ephemeral"}
    return AssistantMessageParam(role="assistant", content=assistant_content)


def _answer(message: object) -> ModelAnswer:
    """The SDK's message as an answer. The SDK does not validate what it parses: check it here."""
    if not isinstance(message, Message):
        raise ModelError("transport_error", "the response is not a message")
    if message.stop_reason == "refusal":
        category = getattr(message.stop_details, "category", None)
        raise ModelError("refused", f"category {category}" if category else "")
    try:
        return _parsed(message)
    except (AttributeError, TypeError, ValueError) as err:  # pydantic's ValidationError included
        failed = type(err).__name__
    raise ModelError("transport_error", f"the message did not parse ({failed})")


def _parsed(message: Message) -> ModelAnswer:
    texts: list[str] = []
    uses: list[ToolUse] = []
    for block in message.content:
        if block.type == "text":
            if not isinstance(block.text, str):
                raise TypeError("text block without text")
            texts.append(block.text)
        elif block.type == "tool_use":
            uses.append(ToolUse(id=block.id, name=block.name, input=block.input))
    usage = message.usage
    return ModelAnswer(
        model=message.model,
        text="".join(texts),
        tool_uses=tuple(uses),
        stop_reason=message.stop_reason or "",
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
    )


def _model_error(err: Exception) -> ModelError:
    """The SDK's failure (or anything unexpected) as a ModelError with its kind."""
    if isinstance(err, anthropic.APITimeoutError):  # before APIConnectionError: a subclass
        return ModelError("timeout", "no answer within the timeout")
    if isinstance(err, anthropic.APIConnectionError):
        return ModelError("transport_error", "connection error")
    if isinstance(err, anthropic.APIStatusError):
        parts = [f"HTTP {err.status_code}"]
        if err.type:
            parts.append(str(err.type))
        if err.api_message:
            parts.append(str(err.api_message)[:_DETAIL_CHARS])
        if err.request_id:
            parts.append(f"request-id {err.request_id}")
        return ModelError(failure_kind(err.status_code), ": ".join(parts))
    return ModelError("transport_error", f"unexpected {type(err).__name__}")


class _RetryWaitCap(anthropic.Middleware):
    """Fails a call at once, with its kind, when the API asks to wait longer than the cap."""

    def __init__(self, cap: float) -> None:
        self._cap = cap

    def handle(
        self, request: anthropic.APIRequest, call_next: anthropic.CallNext
    ) -> anthropic.APIResponse[Any]:
        response = call_next(request)
        if response.status_code < 400:
            return response
        wait = retry_after_seconds(response.headers)
        if wait is None or wait <= self._cap:
            return response
        response.http_response.close()
        raise ModelError(
            failure_kind(response.status_code),
            f"HTTP {response.status_code}: asked to retry after {wait:.1f} s, "
            f"more than the {self._cap:.1f} s a call may wait",
        )


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """The wait the API asks for, read as the SDK reads it: retry-after-ms, then retry-after
    (seconds, or an HTTP date)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            pass
    date = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return None if date is None else email.utils.mktime_tz(date) - time.time()
