"""A scenario's ``model:`` section as a :class:`ScriptedModel`: deterministic offline runs of the
model path (probe, pre-check, reasoning samples, decide, manage-agent steps)."""

from __future__ import annotations

from maestro.brain.model import ModelError, ModelRequest
from maestro.brain.scripted import Scripted, ScriptedModel
from maestro.domain.prompt_data import data_strings, read_data_blocks
from maestro.evals.scenario import ModelScript


def new_messages(request: ModelRequest) -> str:
    """What a call is about, as people wrote it (decoded from the prompt's data blocks, one
    string a line): a reasoning prompt's own new lines (not the history, which repeats earlier
    texts), or every string of any other call's data (its texts, tool results, facts)."""
    texts = [turn.text for turn in request.turns]
    texts += [result.content for turn in request.turns for result in turn.tool_results]
    documents = [document for text in texts for document in read_data_blocks(text)]
    if request.purpose == "reasoning":
        # The window's document (maestro.domain.memory): the package is "new_messages".
        documents = [document["new_messages"]["lines"] for document in documents]
    return "\n".join(s for document in documents for s in data_strings(document))


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
