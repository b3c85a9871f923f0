"""benchmarks/_cost.py: the counting rules, the prompt cache, the prices and the scale check that
bench_cost.py applies, and docs/cost.md against the figures bench/results.json holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cost import (
    DOCS_PATH,
    MIX,
    SERVICES_AWS,
    IndexSpec,
    ModelCall,
    PromptCache,
    Resource,
    generated_part,
    gsi_writes,
    item_size,
    layout_request,
    load_prices,
    load_quotas,
    mix_of,
    package_tokens,
    price_type,
    read_units,
    render_tables,
    scale_report,
    sms_segments,
    write_targets,
    write_units,
)

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results.json"
TOOL_TOKENS = {"auto": 346, "forced": 313}


def test_item_size_counts_names_and_values() -> None:
    item = {
        "pk": {"S": "caps#account"},  # 2 + 12
        "n": {"N": "1234"},  # 1 + 3
        "ok": {"BOOL": True},  # 2 + 1
        "m": {"M": {"a": {"S": "xy"}}},  # 1 + 3 + (1 + 1 + 2)
    }
    assert item_size(item) == 14 + 4 + 3 + 8


def test_units_round_up_per_kb_and_per_4kb() -> None:
    assert write_units(1) == 1
    assert write_units(1025) == 2
    assert write_units(1025, transactional=True) == 4
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=False) == 1.0  # 2 units, halved
    assert read_units(0, consistent=False) == 0.5  # a read that found nothing still costs
    assert read_units(100, consistent=True, transactional=True) == 2


BY_DAY = IndexSpec("completions_by_day", ("completed_day", "completed_key"), {})
BY_DAY_KEYS = IndexSpec(
    "by_day_keys", ("completed_day", "completed_key"), {"ProjectionType": "KEYS_ONLY"}
)
TABLE_KEYS = ("package_id", "decision_id")


def _decision(day: str | None, note: str = "x") -> dict[str, dict[str, str]]:
    item = {"package_id": {"S": "p-1"}, "decision_id": {"S": "d"}, "note": {"S": note * 1500}}
    if day is not None:
        item |= {"completed_day": {"S": day}, "completed_key": {"S": "k"}}
    return item


def test_a_gsi_entry_costs_a_write_per_change_and_two_when_its_key_moves() -> None:
    assert gsi_writes([BY_DAY], TABLE_KEYS, None, _decision(None)) == []  # no key: no entry
    (appears,) = gsi_writes([BY_DAY], TABLE_KEYS, _decision(None), _decision("2026-06-17"))
    assert appears == ("completions_by_day", 2, '{"S": "2026-06-17"}')  # 1.5 KB projected
    (moved,) = gsi_writes([BY_DAY], TABLE_KEYS, _decision("2026-06-17"), _decision("2026-06-18"))
    assert moved[1] == 4
    (keys_only,) = gsi_writes([BY_DAY_KEYS], TABLE_KEYS, None, _decision("2026-06-17"))
    assert keys_only[1] == 1  # the keys alone, under 1 KB
    assert gsi_writes([BY_DAY], TABLE_KEYS, _decision("d"), _decision("d")) == []  # unchanged


def test_write_targets_finds_every_item_a_write_touches() -> None:
    put = {"Put": {"TableName": "t", "Item": {"k": {"S": "1"}}}}
    check = {"ConditionCheck": {"TableName": "u", "Key": {"k": {"S": "2"}}}}
    assert write_targets("TransactWriteItems", {"TransactItems": [put, check]}) == [
        ("t", {"k": {"S": "1"}}, True),
        ("u", {"k": {"S": "2"}}, True),
    ]
    batch = {"RequestItems": {"t": [{"DeleteRequest": {"Key": {"k": {"S": "3"}}}}]}}
    assert write_targets("BatchWriteItem", batch) == [("t", {"k": {"S": "3"}}, False)]
    assert write_targets("Query", {"TableName": "t"}) == []


def test_sms_segments_gsm7_and_ucs2() -> None:
    assert sms_segments("a" * 160) == 1
    assert sms_segments("a" * 161) == 2
    assert sms_segments("[" * 80) == 1  # an extension character counts two
    assert sms_segments("¿dónde está el técnico? " * 3) == 2  # ó is not GSM-7: UCS-2, 70 a text


def _body(system: str, window: str, *, cache_window: bool = False) -> dict[str, object]:
    window_block: dict[str, object] = {"type": "text", "text": window}
    if cache_window:
        window_block["cache_control"] = {"type": "ephemeral"}
    return {
        "model": "m",
        "tools": [{"name": "propose", "description": "d", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "propose"},
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [window_block, {"type": "text", "text": "new"}]}],
    }


def _call(body: dict[str, object], tier: str = "strong") -> ModelCall:
    return layout_request(
        body,
        tier=tier,
        purpose="reasoning",
        stage="brain",
        output_tokens=100,
        tool_system_tokens=TOOL_TOKENS,
    )


def test_a_request_is_laid_out_at_its_cache_breakpoints() -> None:
    plain = _call(_body("s" * 4000, "w" * 2000))
    assert len(plain.prefixes) == 1  # the system block closes the one cached prefix
    (_, prefix) = plain.prefixes[0]
    assert prefix >= 313 + 1000  # the tool-use system prompt, the tool, the system
    assert plain.input_tokens == prefix + 500 + 1  # the window and the new text after it
    cached = _call(_body("s" * 4000, "w" * 2000, cache_window=True))
    assert [t for _, t in cached.prefixes] == [prefix, prefix + 500]


def test_the_cache_writes_once_then_reads_and_ignores_short_prefixes() -> None:
    call = _call(_body("s" * 8000, "w" * 400))
    cache = PromptCache({"strong": 1024, "cheap": 4096})
    first, second = cache.charge(call), cache.charge(call)
    prefix = call.prefixes[0][1]
    assert (first.cache_write, first.cache_read) == (prefix, 0)
    assert (second.cache_write, second.cache_read) == (0, prefix)
    assert first.input + first.cache_write == call.input_tokens
    short = _call(_body("s" * 8000, "w" * 400), tier="cheap")  # under Haiku's 4,096 minimum
    charged = PromptCache({"strong": 1024, "cheap": 4096}).charge(short)
    assert (charged.cache_write, charged.cache_read, charged.input) == (0, 0, short.input_tokens)


def test_warm_reads_only_what_other_packages_also_send() -> None:
    minimum = {"strong": 1024, "cheap": 4096}
    one = _call(_body("s" * 8000, "w" * 8000, cache_window=True))
    two = _call(_body("s" * 8000, "v" * 8000, cache_window=True))
    system = one.prefixes[0][1]
    warm = package_tokens([[one, one], [two, two]], minimum, warm=True)["strong"]
    # The shared system prefix is read by every call; each package writes its own window once
    # and its second sample reads it.
    window = one.prefixes[1][1] - system
    assert warm.cache_write == window
    assert warm.cache_read == 2 * system + window
    cold = package_tokens([[one, one], [two, two]], minimum, warm=False)["strong"]
    assert cold.cache_write == one.prefixes[1][1]


def _per_package(transitions: float = 10, wru: float = 20) -> dict[str, object]:
    tokens = {"input": 1000, "output": 100, "cache_write": 0, "cache_read": 4000}
    return {
        "step_functions": {"transitions": transitions},
        "lambda": {"gb_seconds": 2.0, "invocations": 10},
        "dynamodb": {"wru": wru, "rru": 40},
        "sqs": {"requests": 30},
        "eventbridge": {"events": 4, "bytes": 4000},
        "api": {"requests": 4},
        "logs": {"a": 20_000},
        "xray": {"traces": 6},
        "anthropic": {"tokens_cold": {"strong": tokens}, "tokens_warm": {"strong": tokens}},
        "twilio": {"segments_out": 2, "segments_in": 1},
    }


def test_prices_are_dated_and_each_names_its_source() -> None:
    prices = load_prices()
    assert prices["as_of"]
    assert all(entry["source"] for entry in prices["aws"].values())
    assert load_quotas()["as_of"]


def test_a_package_is_priced_per_service() -> None:
    prices = load_prices()
    priced = price_type(_per_package(), prices)
    assert set(priced["aws_per_service"]) == set(SERVICES_AWS)
    # 10 transitions at $0.025 per 1,000: $0.25 per 1,000 packages.
    assert priced["aws_per_service"]["step_functions"] == pytest.approx(0.25)
    # 1,000 input + 100 output + 4,000 cache read tokens on Sonnet 4.5, per 1,000 packages.
    assert priced["anthropic_warm"] == pytest.approx(1000 * (3000 + 1500 + 1200) / 1e6)
    assert priced["total_warm"] == pytest.approx(priced["aws_subtotal"] + priced["anthropic_warm"])
    assert priced["twilio"] == pytest.approx(1000 * 3 * 0.0083)
    more = price_type(_per_package(transitions=20), prices)
    assert more["aws_per_service"]["step_functions"] == pytest.approx(0.5)


def test_the_mix_weights_the_types() -> None:
    by_type = {name: {"total": float(n)} for n, name in enumerate(MIX)}
    assert mix_of(by_type)["total"] == pytest.approx(sum(n * w for n, w in enumerate(MIX.values())))


def test_scale_names_the_first_bottleneck_and_what_is_over() -> None:
    report = scale_report(
        [
            Resource("wide", 1.0, 10_000, "per s", "q"),
            Resource("narrow", 5.0, 100, "per s", "q", remedy="setting"),
        ]
    )
    assert report["first_bottleneck"] == {"resource": "narrow", "packages_per_s": 20.0}
    assert report["over_80_percent"]["100"] == ["narrow"]
    assert report["needed_at_100"] == {
        "narrow": {"remedy": "setting", "quota_for_80_percent": 625.0}
    }
    assert report["resources"]["wide"]["at_1000"]["percent_of_quota"] == 10.0


def test_docs_show_the_figures_of_the_last_bench_run() -> None:
    """docs/cost.md's table is what render_tables makes of bench/results.json's ``cost`` and
    ``scale`` (run `make bench`, or benchmarks/bench_cost.py, and commit the page)."""
    if not RESULTS.exists() or "cost" not in json.loads(RESULTS.read_text()):
        pytest.skip("no bench/results.json with a cost key here (make bench writes it)")
    results = json.loads(RESULTS.read_text())
    assert generated_part(DOCS_PATH.read_text()) == render_tables(
        results["cost"], results.get("scale")
    )
