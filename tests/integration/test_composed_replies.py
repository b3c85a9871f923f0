"""The assistant's composed reply on the embedded stack (issue #20, item 5; see
docs/composed-replies.md).

Signed SMS in; the Anthropic adapter's SDK talks to a mocked Messages API that answers the
triage as a hand-back and the ``reply`` tool with a scripted text. What the tenant receives is
read back from the loopback Twilio, what was recorded from the decision log. One stack for the
file: each test is its own tenant, so its own conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from builders import package
from embedded import captured_logs, new_executions, outcomes, sent_by, sms

from maestro.adapters.anthropic_model import AnthropicModel
from maestro.domain.directory import Person, PersonRole
from maestro.domain.language import language_for
from maestro.domain.prompt_data import read_data_blocks
from maestro.lanes.continue_with_assistant import fixed_reply
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, housed, seed, seed_directory

pytestmark = pytest.mark.integration

NOOR, BRAM, LUPE = (
    Person(
        person_id=f"tenant-{name.lower()}",
        role=PersonRole.TENANT,
        name=name,
        phones=(phone,),
        unit_id=unit,
    )
    for name, phone, unit in (
        ("Noor", "+14155550131", "6A"),
        ("Bram", "+14155550132", "6B"),
        ("Lupe", "+14155550133", "6C"),
    )
)

# What the mocked cheap model composes, by the text it is answering.
COMPOSED = {
    "appreciate the quick reply, all good here": "Glad to hear it, Noor. Have a good one!",
    "cool cool, thx": "No problem! A technician will swing by tomorrow afternoon to check it.",
    "muchas gracias por todo": "¡De nada! Maria, su vecina, le ayuda: (415) 555-0100.",
}


class MessagesApi:
    """The Messages API, mocked: every triage a hand-back, every reply scripted by text."""

    def __init__(self) -> None:
        self.compose_requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        forced = (body.get("tool_choice") or {}).get("name")
        if forced == "triage":
            answer = {"route": "handback", "severity": "none", "confidence": 0.95, "evidence": "x"}
            return httpx2.Response(200, json=_tool("triage", answer))
        if forced == "reply":
            (document,) = read_data_blocks(body["messages"][0]["content"][0]["text"])
            self.compose_requests.append(document)
            return httpx2.Response(
                200, json=_tool("reply", {"text": COMPOSED[document["texts"][0]]})
            )
        plan = {"actions": [{"lane": "continue_with_assistant", "confidence": 0.9}]}
        return httpx2.Response(200, json=_tool("propose_actions", plan))


def _tool(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-5-5",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": name, "input": tool_input}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 240, "output_tokens": 30},
    }


API = MessagesApi()


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    model = AnthropicModel(
        "sk-ant-test-key",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(API)),
    )
    with LocalStack(model=model) as stack:
        seed(stack)
        seed_directory(stack, housed(NOOR, BRAM, LUPE))
        yield stack


def _reply_to(stack: LocalStack, person: Person, text: str) -> tuple[list[str], str]:
    """``person`` texts ``text``; what their package sent them, and its reply's outcome note."""
    phone = person.phones[0]
    sms(stack, text, sender=phone)
    (execution,) = new_executions(stack, stack.idle + 1)
    (outcome,) = [o for o in outcomes(stack, execution) if o.lane == "continue_with_assistant"]
    return sent_by(stack, execution, to=phone), outcome.note


def fixed(text: str, person: Person) -> list[str]:
    """What the lane sends ``person`` for ``text`` with no model: its fixed choice."""
    chosen = fixed_reply(package(text, phone=person.phones[0]), language_for(None, text))
    return [chosen] if chosen is not None else []


def test_a_clean_composed_reply_is_sent_as_composed(stack: LocalStack) -> None:
    sent, note = _reply_to(stack, NOOR, "appreciate the quick reply, all good here")

    assert sent == ["Glad to hear it, Noor. Have a good one!"]
    assert note == "assistant replied: composed reply, checked"
    told = [r for r in API.compose_requests if r["texts"][0].startswith("appreciate")]
    assert told == [
        {"texts": ["appreciate the quick reply, all good here"], "done": [], "language": "en"}
    ]


def test_a_promised_visit_no_action_backs_is_refused_and_the_fixed_text_sent(
    stack: LocalStack,
) -> None:
    with captured_logs() as logs:
        sent, note = _reply_to(stack, BRAM, "cool cool, thx")

    assert sent == fixed("cool cool, thx", BRAM)
    assert note.startswith("assistant replied: composed reply refused, promise: promises a visit")
    assert note.endswith("the fixed text went")
    assert "composed reply refused" in logs.getvalue()
    assert "swing by tomorrow" not in logs.getvalue()  # the refused text is not logged


def test_a_composed_reply_carrying_another_tenants_number_is_refused(stack: LocalStack) -> None:
    sent, note = _reply_to(stack, LUPE, "muchas gracias por todo")

    assert sent == fixed("muchas gracias por todo", LUPE)  # in the language Lupe wrote
    assert language_for(None, "muchas gracias por todo") == "es"
    assert "composed reply refused, contact:" in note
    assert MARIA.phone[-4:] not in note
    assert not any(MARIA.phone[-4:] in body for body in sent)
