"""The account-wide daily caps, the hourly digest's store and the fold window, on DynamoDB (moto):
conditional writes and transactions as the adapters make them."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import pytest
from embedded import decisions, new_executions, outcomes, package_id, to_phone

import maestro.adapters.dynamodb_caps as caps_module
from maestro.adapters.dynamodb_budget import BudgetCaps, DynamoModelBudget
from maestro.adapters.dynamodb_buffer import DynamoPageThrottle
from maestro.adapters.dynamodb_caps import (
    DailyCapLimits,
    DynamoDailyCaps,
    account_day_item,
    account_shard,
)
from maestro.adapters.dynamodb_digest import DynamoDigest
from maestro.domain.digest import DigestEntry
from maestro.observability import DAILY_CAP_METRIC
from maestro.ports.limits import BudgetScope
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.threads import thread_safe_moto
from maestro_dev.local.world import MARIA, seed
from maestro_dev.scripted import ScriptedModel

pytestmark = pytest.mark.integration

T0 = datetime(2026, 6, 17, 14, 5, tzinfo=UTC)
HOUR = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)


@pytest.fixture
def reached(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, str]]]:
    """Every metric the caps count (the embedded stack publishes none)."""
    seen: list[tuple[str, dict[str, str]]] = []
    monkeypatch.setattr(
        caps_module, "count", lambda name, _value=1, **dims: seen.append((name, dims))
    )
    return seen


def _reached(cap: str) -> list[tuple[str, dict[str, str]]]:
    """What one cap reached counts: the metric the daily-cap alarm watches, then which cap."""
    return [(DAILY_CAP_METRIC, {}), (DAILY_CAP_METRIC, {"cap": cap})]


def test_a_daily_cap_refuses_past_its_limit_once_per_send_and_a_forced_send_still_counts(
    aws: Any, reached: list[tuple[str, dict[str, str]]]
) -> None:
    caps = DynamoDailyCaps(
        aws.dynamodb, aws.table_names["conversations"], DailyCapLimits(pages=2, texts=5)
    )
    assert caps.charge("pages", "pkg-a#0#page", T0)
    assert caps.charge("pages", "pkg-a#0#page", T0)  # a re-run: counted once
    assert caps.charge("pages", "pkg-b#0#page", T0)
    assert caps.used("pages", T0) == 2
    assert reached == []
    assert not caps.charge("pages", "pkg-c#0#page", T0)
    assert caps.used("pages", T0) == 2  # refused: nothing counted
    assert reached == _reached("pages")
    assert caps.charge("pages", "pkg-d#0#page", T0, force=True)  # an emergency page
    assert caps.used("pages", T0) == 3
    assert reached == _reached("pages") * 2
    assert caps.charge("texts", "pkg-c#0#reply", T0)  # the caps count apart
    assert caps.charge("pages", "pkg-e#0#page", T0 + timedelta(days=1))  # a new UTC day


def test_the_model_budget_has_an_account_wide_daily_cap(
    aws: Any, reached: list[tuple[str, dict[str, str]]]
) -> None:
    budget = DynamoModelBudget(
        aws.dynamodb, aws.table_names["conversations"], BudgetCaps(account_day_calls=3)
    )
    scopes = [BudgetScope(conversation_id=f"conv-{n}", package_id=f"p{n}") for n in range(4)]
    assert [budget.reserve(scope, T0) for scope in scopes] == [True, True, True, False]
    assert reached == _reached("model_calls")
    # Refused everywhere at once: conv-3's own counts were not charged either.
    item = aws.dynamodb.get_item(
        TableName=aws.table_names["conversations"],
        Key={"conversation_id": {"S": "conv-3"}, "item": {"S": "budget#day#2026-06-17"}},
    )
    assert "Item" not in item
    caps = DynamoDailyCaps(aws.dynamodb, aws.table_names["conversations"], DailyCapLimits())
    assert caps.used("model_calls", T0) == 3
    assert budget.reserve(scopes[3], T0 + timedelta(days=1))


# -- the account's counters, sharded ------------------------------------------------------------


def _homed(shard: int, shards: int, label: str) -> Iterator[str]:
    """Send keys whose home shard is ``shard``."""
    for n in count():
        key = f"{label}-{n}#0#reply"
        if account_shard(key, shards) == shard:
            yield key


def _by_shard(aws: Any, cap: str, shards: int) -> list[int]:
    """Each shard's own count of ``cap`` today, read item by item."""
    found = []
    for shard in range(shards):
        item = aws.dynamodb.get_item(
            TableName=aws.table_names["conversations"], Key=account_day_item(T0, shard)
        ).get("Item", {})
        found.append(int(item.get(cap, {}).get("N", 0)))
    return found


