"""The language-model port: what maestro asks a model, and what comes back.

Three implementations, chosen by settings and named in every decision record:
- ``anthropic`` (``maestro.adapters.anthropic_model``): the Messages API through the official SDK,
  structured output through a forced tool call, prompt caching where the request asks for it
  (``ModelRequest.cache``) and the prefix is long enough to be cached;
- ``scripted`` (``maestro_dev.scripted``): replays recorded answers, per purpose, in call
  order, for tests, evals and benchmarks;
- ``offline``: no model at all; every stage takes its deterministic path (the safety floor, the
  offline brain's rules, decide()'s default).

Nothing here imports a provider's SDK. Every failure a model call can have is a
:class:`ModelError` with a kind the callers record; the callers never let one escape: each falls
back to its stage's recorded deterministic default.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol

from pydantic import Field

from maestro.domain.common import Frozen

__all__ = [
    "APPROX_CHARS_PER_TOKEN",
    "CacheBreakpoint",
    "LanguageModel",
    "ModelAnswer",
    "ModelError",
    "ModelFailure",
    "ModelRequest",
    "Purpose",
    "Tier",
    "ToolResult",
    "ToolSpec",
    "ToolUse",
    "Turn",
    "approx_tokens",
    "ask_forced_tool",
    "cacheable_breakpoints",
    "prefix_chars",
]

Purpose = Literal["probe", "precheck", "reasoning", "decide", "manage", "compose"]
"""Why the call is made: it picks the tier, the budget line and (scripted) the script."""

Tier = Literal["cheap", "strong"]
"""A cheap, fast model for the probe, the pre-check, decide() and the composed reply; a stronger
one for reasoning and the manage agent. The ids are settings."""

ModelFailure = Literal[
    "timeout",
    "overloaded",
    "rate_limited",
    "transport_error",
    "bad_request",
    "refused",
    "budget_exhausted",
    "no_script",
]


class ModelError(Exception):
    """A model call that produced no answer: the caller records ``kind`` and falls back."""

    def __init__(self, kind: ModelFailure, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind: ModelFailure = kind
        self.detail = detail


class ToolSpec(Frozen):
    """A tool the model may (or must) call; ``input_schema`` is JSON Schema."""

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str
    input_schema: dict[str, Any]


class ToolUse(Frozen):
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResult(Frozen):
    tool_use_id: str
    content: str
    is_error: bool = False


class Turn(Frozen):
    """One turn of the conversation sent to the model (the manage agent loops over several)."""

    role: Literal["user", "assistant"]
    text: str = ""
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()


CacheBreakpoint = Literal["system", "last_turn"]
"""Where a prompt-cache breakpoint may go (docs/model-cost.md). The cached prefix is tools, then
system, then the turns, in that order: ``system`` caches the tools and the system prompt (the
same for every call of a purpose); ``last_turn`` caches everything up to the end of the last turn
(the reasoning window, which every later sample of the same package sends again)."""


class ModelRequest(Frozen):
    purpose: Purpose
    tier: Tier
    system: str = Field(description="The static prefix: instructions, vocabulary")
    turns: tuple[Turn, ...] = Field(min_length=1)
    tools: tuple[ToolSpec, ...] = ()
    force_tool: str | None = Field(default=None, description="The tool the answer must call")
    max_tokens: int = Field(default=1024, ge=1, le=8192)
    temperature: float = Field(default=0.0, ge=0.0, le=1.0)
    sample_index: int = Field(default=0, ge=0, description="Which of k samples this is")
    cache: tuple[CacheBreakpoint, ...] = Field(
        default=("system",),
        description="The cache breakpoints asked for; one whose prefix is under the model's "
        "cacheable minimum is not sent (cacheable_breakpoints)",
    )


APPROX_CHARS_PER_TOKEN = 4
"""Characters per token for an estimate made offline (English prose and compact JSON; the API's
``count_tokens`` gives the exact figure). Used to decide whether a prefix can be cached at all
and to report prompt sizes; never to cut anything."""


def approx_tokens(chars: int) -> int:
    return -(-chars // APPROX_CHARS_PER_TOKEN)


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _turn_chars(turn: Turn) -> int:
    uses = sum(len(_compact_json({"name": u.name, "input": u.input})) for u in turn.tool_uses)
    return len(turn.text) + uses + sum(len(r.content) for r in turn.tool_results)


def prefix_chars(request: ModelRequest) -> dict[CacheBreakpoint, int]:
    """The characters of the prompt up to each breakpoint: the tools' definitions and the system
    prompt (``system``), then every turn too (``last_turn``)."""
    tools = sum(
        len(
            _compact_json(
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            )
        )
        for t in request.tools
    )
    static = tools + len(request.system)
    return {"system": static, "last_turn": static + sum(map(_turn_chars, request.turns))}


def cacheable_breakpoints(
    request: ModelRequest, minimum_tokens: int
) -> tuple[CacheBreakpoint, ...]:
    """The breakpoints of ``request.cache`` that can take effect: a prefix shorter than the
    model's minimum is not cached (the API processes it uncached), so no breakpoint is sent
    for it. The estimate is :func:`approx_tokens`; a breakpoint on an empty system is none."""
    sizes = prefix_chars(request)
    return tuple(
        point
        for point in request.cache
        if approx_tokens(sizes[point]) >= minimum_tokens and (point != "system" or request.system)
    )


class ModelAnswer(Frozen):
    model: str = Field(description="The model id that answered")
    text: str = ""
    tool_uses: tuple[ToolUse, ...] = ()
    stop_reason: str = ""
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)

    def tool_input(self, name: str) -> dict[str, Any] | None:
        """The input of the first call of tool ``name``, if the answer made one."""
        return next((use.input for use in self.tool_uses if use.name == name), None)


class LanguageModel(Protocol):
    """One model provider behind maestro's calls."""

    def describe(self) -> str:
        """What answers, named in every output (e.g. "anthropic (claude-… / claude-…)")."""

    def model_id(self, tier: Tier) -> str: ...

    def ask(self, request: ModelRequest) -> ModelAnswer:
        """One call. Raises :class:`ModelError` (never anything else) when no answer came."""


def ask_forced_tool(
    model: LanguageModel,
    purpose: Purpose,
    system: str,
    tool: ToolSpec,
    user_text: str,
    max_tokens: int,
) -> dict[str, Any]:
    """One cheap-tier call whose one user turn is ``user_text`` and whose answer must call
    ``tool``: the tool's input. Raises ValueError when the answer made no such call (a
    malformed answer, for the caller's fallback) and ModelError when no answer came."""
    answer = model.ask(
        ModelRequest(
            purpose=purpose,
            tier="cheap",
            system=system,
            turns=(Turn(role="user", text=user_text),),
            tools=(tool,),
            force_tool=tool.name,
            max_tokens=max_tokens,
        )
    )
    found = answer.tool_input(tool.name)
    if found is None:
        raise ValueError(f"the model did not call the {tool.name} tool")
    return found
