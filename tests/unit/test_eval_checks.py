"""The scenario format's newer checks (issue #22): whole-word and per-recipient message checks,
package contents, samples and votes, a work order's fields, what is out to a party, consent; and
the model script's seeded distributions and offline purposes, and whom ``pm`` names.

Pure: each lens is graded on :class:`Reads` built here, as the surfaces would return them."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.brain.model_port import ModelError, ModelRequest, Turn
from maestro.brain.offline import OfflineBrain
from maestro.brain.reasoning import ModelBrain
from maestro.brain.stage_models import models_for
from maestro.domain.actions import Lane
from maestro.domain.models import VisitWindow, WorkOrder
from maestro.domain.records import Disposition, MaestroDecision
from maestro_dev.eval_harness.executor import paged_pm
from maestro_dev.eval_harness.lenses import (
    PackageContents,
    PackageReads,
    PendingRead,
    Reads,
    SentRecord,
    grade,
    has_words,
)
from maestro_dev.eval_harness.loader import parse_scenario
from maestro_dev.eval_harness.model import draw, mixed_models, scripted_model
from maestro_dev.eval_harness.scenario import Expect, ModelDistribution, ModelScript
from maestro_dev.local.stack import ON_CALL_PM
from maestro_dev.local.world import MARIA, PAULA, VIC
from maestro_dev.scripted import ScriptedModel

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
PHONES = {"pm": PAULA.phone, "tenant-maria": MARIA.phone, "vendor-vic": VIC.phone}


def expect(**fields: Any) -> Expect:
    return Expect.model_validate(fields)


def failed(expectation: Expect, reads: Reads, start: datetime | None = T0) -> list[str]:
    graded = grade(expectation, reads, PHONES, start)
    return [f.expectation for f in graded.findings if not f.passed]


def decision(package: str = "p1", **extra: Any) -> MaestroDecision:
    return MaestroDecision(
        decision_id=f"{package}#dispose#0",
        package_id=package,
        conversation_id="c",
        stage="dispose",
        index=0,
        disposition=Disposition.QUEUED,
        lane=extra.pop("lane", Lane.CLARIFY),
        open_context_count=2,
        confidence=0.9,
        recorded_at=T0,
        **extra,
    )


def work_order(wo_id: str = "WO-7", **extra: Any) -> WorkOrder:
    return WorkOrder(
        wo_id=wo_id,
        tenant_id="tenant-maria",
        summary=extra.pop("summary", "water under the laundry machine"),
        created_at=T0,
        updated_at=T0,
        **extra,
    )


# -- whole words, and negatives per recipient ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words", "found"),
    [
        ("Your request WO-198 is done", "WO-1", False),
        ("Your request WO-1. Thanks", "WO-1", True),
        ("about wo-1, the boiler", "WO-1", True),
        ("the pipe is leaky", "leak", False),
        ("[EMERGENCY] boiler room", "[EMERGENCY]", True),
        ("x[EMERGENCY]y", "[EMERGENCY]", True),  # a bracket needs no boundary
        ("call 9110 now", "911", False),
        ("call 911 now", "911", True),
        ("anything", "", True),
    ],
)
def test_words_match_whole_words_only(text: str, words: str, found: bool) -> None:
    assert has_words(text, words) is found


def test_a_message_check_does_not_match_inside_a_longer_id() -> None:
    reads = Reads(messages=(SentRecord(sid="S1", to=MARIA.phone, body="WO-198 was rated, thanks"),))
    assert failed(expect(messages=[{"to": "tenant-maria", "contains": "WO-1"}]), reads) == [
        "message to tenant-maria containing 'WO-1'"
    ]
    assert not failed(expect(messages=[{"to": "tenant-maria", "contains": "WO-198"}]), reads)
    assert not failed(expect(no_message_containing=["WO-19"]), reads)


def test_a_negative_names_its_recipient_and_no_one_else() -> None:
    reads = Reads(
        messages=(
            SentRecord(sid="S1", to=VIC.phone, body="Gate code for the boiler job: 4417"),
            SentRecord(sid="S2", to=MARIA.phone, body="The plumber has your access details"),
        )
    )
    # The code went to the vendor, which is allowed: a negative about the tenant holds.
    assert not failed(expect(no_messages=[{"to": "tenant-maria", "contains": "4417"}]), reads)
    assert failed(expect(no_messages=[{"to": "vendor-vic", "contains": "4417"}]), reads) == [
        "no message to vendor-vic containing '4417'"
    ]
    # The every-recipient form still sees it.
    assert failed(expect(no_message_containing=["4417"]), reads) == ["no message containing '4417'"]


# -- package contents ----------------------------------------------------------------------------


def package(package_id: str, trigger: str, texts: tuple[str, ...], media: int = 0) -> PackageReads:
    return PackageReads(
        package_id=package_id,
        contents=PackageContents(trigger=trigger, sender=MARIA.phone, texts=texts, media=media),
    )


def test_package_contents_are_matched_in_order_with_trigger_texts_and_files() -> None:
    reads = Reads(
        packages=(
            package("p1", "idle_timeout", ("the dryer is sparking", "photo attached"), media=1),
            package("p2", "kickoff", ("thanks",)),
        )
    )
    right = [
        {
            "from": "tenant-maria",
            "trigger": "idle_timeout",
            "texts": ["dryer", "photo"],
            "media": 1,
        },
        {"trigger": "kickoff", "texts": ["thanks"]},
    ]
    assert not failed(expect(package_contents=right), reads)
    swapped = [right[1], right[0]]
    assert "package 1 trigger=kickoff" in failed(expect(package_contents=swapped), reads)
    reordered = [{**right[0], "texts": ["photo", "dryer"]}, right[1]]
    assert failed(expect(package_contents=reordered), reads) == [
        "package 1 texts=['photo', 'dryer']"
    ]
    one_text_short = [{**right[0], "texts": ["dryer"]}, right[1]]
    assert failed(expect(package_contents=one_text_short), reads) == ["package 1 texts=['dryer']"]
    assert failed(expect(package_contents=[{**right[0], "media": 2}, right[1]]), reads) == [
        "package 1 media=2"
    ]
    assert failed(expect(package_contents=[{**right[0], "from": "vendor-vic"}, right[1]]), reads)
    assert "packages = 1 (contents)" in failed(expect(package_contents=[right[0]]), reads)


def test_a_package_not_read_back_fails() -> None:
    reads = Reads(packages=(PackageReads(package_id="p1"),))
    assert failed(expect(package_contents=[{"trigger": "idle_timeout"}]), reads) == ["package 1"]


# -- samples and votes ---------------------------------------------------------------------------


def test_samples_and_the_vote_split_are_read_from_the_decision() -> None:
    split = decision(
        samples=4,
        valid_samples=3,
        votes={"create_wo:new:1": 1, "relay_to_open_wo:WO-7": 2},  # as stored: by key
        abstained=True,
    )
    reads = Reads(packages=(PackageReads(package_id="p1", decisions=(split,)),))
    assert not failed(
        expect(decisions=[{"samples": 4, "valid_samples": 3, "vote_split": [2, 1]}]), reads
    )
    assert not failed(
        expect(decisions=[{"votes": {"create_wo:new:1": 1, "relay_to_open_wo:WO-7": 2}}]), reads
    )
    assert failed(expect(decisions=[{"vote_split": [1, 2]}]), reads)  # largest first
    assert failed(expect(decisions=[{"vote_split": [3]}]), reads)
    assert failed(expect(decisions=[{"samples": 3}]), reads)
    assert failed(expect(decisions=[{"votes": {"relay_to_open_wo:WO-7": 2}}]), reads)
    assert failed(expect(no_decision=[{"vote_split": [2, 1]}]), reads)


# -- a work order's fields ---------------------------------------------------------------------


def test_a_work_orders_fields_are_graded_from_the_store_and_its_timeline() -> None:
    window = VisitWindow(start=T0 + timedelta(hours=20), end=T0 + timedelta(hours=22))
    store = {
        "WO-7": work_order(category="appliance", visit=window, vendor_id="vendor-vic"),
        "WO-8": work_order("WO-8", summary="no heat in the bedroom"),
    }
    reads = Reads(
        work_orders=store,
        notes={"WO-7": ("bring a 3/4 inch fitting", "tenant home after 5")},
        photos={"WO-7": 2},
        interrupted={"WO-8": True},
    )
    right = {
        "WO-7": {
            "category": "appliance",
            "summary": "laundry machine",
            "visit": {"start": "20h", "end": "22h"},
            "notes": ["3/4 inch fitting", "after 5"],
            "photos": 2,
            "interrupted": False,
            "vendor": "vendor-vic",
        },
        "WO-8": {"interrupted": True, "visit": "none", "notes": [], "vendor": "none"},
    }
    assert not failed(expect(work_orders=right), reads)
    wrong = {
        "WO-7": {
            "category": "plumbing",
            "summary": "laundry mach",
            "visit": {"start": "20h", "end": "23h"},
            "notes": ["after 5", "3/4 inch fitting"],
            "photos": 1,
            "interrupted": True,
            "vendor": "none",
        },
        "WO-8": {"interrupted": False, "visit": {"start": "1h", "end": "2h"}, "notes": ["x"]},
    }
    assert sorted(failed(expect(work_orders=wrong), reads)) == sorted(
        [
            "WO-7 category=plumbing",
            "WO-7 summary has 'laundry mach'",
            "WO-7 visit=20h..23h",
            "WO-7 notes=['after 5', '3/4 inch fitting']",
            "WO-7 photos=1",
            "WO-7 interrupted=True",
            "WO-7 vendor=none",
            "WO-8 interrupted=False",
            "WO-8 visit=1h..2h",
            "WO-8 notes=['x']",
        ]
    )


def test_a_field_check_on_a_missing_work_order_fails_as_nothing_to_read() -> None:
    graded = grade(expect(work_orders={"WO-404": {"category": "plumbing"}}), Reads(), PHONES, T0)
    assert not graded.passed
    assert "nothing to read" in graded.reason


# -- what is out: questions, holds, offers; consent --------------------------------------------


def test_pending_items_are_matched_by_party_kind_work_order_and_words() -> None:
    reads = Reads(
        work_orders={"WO-9": work_order("WO-9")},
        created=("WO-9",),
        pending=(
            PendingRead(
                kind="question",
                party_id="tenant-maria",
                text="Which one: the boiler or the dryer?",
                wo_ids=("WO-7", "WO-8"),
            ),
            PendingRead(kind="offer", party_id="vendor-vic", wo_ids=("WO-9",)),
        ),
    )
    right = [
        {"to": "tenant-maria", "kind": "question", "wo": "WO-8", "contains": "dryer", "count": 1},
        {"to": "vendor-vic", "kind": "offer", "wo": "new:1"},
        {"to": "tenant-maria", "kind": "hold", "count": 0},
        {"to": "vendor-vic", "kind": "question", "count": 0},
    ]
    assert not failed(expect(pending=right), reads)
    assert failed(expect(pending=[{"to": "tenant-maria", "kind": "hold"}]), reads)
    assert failed(expect(pending=[{"to": "vendor-vic", "kind": "offer", "wo": "WO-7"}]), reads)
    assert failed(
        expect(pending=[{"to": "tenant-maria", "kind": "question", "contains": "dry"}]), reads
    )
    assert failed(expect(pending=[{"to": "tenant-maria", "kind": "offer"}]), reads)
    # Nothing read (no store): a failure, never a pass, even for count 0.
    nothing = failed(expect(pending=[{"to": "tenant-maria", "kind": "hold", "count": 0}]), Reads())
    assert nothing == ["pending"]


def test_consent_is_read_by_the_partys_phone() -> None:
    reads = Reads(opted_out={MARIA.phone: True, VIC.phone: False})
    assert not failed(expect(opted_out={"tenant-maria": True, "vendor-vic": False}), reads)
    assert failed(expect(opted_out={"tenant-maria": False}), reads) == [
        "tenant-maria opted out = False"
    ]


# -- the model: seeded distributions, purposes offline -------------------------------------------


RELAY = {"actions": [{"lane": "relay_to_open_wo", "target_wo_id": "WO-7"}]}
CREATE = {"actions": [{"lane": "create_wo"}]}


def distribution(seed: int = 3) -> ModelDistribution:
    return ModelDistribution.model_validate(
        {
            "purpose": "reasoning",
            "seed": seed,
            "choices": [{"p": 0.6, "answer": RELAY}, {"p": 0.4, "answer": CREATE}],
        }
    )


def test_a_distribution_draws_with_its_probabilities_and_repeats_with_its_seed() -> None:
    lanes = [draw(distribution(), n)["actions"][0]["lane"] for n in range(2000)]  # type: ignore[index]
    share = Counter(lanes)["relay_to_open_wo"] / len(lanes)
    assert 0.56 < share < 0.64
    again = [draw(distribution(), n)["actions"][0]["lane"] for n in range(2000)]  # type: ignore[index]
    assert again == lanes
    other = [draw(distribution(seed=4), n)["actions"][0]["lane"] for n in range(2000)]  # type: ignore[index]
    assert other != lanes


def request(purpose: str, text: str = "the dryer is sparking") -> ModelRequest:
    return ModelRequest(
        purpose=purpose,  # type: ignore[arg-type]
        tier="cheap",
        system="s",
        turns=(Turn(role="user", text=text),),
    )


def test_the_script_answers_rules_then_distributions_then_calls() -> None:
    script = ModelScript.model_validate(
        {
            "rules": [{"purpose": "reasoning", "when": "gas", "answer": {"actions": []}}],
            "distributions": [distribution().model_dump()],
            "calls": {"decide": [{"answer": "yes"}]},
        }
    )
    model = scripted_model(script)
    drawn = [model.ask(request("reasoning")).tool_uses[0].input for _ in range(6)]
    assert drawn == [draw(distribution(), n) for n in range(6)]
    assert model.ask(request("decide")).tool_uses[0].input == {"answer": "yes"}
    with pytest.raises(ModelError, match="nothing scripted"):
        model.ask(request("decide"))


def test_offline_purposes_take_the_no_model_path_and_the_rest_keep_the_model() -> None:
    model = ScriptedModel({})
    mixed = mixed_models(models_for(model), ["probe", "precheck", "decide", "compose", "manage"])
    assert mixed.model is model
    assert isinstance(mixed.brain, ModelBrain)  # reasoning: still the model
    assert mixed.triage is None
    assert mixed.agent is None
    assert mixed.composer is None
    assert not mixed.judgments.available  # decide()'s defaults
    offline_reasoning = mixed_models(models_for(model), ["reasoning"])
    assert isinstance(offline_reasoning.brain, OfflineBrain)
    assert offline_reasoning.triage is not None  # the probe still asks the model
    assert offline_reasoning.judgments.available
    with pytest.raises(ValueError, match="no such purpose"):
        mixed_models(models_for(model), ["guess"])


# -- whom 'pm' names -----------------------------------------------------------------------------


def world(**changes: Any) -> Any:
    data: dict[str, Any] = {
        "id": "s",
        "title": "t",
        "naive_failure": "n",
        "world": {"base": "maria", **changes},
        "turns": [{"from": "tenant-maria", "text": "hi"}],
        "checkpoints": [{"after": 0, "id": "c", "expect": {"packages": 1}}],
    }
    return parse_scenario(data).world


def test_pm_is_whom_the_world_pages_at_its_start() -> None:
    lee = {"id": "pm-lee", "role": "pm", "phone": "+14155550177", "properties": ["elm"]}
    # Paula manages the world's property: its default PM.
    assert paged_pm(world()) == PAULA.phone
    # Lee holds a shift covering every property now: he is paged, not the default PM.
    on_call = world(parties=[lee], on_call=[{"pm": "pm-lee", "start": "-1h", "end": "8h"}])
    assert paged_pm(on_call) == "+14155550177"
    # A shift that starts later does not cover the start.
    later = world(parties=[lee], on_call=[{"pm": "pm-lee", "start": "2h", "end": "8h"}])
    assert paged_pm(later) == PAULA.phone
    # No PM of the property and no shift: the account's fallback number.
    nobody = world(parties=[{**lee, "id": "pm-paula", "phone": "+14155550188"}])
    assert paged_pm(nobody) == ON_CALL_PM
    # ...which a world may name, or have none of.
    own = world(parties=[{**lee, "id": "pm-paula"}], fallback_phone="+14155550166")
    assert paged_pm(own) == "+14155550166"
    assert paged_pm(world(parties=[{**lee, "id": "pm-paula"}], fallback_phone="")) == ""
