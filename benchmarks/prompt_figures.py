"""The prompt's size and what the cache makes of it, before and after #21 (docs/model-cost.md).

Offline: tokens are characters / 4 (``maestro.brain.model_port.approx_tokens``; the API's
``count_tokens`` gives exact figures with a key), the cache is ``maestro_dev.prompt_cache``'s
model of Anthropic's, for Sonnet 4.5 (minimum 1,024 tokens) and Haiku 4.5 (4,096). "Before" is
the request as it was: the pydantic schema as generated, one breakpoint after the system prompt.

Run: .venv/bin/python benchmarks/prompt_figures.py   (prints the docs' tables as markdown)
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from maestro.brain.compose import COMPOSE_SYSTEM, COMPOSE_TOOL
from maestro.brain.judgments import DECIDE_SYSTEM, DECIDE_TOOL
from maestro.brain.manage_agent import MANAGE_SYSTEM, TOOLS
from maestro.brain.model_port import ModelRequest, ToolSpec, Turn, approx_tokens, prefix_chars
from maestro.brain.reasoning import REASONING_SYSTEM, propose_tool, reasoning_request
from maestro.brain.triage import TRIAGE_SYSTEM, TRIAGE_TOOL
from maestro.domain.actions import action_plan_json_schema
from maestro.domain.memory import BrainInput, build_window
from maestro.domain.models import (
    FlushTrigger,
    Message,
    Package,
    WorkOrder,
    context_for_work_order,
)
from maestro.domain.records import Disposition, MaestroDecision
from maestro_dev.prompt_cache import PromptCache

SONNET_MINIMUM, HAIKU_MINIMUM = 1024, 4096
T0 = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
PHONE = "+14155550100"


def _tool_chars(tools: tuple[ToolSpec, ...]) -> int:
    turn = Turn(role="user", text="x")
    request = ModelRequest(purpose="decide", tier="cheap", system="", turns=(turn,), tools=tools)
    return prefix_chars(request)["system"]


def window(history: int, chars: int) -> BrainInput:
    """A tenant's window with ``history`` earlier messages (and as many decisions) of about
    ``chars`` characters each, three open work orders."""
    text = ("the kitchen sink is leaking again under the cabinet and the floor is wet, " * 8)[
        :chars
    ]
    messages = [
        Message(
            message_id=f"SM{i:06d}",
            conversation_id="conv-1",
            from_phone=PHONE,
            body=f"{i}: {text}",
            received_at=T0 - timedelta(minutes=history - i),
            seq=i + 1,
        )
        for i in range(history)
    ]
    decisions = [
        MaestroDecision(
            decision_id=f"pkg-{i}#dispose#0",
            package_id=f"pkg-{i}",
            conversation_id="conv-1",
            stage="dispose",
            index=0,
            disposition=Disposition.QUEUED,
            lane="relay_to_open_wo",
            target_wo_id="WO-204",
            open_context_count=3,
            confidence=1.0,
            reason="5/5 samples agree: the tenant adds to the kitchen leak, WO-204",
            recorded_at=T0 - timedelta(minutes=history - i),
        )
        for i in range(history)
    ]
    contexts = tuple(
        context_for_work_order(
            WorkOrder(
                wo_id=f"WO-{n}",
                tenant_id="tenant-maria",
                unit="3B",
                summary=summary,
                created_at=T0 - timedelta(days=3),
                updated_at=T0 - timedelta(hours=1),
            )
        )
        for n, summary in ((204, "leak under the kitchen sink"), (211, "bathroom fan loud"),
                           (215, "bedroom window does not close"))
    )  # fmt: skip
    new = Message(
        message_id="SMnew",
        conversation_id="conv-1",
        from_phone=PHONE,
        body="any update on the leak? it got worse overnight",
        received_at=T0,
        seq=history + 1,
    )
    package = Package(
        package_id="pkg-new",
        conversation_id="conv-1",
        flush_number=history + 1,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=PHONE,
        messages=(new,),
        flushed_at=T0,
    )
    return build_window(package, [*messages, new], decisions, contexts, "tenant")


def before(request: ModelRequest) -> ModelRequest:
    full = ToolSpec(
        name=propose_tool().name,
        description=propose_tool().description,
        input_schema=action_plan_json_schema(),
    )
    return request.model_copy(update={"tools": (full,), "cache": ("system",)})


def package_cost(
    shown: BrainInput, k: int, *, old: bool, warm: bool, together: bool
) -> tuple[float, int, int]:
    """(cost in uncached-token equivalents, tokens read, tokens in all) of one package's k
    samples; ``warm``: another package wrote the prefix within five minutes; ``together``: the
    first two samples are sent at once (the second then asks no window breakpoint)."""
    cache = PromptCache(SONNET_MINIMUM)
    if warm:
        cache.send(
            [
                reasoning_request(window(3, 100))
                if not old
                else before(reasoning_request(window(3, 100)))
            ]
        )
    requests = [reasoning_request(shown, i) for i in range(k)]
    if old:
        requests = [before(r) for r in requests]
    elif together and k >= 2:
        requests[1] = reasoning_request(shown, 1, cache_window=False)
    uses = []
    if together:
        uses += cache.send(requests[:2], at=1.0, together=True)
        uses += cache.send(requests[2:], at=2.0)
    else:
        uses += cache.send(requests, at=1.0)
    return sum(u.cost for u in uses), sum(u.read for u in uses), sum(u.total for u in uses)


def main() -> None:
    full = json.dumps(action_plan_json_schema(), separators=(",", ":"))
    compact = json.dumps(propose_tool().input_schema, separators=(",", ":"))
    print("| part of each reasoning call | before: chars | tokens | after: chars | tokens |")
    print("|---|---:|---:|---:|---:|")
    print(f"| tool schema (propose_actions) | {len(full):,} | {approx_tokens(len(full)):,} "
          f"| {len(compact):,} | {approx_tokens(len(compact)):,} |")  # fmt: skip
    system = len(REASONING_SYSTEM)
    print(f"| system prompt | {system:,} | {approx_tokens(system):,} | {system:,} "
          f"| {approx_tokens(system):,} |")  # fmt: skip
    windows = {
        "short (3 earlier messages)": window(3, 80),
        "long (20 messages of 480 chars)": window(40, 470),
    }
    for name, shown in windows.items():
        chars = len(shown.render())
        print(f"| window, {name} | {chars:,} | {approx_tokens(chars):,} | {chars:,} "
              f"| {approx_tokens(chars):,} |")  # fmt: skip
    print()
    print("| other prefixes (tools + system) | chars | tokens | the tier's minimum |")
    print("|---|---:|---:|---:|")
    for name, sys_text, tools, minimum in (
        ("triage (probe, pre-check), cheap", TRIAGE_SYSTEM, (TRIAGE_TOOL,), HAIKU_MINIMUM),
        ("decide (judgments), cheap", DECIDE_SYSTEM, (DECIDE_TOOL,), HAIKU_MINIMUM),
        ("compose (assistant reply), cheap", COMPOSE_SYSTEM, (COMPOSE_TOOL,), HAIKU_MINIMUM),
        ("manage agent, strong", MANAGE_SYSTEM, TOOLS, SONNET_MINIMUM),
    ):
        chars = len(sys_text) + _tool_chars(tools)
        print(f"| {name} | {chars:,} | {approx_tokens(chars):,} | {minimum:,} |")
    print()
    print("| package (reasoning samples only) | window | before: cost | hit share | after: cost "
          "| hit share | after, first two at once: cost | hit share |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for warm in (True, False):
        for k, kind in ((2, "clear, k = 2"), (3, "k = 3"), (5, "ambiguous, k = 5")):
            for name, shown in windows.items():
                row = [f"{kind}, {'warm' if warm else 'cold'} prefix", name.split(" ")[0]]
                for old, together in ((True, False), (False, False), (False, True)):
                    cost, read, total = package_cost(
                        shown, k, old=old, warm=warm, together=together
                    )
                    row += [f"{cost:,.0f}", f"{read / total:.0%}"]
                print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