def test_a_full_home_shard_spills_to_the_next_and_only_all_full_refuses(
    aws: Any, reached: list[tuple[str, dict[str, str]]]
) -> None:
    caps = DynamoDailyCaps(
        aws.dynamodb, aws.table_names["conversations"], DailyCapLimits(texts=10, shards=4)
    )
    keys = _homed(2, 4, "spill")  # every send's home is shard 2, whose share is 2 of 10
    sent = [next(keys) for _ in range(10)]
    assert all(caps.charge("texts", key, T0) for key in sent)
    assert _by_shard(aws, "texts", 4) == [3, 3, 2, 2]  # the shares: 10 over 4, in full
    assert caps.used("texts", T0) == 10
    assert reached == []
    assert not caps.charge("texts", next(keys), T0)  # every shard full: refused
    assert not caps.charge("texts", "elsewhere#0#reply", T0)  # whatever its home
    assert caps.used("texts", T0) == 10
    assert reached == _reached("texts") * 2


def test_a_re_charge_counts_once_whichever_shard_counted_it(aws: Any) -> None:
    caps = DynamoDailyCaps(
        aws.dynamodb, aws.table_names["conversations"], DailyCapLimits(texts=8, shards=4)
    )
    keys = _homed(0, 4, "again")
    first, second, spilled = next(keys), next(keys), next(keys)
    assert caps.charge("texts", first, T0)
    assert caps.charge("texts", second, T0)
    assert caps.charge("texts", spilled, T0)  # shard 0 holds its 2: counted on shard 1
    assert _by_shard(aws, "texts", 4) == [2, 1, 0, 0]
    for key in (first, spilled, spilled):
        assert caps.charge("texts", key, T0)  # a re-run: the first answer, nothing counted
    assert caps.charge("texts", spilled, T0, force=True)  # forced or not, once
    assert caps.used("texts", T0) == 3
    fill = _homed(3, 4, "fill")
    assert all(caps.charge("texts", next(fill), T0) for _ in range(5))
    assert caps.used("texts", T0) == 8
    assert caps.charge("texts", spilled, T0)  # every shard full: still its first answer
    assert caps.used("texts", T0) == 8


def test_concurrent_charges_never_count_past_the_limit_and_used_sums_the_shards(aws: Any) -> None:
    limits = DailyCapLimits(texts=23, model_calls=9, shards=4)
    caps = DynamoDailyCaps(aws.dynamodb, aws.table_names["conversations"], limits)
    budget = DynamoModelBudget(
        aws.dynamodb,
        aws.table_names["conversations"],
        BudgetCaps(account_day_calls=limits.model_calls, account_shards=limits.shards),
    )
    sends = [f"race-{n}#0#reply" for n in range(40)]
    scopes = [BudgetScope(conversation_id=f"conv-race-{n}", package_id=f"p{n}") for n in range(16)]
    with thread_safe_moto(), ThreadPoolExecutor(max_workers=8) as pool:
        texts = list(pool.map(lambda key: caps.charge("texts", key, T0), sends + sends))
        calls = list(pool.map(lambda scope: budget.reserve(scope, T0), scopes))
    assert sum(texts[: len(sends)]) == 23  # each send counted at most once, the cap exact
    assert texts[len(sends) :] == texts[: len(sends)]  # a re-run got the first answer
    assert caps.used("texts", T0) == sum(_by_shard(aws, "texts", 4)) == 23
    assert sum(calls) == 9
    assert caps.used("model_calls", T0) == sum(_by_shard(aws, "model_calls", 4)) == 9


def _entry(subject: str, package: str, at: datetime, messages: int = 1) -> DigestEntry:
    return DigestEntry(
        subject=subject,
        kind="unknown_number",
        who=subject,
        excerpt=f"from {package}",
        package_id=package,
        messages=messages,
        at=at,
    )


