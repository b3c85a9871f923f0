"""The language-model port: what maestro asks a model, and what comes back.

Three implementations, chosen by settings and named in every decision record:
- ``anthropic`` (``maestro.adapters.anthropic_model``): the Messages API through the official SDK,
  structured output through a forced tool call, prompt caching of the static prefix;
- ``scripted`` (``maestro.brain.scripted``): replays recorded answers, per purpose, in call
  order, for tests, evals and benchmarks;
- ``offline``: no model at all; every stage takes its deterministic path (the safety floor, the
  offline brain's rules, decide()'s default).

Nothing here imports a provider's SDK. Every failure a model call can have is a
:class:`ModelError` with a kind the callers record; the callers never let one escape: each falls
back to its stage's recorded deterministic default.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import Field

from maestro.domain.common import Frozen

__all__ = [
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
    "ask_forced_tool",
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


class ModelRequest(Frozen):
    purpose: Purpose
    tier: Tier
    system: str = Field(description="The static prefix: instructions, vocabulary (cached)")
    turns: tuple[Turn, ...] = Field(min_length=1)
    tools: tuple[ToolSpec, ...] = ()
    force_tool: str | None = Field(default=None, description="The tool the answer must call")
    max_tokens: int = Field(default=1024, ge=1, le=8192)
    temperature: float = Field(default=0.0, ge=0.0, le=1.0)
    sample_index: int = Field(default=0, ge=0, description="Which of k samples this is")


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
