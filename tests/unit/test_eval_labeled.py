"""`maestro eval labeled`: the labeled sets, the stages they run through, what it prints."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from builders import act, consensus, package, wo_context

from maestro.brain.offline import OfflineBrain
from maestro.domain.consensus import several_candidates
from maestro.domain.dispose import dispose
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.safety import safety_floor
from maestro_dev.cli import main
from maestro_dev.eval_harness.labeled import (
    ESCALATION_SETS,
    PHONES,
    SETS,
    EscalationItem,
    RoutingItem,
    _contexts,
    _package,
    load,
    load_set,
    read_disposal,
    spread,
)
from maestro_dev.local.world import MARIA

PNG = b"\x89PNG\r\n\x1a\n"


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["eval", "labeled", *argv], out)
    return code, out.getvalue()


def _blocks(text: str) -> dict[str, str]:
    """The printed block of each set, by name."""
    parts = re.split(r"^== (\w+) .*==$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _number(block: str, metric: str) -> float:
    match = re.search(rf"^  {metric}: ([0-9.]+)$", block, re.M)
    assert match, (metric, block)
    return float(match.group(1))


def _rate(block: str, metric: str) -> tuple[int, int]:
    match = re.search(rf"^  {metric}: (\d+)/(\d+)( = [0-9.]+ %| \(undefined\))$", block, re.M)
    assert match, (metric, block)
    return int(match.group(1)), int(match.group(2))


# --- the sets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_set_has_at_least_40_valid_items(name: str) -> None:
    items = load_set(name)  # validated: a label names one of the item's contexts, or new/ambiguous
    assert len(items) >= 40
    if name in ESCALATION_SETS:
        emergencies = [i for i in items if i.emergency]
        least = {"escalation": 40, "spanish": 30}[name]
        assert len(emergencies) >= least
        assert len(items) - len(emergencies) >= least
    else:
        labels = {i.label for i in items}
        assert "new" in labels
        assert any(label.startswith("WO-") for label in labels)
    texts = [(i.text, json.dumps(getattr(i, "contexts", None), default=str)) for i in items]
    assert len(set(texts)) == len(texts), "an item is repeated"


def test_the_spanish_set_is_run_through_the_pre_check_like_the_escalation_set(
    tmp_path: Path,
) -> None:
    """Its figures are printed, never asserted here: the set is measured, not tuned on (#20)."""
    code, text = _run("--brain", "offline", "--set", "spanish", "--out", str(tmp_path))
    assert code == 0, text
    block = _blocks(text)["spanish"]
    assert _rate(block, "escalation recall")[1] == 35
    assert _rate(block, "false-raise rate")[1] == 35
    items = (tmp_path / "spanish_items.jsonl").read_text().splitlines()
    assert {json.loads(line)["lane"] for line in items} <= {"escalate", "reasoning"}


def test_the_routing_sets_hold_no_safety_floor_phrase() -> None:
    """They grade binding, not triage: a floor hit would make the offline brain escalate."""
    for name in ("binding", "pivots", "numbers"):
        for item in load_set(name):
            assert safety_floor(item.text) is None, (name, item.text)


def test_an_invalid_item_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "binding.jsonl"
    good = {"text": "the leak is back", "contexts": [{"id": "WO-1", "description": "a leak"}],
            "label": "WO-1"}  # fmt: skip
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "label": "WO-2"}) + "\n")
    with pytest.raises(ValueError, match=r"(?s)binding\.jsonl:2: .*'WO-2' is none of"):
        load(path, RoutingItem)
    path.write_text(json.dumps({"text": "x", "category": "none", "extra": 1}) + "\n")
    with pytest.raises(ValueError, match=r"binding\.jsonl:1"):
        load(path, EscalationItem)


def test_a_sample_is_spread_across_the_set() -> None:
    assert spread(list(range(10)), 3) == [0, 3, 6]
    assert spread(list(range(4)), 9) == [0, 1, 2, 3]
    assert spread(list(range(4)), None) == [0, 1, 2, 3]