def test_the_digest_keeps_one_line_per_number_per_hour_and_loses_none_to_its_closing(
    aws: Any,
) -> None:
    digest = DynamoDigest(aws.dynamodb, aws.table_names["conversations"])
    assert digest.add(_entry("+14155557401", "pkg-1", T0, messages=2)) == HOUR
    assert digest.add(_entry("+14155557401", "pkg-1", T0, messages=2)) == HOUR  # a re-run
    assert digest.add(_entry("+14155557401", "pkg-2", T0 + timedelta(minutes=9))) == HOUR
    assert digest.add(_entry("+14155557402", "pkg-3", T0 + timedelta(minutes=20))) == HOUR
    assert digest.due(T0 + timedelta(minutes=30), 24) == []  # the hour is not over
    later = HOUR + timedelta(hours=1, minutes=1)
    assert digest.due(later, 24) == [HOUR]
    lines = {line.subject: line for line in digest.close(HOUR, later)}
    first = lines["+14155557401"]
    assert (first.packages, first.messages, first.excerpt) == (2, 3, "from pkg-1")
    assert (first.first_at, first.last_at) == (T0, T0 + timedelta(minutes=9))
    # An act that ran in the hour but wrote after its digest closed: the next hour has it.
    late = digest.add(_entry("+14155557403", "pkg-4", HOUR + timedelta(minutes=59)))
    assert late == HOUR + timedelta(hours=1)
    assert set(lines) == {"+14155557401", "+14155557402"}
    assert digest.due(later, 24) == [HOUR]  # closed, but its page has not gone yet
    digest.record_sent(HOUR, "SM" + "0" * 32, later)
    assert digest.due(later, 24) == []
    assert digest.due(HOUR + timedelta(hours=2), 24) == [HOUR + timedelta(hours=1)]


def test_the_fold_window_says_what_its_holder_did(aws: Any) -> None:
    throttle = DynamoPageThrottle(aws.dynamodb, aws.table_names["conversations"])
    key = "emergency-page#+14155557404"
    assert throttle.claim(key, "pkg-1#0", T0, 1800) is None
    assert throttle.claim(key, "pkg-2#0", T0 + timedelta(minutes=5), 1800) == "pkg-1#0"
    throttle.record(key, "pkg-2#0", page_sid="SMnot-the-holder", paged_at=T0)  # ignored
    assert throttle.window(key) is not None
    assert throttle.window(key).page_sid is None  # type: ignore[union-attr]
    throttle.record(key, "pkg-1#0", page_sid="SM" + "1" * 32, paged_at=T0)
    window = throttle.window(key)
    assert window is not None
    assert (window.claimant, window.page_sid, window.paged_at) == ("pkg-1#0", "SM" + "1" * 32, T0)
    assert window.until == T0 + timedelta(minutes=30)
    assert throttle.claim(key, "pkg-3#0", T0 + timedelta(minutes=31), 1800) is None


# -- on the embedded stack --------------------------------------------------------------------


def _text(stack: LocalStack, body: str, label: str) -> dict[str, Any]:
    sid = twilio_sid("SM", label)
    assert stack.http(signed_sms_event(stack.twilio_token, sid, MARIA.phone, body))["statusCode"]
    (execution,) = new_executions(stack, stack.idle + 1)
    assert execution["status"] == "SUCCEEDED"
    return execution


def test_past_the_account_model_cap_the_stage_takes_its_default_recorded_as_fallback(
    reached: list[tuple[str, dict[str, str]]],
) -> None:
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    model = ScriptedModel(
        responder=lambda r: triage if r.purpose in ("probe", "precheck") else None
    )
    with LocalStack(model=model, settings={"account_daily_model_calls": 1}) as stack:
        seed(stack)
        execution = _text(stack, "the bathroom fan rattles when it runs", "model-cap")
        assert [c.purpose for c in model.calls] == ["probe"]  # the one call the cap allowed
        made = decisions(stack, execution)
        assert any(d.fallback and d.stage == "fallback" for d in made)
        assert reached[:2] == _reached("model_calls")


def test_past_the_text_cap_a_reply_is_recorded_as_not_sent_and_nothing_claims_it(
    reached: list[tuple[str, dict[str, str]]],
) -> None:
    with LocalStack(settings={"account_daily_texts": 1}) as stack:
        seed(stack)
        _text(stack, "thanks!", "text-cap-1")
        held = _text(stack, "great, thank you", "text-cap-2")
        assert len(to_phone(stack, MARIA.phone)) == 1
        (outcome,) = outcomes(stack, held)
        assert outcome.unsent == (
            f"reply to {MARIA.phone}: not sent, the daily texts cap is reached",
        )
        assert outcome.message_sids == ()
        assert "not sent, the daily texts cap is reached" in outcome.note
        stack.settle()
        rows = stack.ledger.for_package(package_id(held))
        assert [r.event_type for r in rows] == ["decision.recorded"]  # no message.sent claim
        assert all(r.verdict == "evidence" for r in stack.ledger_rows())
        assert reached == _reached("texts")
