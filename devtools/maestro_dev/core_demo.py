"""Scripted stories for ``maestro demo --core``: the pure domain core over the seeds' packages.

No stack at all: consensus and dispose run in-process over packages whose brain samples are
*scripted* (written here, not produced by a model). ``maestro demo`` without ``--core`` runs
the embedded stack instead (``maestro_dev.local.stack_demo``). The
samples go through the same parser a model's answer would, so a malformed one fails the same
way. Nothing is sent, stored or executed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict

from maestro.brain.sample_parsing import sample_from_text
from maestro.domain.consensus import ConsensusPolicy, ConsensusResult, aggregate
from maestro.domain.dispose import Disposal, dispose
from maestro.domain.models import (
    ContextKind,
    FlushTrigger,
    Message,
    OpenContext,
    Package,
    Party,
    package_id_for,
)
from maestro.domain.records import BrainSample
from maestro_dev.local.world import MARIA

NOW = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
SCRIPTED_MODEL = "scripted (no model was called)"

LEAK_204 = OpenContext(
    context_id="WO-204",
    kind=ContextKind.WORK_ORDER,
    wo_id="WO-204",
    description="leak under the kitchen sink, unit 3B",
    awaiting="availability",
    opened_at=NOW - timedelta(hours=3),
    last_activity_at=NOW - timedelta(minutes=20),
)
TAP_198 = OpenContext(
    context_id="WO-198",
    kind=ContextKind.WORK_ORDER,
    wo_id="WO-198",
    description="dripping bathroom tap, fixed last week",
    awaiting="rating",
    rating_requested=True,
    opened_at=NOW - timedelta(days=9),
    last_activity_at=NOW - timedelta(hours=30),
)
LEAK_211 = OpenContext(
    context_id="WO-211",
    kind=ContextKind.WORK_ORDER,
    wo_id="WO-211",
    description="water dripping from the bathroom ceiling, unit 3B",
    opened_at=NOW - timedelta(hours=5),
    last_activity_at=NOW - timedelta(hours=1),
)


def action_label(lane: str, target_wo_id: str | None) -> str:
    """An action as the demos print it: ``schedule_visit(WO-204)``, or the lane alone when it
    targets no work order (``create_wo``, ``escalate``)."""
    return f"{lane}({target_wo_id})" if target_wo_id else lane


def _plan(*actions: dict[str, Any]) -> str:
    return json.dumps({"actions": list(actions)})


def _schedule(target: str, availability: str) -> dict[str, Any]:
    return {
        "lane": "schedule_visit",
        "target_wo_id": target,
        "confidence": 0.9,
        "why": "answers the access question",
        "evidence": availability,
        "params": {"availability": availability},
    }


def _relay(target: str, note: str, confidence: float = 0.9) -> dict[str, Any]:
    return {
        "lane": "relay_to_open_wo",
        "target_wo_id": target,
        "confidence": confidence,
        "why": "more about an open leak",
        "evidence": note,
        "params": {"note": note},
    }


def _rating(target: str, stars: int) -> dict[str, Any]:
    return {
        "lane": "record_rating",
        "target_wo_id": target,
        "confidence": 0.95,
        "why": "a number after a rating request",
        "evidence": str(stars),
        "params": {"stars": stars},
    }


def _escalate(hazard: str) -> dict[str, Any]:
    return {
        "lane": "escalate",
        "confidence": 0.8,
        "why": "possible gas leak",
        "evidence": hazard,
        "params": {"reason": "emergency", "hazard": hazard},
    }


class Story(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    lesson: str
    sender: Party | None
    sender_phone: str
    contexts: tuple[OpenContext, ...]
    texts: tuple[str, ...]
    scripted_answers: tuple[str, ...]


STORIES: tuple[Story, ...] = (
    Story(
        title="leak-204: the access reply",
        lesson="I7: '2 onward' answers the access question; it is not a 2-star rating of WO-198,"
        " even though WO-198 has a rating request out and one sample read it that way.",
        sender=MARIA,
        sender_phone=MARIA.phone,
        contexts=(LEAK_204, TAP_198),
        texts=("fine to come in, 2 onward",),
        scripted_answers=(
            _plan(_schedule("WO-204", "2pm onward")),
            _plan(_schedule("WO-204", "from 2pm")),
            _plan(_rating("WO-198", 2)),
            _plan(_schedule("WO-204", "2 onward")),
            _plan(_schedule("WO-204", "after 2")),
        ),
    ),
    Story(
        title="two leaks and an ambiguous reply",
        lesson="I3/I4: the samples split between the two open leaks, so nothing is mutated and"
        " one question names both; 'the most recent' is never assumed.",
        sender=MARIA,
        sender_phone=MARIA.phone,
        contexts=(LEAK_204, LEAK_211),
        texts=("the leak is back, worse than before",),
        scripted_answers=(
            _plan(_relay("WO-204", "the leak is back, worse", 0.95)),
            _plan(_relay("WO-211", "the leak is back, worse", 0.95)),
            _plan(_relay("WO-204", "leak is back and worse", 0.95)),
            "Sure! Here's what I think: the tenant means the kitchen leak.",
            _plan(_relay("WO-211", "leak returned", 0.95)),
        ),
    ),
    Story(
        title="two leaks: the answer to the question",
        lesson="The clarification answered ('the kitchen one'), the samples agree and the"
        " relay binds to WO-204 only.",
        sender=MARIA,
        sender_phone=MARIA.phone,
        contexts=(LEAK_204, LEAK_211),
        texts=("the kitchen one",),
        scripted_answers=tuple(
            _plan(_relay("WO-204", "the kitchen leak is back, worse than before")) for _ in range(5)
        ),
    ),
    Story(
        title="a gas leak mid-conversation",
        lesson="I1/I5: two of five samples see an emergency. Escalation is recall-first, goes"
        " first and pre-empts the schedule; the open contexts are kept (interrupted).",
        sender=MARIA,
        sender_phone=MARIA.phone,
        contexts=(LEAK_204, TAP_198),
        texts=("tomorrow morning works", "wait. it smells like gas in the hallway"),
        scripted_answers=(
            _plan(_schedule("WO-204", "tomorrow morning")),
            _plan(_escalate("smell of gas in the hallway")),
            _plan(_schedule("WO-204", "tomorrow morning")),
            _plan(_escalate("gas smell"), _schedule("WO-204", "tomorrow morning")),
            _plan(_schedule("WO-204", "tomorrow morning")),
        ),
    ),
    Story(
        title="an unknown number",
        lesson="Never guess a person: the text names Maria, but the number is not hers. Nothing"
        " is bound; the PM is asked who it is.",
        sender=None,
        sender_phone="+14155559999",
        contexts=(LEAK_204,),
        texts=("hi it's Maria from 3B, new phone. the leak is back",),
        scripted_answers=tuple(_plan(_relay("WO-204", "the leak is back")) for _ in range(5)),
    ),
)


class StoryRun(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    story: Story
    package: Package
    samples: tuple[BrainSample, ...]
    consensus: ConsensusResult
    disposal: Disposal


def run_story(story: Story, number: int, policy: ConsensusPolicy | None = None) -> StoryRun:
    policy = policy or ConsensusPolicy(k=len(story.scripted_answers))
    conversation = f"demo-{number}"
    messages = tuple(
        Message(
            message_id=f"SMdemo{number:02d}{i:02d}",
            conversation_id=conversation,
            from_phone=story.sender_phone,
            body=text,
            received_at=NOW - timedelta(seconds=30 * (len(story.texts) - i)),
            seq=i,
        )
        for i, text in enumerate(story.texts)
    )
    package = Package(
        package_id=package_id_for(conversation, 1),
        conversation_id=conversation,
        flush_number=1,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=story.sender_phone,
        messages=messages,
        flushed_at=NOW,
    )
    samples = tuple(
        sample_from_text(i, text, model=SCRIPTED_MODEL)
        for i, text in enumerate(story.scripted_answers)
    )
    verdicts = aggregate(samples, policy)
    disposal = dispose(package, story.sender, story.contexts, verdicts)
    return StoryRun(
        story=story, package=package, samples=samples, consensus=verdicts, disposal=disposal
    )


def run_all(stories: Sequence[Story] = STORIES) -> list[StoryRun]:
    return [run_story(story, n) for n, story in enumerate(stories, start=1)]