# --- reading a disposal ------------------------------------------------------------------------


def test_an_abstention_is_ambiguous_with_the_share_no_binding_held() -> None:
    contexts = [wo_context("WO-204"), wo_context("WO-211", "leak from the bathroom ceiling")]
    split = consensus(
        [act("relay_to_open_wo", "WO-204")],
        [act("relay_to_open_wo", "WO-211")],
        [act("relay_to_open_wo", "WO-204")],
        [act("relay_to_open_wo", "WO-211")],
        [act("relay_to_open_wo", "WO-204")],
    )
    disposal = dispose(package("the leak is back"), MARIA, contexts, split)
    predicted, lane, confidence = read_disposal(disposal, split, {"WO-204", "WO-211"})
    assert (predicted, lane) == ("ambiguous", "clarify")
    assert confidence == pytest.approx(1 - 3 / 5)
    agreed = consensus([act("create_wo", ref="new:1")], [act("create_wo", ref="new:1")])
    disposal = dispose(package("the oven is broken"), MARIA, contexts, agreed)
    assert read_disposal(disposal, agreed, {"WO-204", "WO-211"}) == ("new", "create_wo", 1.0)


# --- the command -------------------------------------------------------------------------------


def test_offline_on_a_sample_of_each_set_prints_metrics_in_range_and_writes_the_plots(
    tmp_path: Path,
) -> None:
    code, text = _run("--brain", "offline", "--limit", "8", "--out", str(tmp_path))
    assert code == 0, text
    assert "offline brain" in text
    blocks = _blocks(text)
    assert set(blocks) == set(SETS)
    for name, block in blocks.items():
        assert "8 items" in text.split(f"== {name} ")[1].splitlines()[0]
        for metric in ("ECE", "Brier", "AURC"):
            assert 0.0 <= _number(block, metric) <= 1.0, (name, metric)
        right, total = _rate(block, "accuracy")
        assert total == 8
        assert 0 <= right <= total
        rates = (
            ("escalation recall", "false-raise rate")
            if name in ESCALATION_SETS
            else ("binding precision", "binding recall")
        )
        for metric in rates:
            hits, of = _rate(block, metric)
            assert 0 <= hits <= of <= 8, (name, metric)
        for plot in ("reliability", "risk_coverage"):
            png = tmp_path / f"{name}_{plot}.png"
            assert png.read_bytes().startswith(PNG), png
        assert len((tmp_path / f"{name}_items.jsonl").read_text().splitlines()) == 8
    summary = json.loads((tmp_path / "metrics.json").read_text())
    assert summary["measurement"] is True
    assert [s["name"] for s in summary["sets"]] == list(SETS)


def test_the_scripted_stand_in_reaches_every_label_and_says_it_measures_nothing(
    tmp_path: Path,
) -> None:
    """The stand-in answers each item's own label through the real stages, so every label must
    come out but two kinds: a label dispose could never produce (a rating with no request out, a
    target the sender does not own) would show here. The two: the floor decides before any
    model (a negative it raises stays raised), and a binding among several open work orders
    that the words alone do not make is asked about by name, however sure the samples
    (docs/sampling.md). And the output says loudly it is not a measurement."""
    code, text = _run("--brain", "scripted", "--out", str(tmp_path))
    assert code == 0, text
    assert text.count("A PLUMBING CHECK, NOT A MEASUREMENT") == 2  # first and last
    for name, block in _blocks(text).items():
        right, total = _rate(block, "accuracy")
        items = load_set(name)
        floor_raised = sum(
            1
            for item in items
            if name in ESCALATION_SETS and not item.emergency and safety_floor(item.text)
        )
        asked = 0 if name in ESCALATION_SETS else sum(map(_asked_by_name, items))
        assert right == total - floor_raised - asked, (name, block)
        if asked:
            assert f"asked, needlessly {asked}," in block, block
        assert f"0 replayed recorded answers, {total} answered by the label stand-in" in block
    assert json.loads((tmp_path / "metrics.json").read_text())["measurement"] is False


