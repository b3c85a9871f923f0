"""A scenario's ``model:`` section as a :class:`ScriptedModel`: deterministic offline runs of the
model path (probe, pre-check, reasoning samples, decide, manage-agent steps)."""

from __future__ import annotations

import dataclasses
import random
import threading
from collections import defaultdict
from collections.abc import Collection

from maestro.brain.judgments import Judgments
from maestro.brain.model_port import ModelError, ModelRequest
from maestro.brain.offline import OfflineBrain
from maestro.brain.stage_models import Models
from maestro.domain.prompt_data import data_strings, read_data_blocks
from maestro_dev.eval_harness.scenario import ModelDistribution, ModelScript
from maestro_dev.scripted import Scripted, ScriptedModel


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


def draw(distribution: ModelDistribution, n: int) -> dict[str, object]:
    """The ``n``-th draw (0-based) of ``distribution``: the same for the same seed and ``n``,
    whatever else ran before it (each draw has its own generator, seeded by both)."""
    roll = random.Random(f"{distribution.seed}:{n}").random()
    total = 0.0
    for choice in distribution.choices:
        total += choice.p
        if roll < total:
            return dict(choice.answer)
    return dict(distribution.choices[-1].answer)  # a rounding edge: the last choice


def scripted_model(script: ModelScript, name: str = "scripted") -> ScriptedModel:
    """Rules first (the first whose purpose matches and whose text the call is about), then
    distributions (the first that matches draws, seeded), then the purpose's answers in call
    order; a call with none fails as ``no_script`` (and the pipeline records its
    deterministic fallback)."""
    drawn: defaultdict[int, int] = defaultdict(int)
    lock = threading.Lock()  # samples are drawn in parallel: each draw takes the next number

    def responder(request: ModelRequest) -> Scripted | None:
        about = new_messages(request).lower()
        for rule in script.rules:
            if rule.purpose != request.purpose or rule.when.lower() not in about:
                continue
            if rule.fail is not None:
                return ModelError(rule.fail, "scripted failure")
            return dict(rule.answer or {})
        for index, distribution in enumerate(script.distributions):
            if distribution.purpose != request.purpose or distribution.when.lower() not in about:
                continue
            with lock:
                n = drawn[index]
                drawn[index] += 1
            return draw(distribution, n)
        return None

    calls = {purpose: [dict(a) for a in answers] for purpose, answers in script.calls.items()}
    return ScriptedModel(calls, responder=responder, name=name)  # type: ignore[arg-type]


def mixed_models(models: Models, offline: Collection[str]) -> Models:
    """``models`` with each purpose of ``offline`` on the path maestro takes with no model:
    reasoning by the offline brain, probe and precheck by the safety floor alone (no triage),
    decide() by its defaults, the manage lane by its own rules, compose by the fixed texts.
    The other purposes keep the model."""
    unknown = set(offline) - {"probe", "precheck", "reasoning", "decide", "manage", "compose"}
    if unknown:
        raise ValueError(f"no such purpose: {', '.join(sorted(unknown))}")
    changes: dict[str, object] = {}
    if "reasoning" in offline:
        changes["brain"] = OfflineBrain()
    if {"probe", "precheck"} & set(offline):
        changes["triage"] = None
    if "decide" in offline:
        changes["judgments"] = Judgments(None)
    if "manage" in offline:
        changes["agent"] = None
    if "compose" in offline:
        changes["composer"] = None
    return dataclasses.replace(models, **changes)  # type: ignore[arg-type]
