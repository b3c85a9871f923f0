"""The scripted model: recorded answers replayed in call order, for tests, evals and benchmarks.

A script is, per purpose (probe, precheck, reasoning, decide, manage), the answers to give in
order: a :class:`ModelAnswer`, a tool input (a dict, answered as a call of the forced tool), or a
:class:`ModelError` to raise. A responder function may answer instead (it sees every request),
for scripts that depend on the text ("this message is an emergency"). Every request is kept, so
a test can count calls and tokens. It is named as such in every output.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from maestro.brain.model_port import ModelAnswer, ModelError, ModelRequest, Purpose, Tier, ToolUse

__all__ = ["Scripted", "ScriptedModel", "answer_with"]

Scripted = ModelAnswer | ModelError | dict[str, Any]
Responder = Callable[[ModelRequest], Scripted | None]


def answer_with(request: ModelRequest, scripted: Scripted, model: str) -> ModelAnswer:
    """A scripted item as the answer to ``request`` (a dict is a call of the forced tool)."""
    if isinstance(scripted, ModelError):
        raise scripted
    if isinstance(scripted, ModelAnswer):
        return scripted
    name = request.force_tool or (request.tools[0].name if request.tools else "answer")
    prompt = request.system + "".join(turn.text for turn in request.turns)
    return ModelAnswer(
        model=model,
        tool_uses=(
            ToolUse(id=f"toolu_scripted_{request.sample_index}", name=name, input=scripted),
        ),
        stop_reason="tool_use",
        # An approximation (about 4 characters a token), so token budgets and counts move.
        input_tokens=max(1, len(prompt) // 4),
        output_tokens=max(1, len(json.dumps(scripted)) // 4),
    )


class ScriptedModel:
    """:class:`maestro.brain.model_port.LanguageModel` replaying a script (no model is called)."""

    def __init__(
        self,
        script: Mapping[Purpose, Sequence[Scripted]] | None = None,
        *,
        responder: Responder | None = None,
        name: str = "scripted",
    ) -> None:
        self._script: dict[str, list[Scripted]] = defaultdict(list)
        for purpose, answers in (script or {}).items():
            self._script[purpose].extend(answers)
        self._responder = responder
        self._name = name
        self.calls: list[ModelRequest] = []

    def describe(self) -> str:
        return f"{self._name} model (recorded answers; no model is called)"

    def model_id(self, tier: Tier) -> str:
        return f"{self._name}-{tier}"

    def ask(self, request: ModelRequest) -> ModelAnswer:
        self.calls.append(request)
        if self._responder is not None:
            scripted = self._responder(request)
            if scripted is not None:
                return answer_with(request, scripted, self.model_id(request.tier))
        queue = self._script[request.purpose]
        if not queue:
            raise ModelError("no_script", f"nothing scripted for a {request.purpose} call")
        return answer_with(request, queue.pop(0), self.model_id(request.tier))

    def calls_for(self, purpose: Purpose) -> list[ModelRequest]:
        return [c for c in self.calls if c.purpose == purpose]