def _asked_by_name(item: RoutingItem) -> bool:
    """Whether a sure right binding of ``item`` is asked about: several open work orders, and
    the words alone (the offline rules) do not bind the labelled one."""
    contexts = _contexts(item)
    if not several_candidates(contexts) or item.label in ("ambiguous", "none"):
        return False
    pkg = _package(item.text, PHONES[item.sender], 1)
    request = BrainRequest(
        package=pkg,
        sender_role=item.sender,
        contexts=contexts,
        window=build_window(pkg, (), (), contexts, item.sender),
    )
    return item.label not in OfflineBrain().bound(request)


def test_recorded_answers_are_replayed(tmp_path: Path) -> None:
    contexts = [
        {"id": "WO-204", "description": "leak under the kitchen sink, unit 3B [open]"},
        {"id": "WO-211", "description": "leak from the bathroom ceiling, unit 3B [open]"},
    ]

    def relay(target: str) -> dict[str, object]:
        return {"actions": [{"lane": "relay_to_open_wo", "target_wo_id": target,
                             "confidence": 0.9, "params": {"note": "again"}}]}  # fmt: skip

    rows = [
        # Two work orders open: a relay binds on three agreeing samples the words corroborate
        # ("sink": docs/sampling.md), 3/3.
        {"text": "under the sink again", "contexts": contexts, "label": "WO-204",
         "recorded": [relay("WO-204")] * 7},
        # A split: the draw stops at the first dissent, ambiguous; no binding held more than 1/2.
        {"text": "the leak is back", "contexts": contexts, "label": "ambiguous",
         "recorded": [relay("WO-204"), relay("WO-211"), relay("WO-204"), relay("WO-211"),
                      relay("WO-204")]},
        # Recorded wrong, and sure of it: the words name the ceiling, so it is asked about by
        # name ("Did you mean WO-204?"), not bound: no false bind.
        {"text": "from the ceiling", "contexts": contexts, "label": "WO-211",
         "recorded": [relay("WO-204")] * 7},
        # One work order open, one answer recorded, the rest fail (nothing scripted): no quorum,
        # the fallback.
        {"text": "it's back", "contexts": contexts[:1], "label": "WO-204",
         "recorded": [relay("WO-204")]},
    ]  # fmt: skip
    (tmp_path / "binding.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    code, text = _run("--brain", "scripted", "--set", "binding", "--dir", str(tmp_path),
                      "--out", str(out))  # fmt: skip
    assert code == 0, text
    block = _blocks(text)["binding"]
    assert "4 replayed recorded answers, 0 answered by the label stand-in" in block
    assert _rate(block, "accuracy") == (2, 4)
    assert _rate(block, "binding precision") == (1, 1)
    assert _rate(block, "binding recall") == (1, 3)
    assert "false bind" not in block
    assert "asked, needlessly 1" in block
    assert "fallback instead of a binding 1" in block
    items = [json.loads(line) for line in (out / "binding_items.jsonl").read_text().splitlines()]
    assert [(i["predicted"], i["confidence"]) for i in items] == [
        ("WO-204", 1.0),
        ("ambiguous", pytest.approx(1 - 1 / 2)),
        ("ambiguous", 0.0),
        ("fallback", 0.0),
    ]


def test_anthropic_without_a_key_says_so_and_exits_non_zero(tmp_path: Path) -> None:
    code, text = _run("--brain", "anthropic", "--out", str(tmp_path))
    assert code == 2
    assert "ANTHROPIC_API_KEY is not set" in text
    assert not list(tmp_path.iterdir())  # nothing measured, nothing written


def test_eval_is_a_command_group() -> None:
    with pytest.raises(SystemExit):
        main(["eval"], io.StringIO())
