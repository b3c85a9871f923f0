"""A scenario's ``model:`` section as a :class:`ScriptedModel`: deterministic offline runs of the
model path (probe, pre-check, reasoning samples, decide, manage-agent steps)."""

from __future__ import annotations

from maestro.brain.model import ModelError, ModelRequest
from maestro.brain.scripted import Scripted, ScriptedModel
from maestro.evals.scenario import ModelScript

NEW_MESSAGES = "## New messages"


def new_messages(request: ModelRequest) -> str:
    """What a call is about: a reasoning prompt's own new lines (not the history, which repeats
    earlier texts), or the whole prompt of any other call."""
    text = "\n".join(turn.text for turn in request.turns)
    if NEW_MESSAGES not in text:
        return text
    return text.split(NEW_MESSAGES, 1)[1].split("## Earlier messages", 1)[0]


def scripted_model(script: ModelScript, name: str = "scripted") -> ScriptedModel:
    """Rules first (the first whose purpose matches and whose text the call is about), then the
    purpose's answers in call order; a call with neither fails as ``no_script`` (and the
    pipeline records its deterministic fallback)."""

    def responder(request: ModelRequest) -> Scripted | None:
        about = new_messages(request).lower()
        for rule in script.rules:
            if rule.purpose != request.purpose or rule.when.lower() not in about:
                continue
            if rule.fail is not None:
                return ModelError(rule.fail, "scripted failure")
            return dict(rule.answer or {})
        return None

    calls = {purpose: [dict(a) for a in answers] for purpose, answers in script.calls.items()}
    return ScriptedModel(calls, responder=responder, name=name)  # type: ignore[arg-type]
