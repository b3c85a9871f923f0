"""Every fixed reply is listed in one module (``maestro.domain.fixed_texts``), in English and
Spanish, and every text a lane sends comes from it or from the (checked) model reply (#20).

The module's templates are compiled to patterns (a ``{field}`` matches any text); a text a lane
sends must be one template, or several joined by spaces (the safety advice and what follows
it; a question and its numbered options), else it was written somewhere else. The lanes are
driven through a battery of cases that reaches each of their sends, in both languages, with
in-memory fakes; a reply the model wrote (``reply_hint``) is the one thing allowed through.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from typing import Any

import pytest
from builders import MARIA, T0, act, package, wo_context

from maestro.domain import fixed_texts
from maestro.domain.actions import Action, AnswerWait, AnswerWaitParams
from maestro.domain.digest import DigestLine, digest_page
from maestro.domain.directory import Property, Trade, Vendor
from maestro.domain.dispatch import DispatchRun, Judgment, Offer, RankedVendor
from maestro.domain.dispatch_texts import (
    approval_text,
    assigned_vendor_text,
    lapsed_text,
    no_vendor_page,
    offer_text,
    tenant_coming_text,
    withdrawn_text,
)
from maestro.domain.dispose import QueuedAction
from maestro.domain.fixed_texts import (
    QUESTION_LEAD,
    WHICH_AGAIN,
    WHICH_AGAIN_ONE,
    every_text,
    say,
)
from maestro.domain.gather import question
from maestro.domain.models import (
    OpenContext,
    Party,
    PartyRole,
    Urgency,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.lanes import execute
from maestro.lanes.context import LaneContext
from maestro.pipeline.contract import StepError
from maestro.pipeline.fail_open import short_failure_reason
from maestro_dev.fakes import (
    InMemoryDailyCaps,
    InMemoryDigest,
    InMemoryPageThrottle,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

# Texts only a PM, an operator or a page reads: English only, on purpose (see the module).
ENGLISH_ONLY = {
    "PM_STATUS_LINE",
    "PM_STATUS_OPEN",
    "PM_NO_VENDOR",
    "PM_VENDOR",
    "PM_UNIT",
    "NOT_FOR_PM",
    "NOT_FOR_PM_ONE",
    "NOT_FOR_PM_MANY",
    "FALLBACK_PAGE",
    "TOLD_FOLLOW_UP",
    "FALL_BACK_COUNT",
    "FALL_BACK_WHY",
    "EMERGENCY_PAGE",
    "BREAK_IN_PAGE",
    "FAIL_OPEN_PAGE",
    "PM_NOTED",
    "PM_VISIT_CONFIRMED",
    "PM_TOLD",
    "PM_NOBODY_TOLD",
    "PM_PASSED_TO_VENDOR",
    "PM_NO_VENDOR_TOLD",
    "PM_NO_OPEN",
    "PM_OPEN",
    "PM_MORE",
    "PM_HELP_TEXT",
    "RESUME_NOTE",
    "WITHDRAWN_SAID",
    "DIGEST_HEAD",
    "DIGEST_NOTHING",
    "DIGEST_COUNTS_JOIN",
    "DIGEST_UNKNOWN_ONE",
    "DIGEST_UNKNOWN_MANY",
    "DIGEST_HELD_ONE",
    "DIGEST_HELD_MANY",
    "DIGEST_LINE",
    "DIGEST_TEXTS",
    "DIGEST_SAID",
    "DIGEST_WHY",
    "DIGEST_MORE",
    "NO_VENDOR_PAGE",
    "NO_VENDOR_NTE",
    "NO_VENDOR_PROPERTY",
    "NO_VENDOR_UNIT",
    "NO_VENDOR_ASKED",
    "NO_VENDOR_ANSWERED",
    "NO_VENDOR_OUTCOME",
    "NO_VENDOR_TRAIL",
    "FAIL_OPEN_WHY",
    "FAIL_OPEN_WHY_OTHER",
    "FAIL_OPEN_UNKNOWN_SENDER",
    "PAGE_WHO",
    "PAGE_WHO_UNKNOWN",
    "PAGE_FROM",
    "PAGE_FROM_UNKNOWN",
    "PAGE_CAP_REACHED",
    "PAGE_RE",
    "PAGE_HAZARD",
    "BREAK_IN_NO_REASON",
    "BREAK_IN_NO_TRAIL",
}


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# --- the module ----------------------------------------------------------------------------------


def test_every_text_has_english_and_every_text_a_tenant_reads_has_spanish() -> None:
    texts = every_text()
    assert len(texts) > 50
    missing = [
        name
        for name, text in texts.items()
        if "es" not in text and name.split(".")[0] not in ENGLISH_ONLY
    ]
    assert missing == []
    for name, text in texts.items():
        # The same fields in every language: a translation that drops one drops data.
        assert {lang: _fields(t) for lang, t in text.items()} == dict.fromkeys(
            text, _fields(text["en"])
        ), name


def test_the_public_names_other_parts_import_are_kept() -> None:
    for name in ("SAFETY_ADVICE", "PAGED", "ALERTED", "HELD_BACK", "UNREACHED", "BROUGHT_IN"):
        assert hasattr(fixed_texts, name)
    assert set(fixed_texts.SAFETY_ADVICE) == set(fixed_texts.AdviceKind.__args__)  # type: ignore[attr-defined]


# --- what a sent body may be ----------------------------------------------------------------------


# What a field may hold, by its name: an id is an id, a count is digits; anything else is text.
_FIELD = {
    "wo_id": r"WO-[A-Za-z0-9-]+",
    "only": r"WO-[A-Za-z0-9-]+",
    "number": r"\d+",
    "stars": r"\d+",
    "total": r"\d+",
    "more": r"\d+",
    "failed": r"\d+",
    "k": r"\d+",
    "time": r"\d\d:\d\d",
    "start": r"\d\d:\d\d",
    "end": r"\d\d:\d\d",
    "day": r"\d\d [A-Z][a-z]{2}",
    "nte": r"\d+",
    "phone": r"\+\d+",
    "role": "(?:" + "|".join(re.escape(role.value) for role in PartyRole) + ")",
}


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each template of each text as a pattern: its words exactly, each field what it holds.
    A template with no words of its own and no field of a known shape ("{numbers}") is a piece
    of another text, never a text alone: left out."""
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for name, text in every_text().items():
        for language, template in text.items():
            parts = []
            shaped = False
            words = ""
            for literal, field_name, _, _ in string.Formatter().parse(template):
                parts.append(re.escape(literal))
                words += literal
                if field_name is not None:
                    shaped = shaped or field_name in _FIELD
                    parts.append(_FIELD.get(field_name, ".*?"))
            if not shaped and not any(ch.isalpha() for ch in words):
                continue
            compiled.append((f"{name}.{language}", re.compile("".join(parts), re.DOTALL)))
    return tuple(compiled)


def composed_of_fixed_texts(body: str, only: str | tuple[str, ...] = "") -> bool:
    """``body`` is one fixed text or several joined by a space (or an option separator);
    with ``only``, texts whose name starts with it (a page composed of its own texts alone:
    "{place}, unit {unit}" would otherwise pass most of any page)."""
    patterns = [p for name, p in _patterns() if name.startswith(only)]
    ends = {len(body)}
    cuts = sorted({m.start() for m in re.finditer(r" |; ", body)} | ends)
    reachable = {0}
    for start in sorted({0} | {c + 1 for c in cuts} | {c + 2 for c in cuts}):
        if start not in reachable:
            continue
        for end in cuts:
            if end <= start:
                continue
            piece = body[start:end]
            if any(p.fullmatch(piece) for p in patterns):
                if end == len(body):
                    return True
                reachable.add(end + 1)
                if body.startswith("; ", end):
                    reachable.add(end + 2)
    return False


@pytest.mark.parametrize(
    "planted",
    [
        "Thanks for reaching out! We'll sort it soon.",
        "Your request is being processed.",
        "Hola, ya casi está.",
    ],
)
def test_a_text_written_anywhere_else_is_caught(planted: str) -> None:
    assert not composed_of_fixed_texts(planted)


def test_a_composed_text_is_recognised() -> None:
    advice = say(fixed_texts.SAFETY_ADVICE["gas"], "es") + " " + say(fixed_texts.PAGED, "es")
    assert composed_of_fixed_texts(advice)
    options = say(QUESTION_LEAD, "en") + " 1) WO-1: the sink; 2) something new"
    assert composed_of_fixed_texts(options)


# --- the lanes' sends -----------------------------------------------------------------------------

VENDOR = Party(party_id="vendor-joe", role=PartyRole.VENDOR, phone="+14155550177", name="Joe")
PM = Party(party_id="pm-pat", role=PartyRole.PM, phone="+14155550188", name="Pat")
PM_PHONE = "+14155550199"
MARIA_3B = MARIA.model_copy(update={"unit": "3B"})
ROSA = Party(
    party_id="tenant-rosa", role=PartyRole.TENANT, phone="+14155550123", unit="5C", language="es"
)


def _wo(wo_id: str, summary: str, tenant: str, **changes: Any) -> WorkOrder:
    return WorkOrder.model_validate(
        {
            "wo_id": wo_id,
            "tenant_id": tenant,
            "vendor_id": VENDOR.party_id,
            "unit": "3B",
            "summary": summary,
            "created_at": T0 - timedelta(days=2),
            "updated_at": T0 - timedelta(hours=2),
            **changes,
        }
    )


@dataclass
class _World:
    tenant: Party
    messenger: RecordingMessenger = field(default_factory=RecordingMessenger)
    pending: InMemoryPendingStore = field(default_factory=InMemoryPendingStore)
    model_replies: list[str] = field(default_factory=list)
    runs: int = 0
    caps: InMemoryDailyCaps | None = None  # None: fresh caps for each run, none ever reached
    digest: InMemoryDigest = field(default_factory=InMemoryDigest)

    def __post_init__(self) -> None:
        tenant = self.tenant.party_id
        self.work_orders = InMemoryWorkOrderStore(
            [
                _wo("WO-204", "leak under the kitchen sink", tenant),
                _wo("WO-205", "bedroom window latch broken", tenant),
                _wo(
                    "WO-198",
                    "dripping bathroom tap",
                    tenant,
                    status=WorkOrderStatus.COMPLETED,
                    rating_requested=True,
                ),
            ]
        )

    def run(
        self,
        action: Action,
        sender: Party,
        text: str,
        *,
        contexts: tuple[OpenContext, ...] = (),
        package_lanes: tuple[str, ...] = (),
        **extras: Any,
    ) -> str:
        """Run ``action``'s lane as ``sender`` said ``text``; the action's key."""
        self.runs += 1
        pkg = package(text, phone=sender.phone, flush=self.runs)
        key = f"{pkg.package_id}#0"
        queued = QueuedAction(
            index=0,
            idempotency_key=key,
            action=action,
            decision_id="d",
            package_lanes=package_lanes or (action.lane,),
            **extras,
        )
        ctx = LaneContext(
            package=pkg,
            sender=sender,
            open_contexts=contexts,
            action_index=0,
            idempotency_key=key,
            work_orders=self.work_orders,
            pending=self.pending,
            parties=InMemoryPartyDirectory([MARIA_3B, ROSA, VENDOR, PM]),
            messenger=self.messenger,
            on_call_pm_phone=PM_PHONE,
            now=T0 + timedelta(minutes=self.runs),
            timeline=InMemoryTimeline(),
            throttle=InMemoryPageThrottle(),
            caps=self.caps or InMemoryDailyCaps(),
            digest=self.digest,
            queued=queued,
        )
        execute(action, ctx)
        return key

    def bodies(self) -> list[str]:
        return [m.body for m in self.messenger.sent]


CONTEXTS = (
    wo_context("WO-204", "leak under the kitchen sink, unit 3B", awaiting="availability"),
    wo_context("WO-198", "dripping bathroom tap, fixed", rating_requested=True),
)
WINDOW: dict[str, Any] = {
    "window_start": T0 + timedelta(days=1),
    "window_end": T0 + timedelta(days=1, hours=2),
}
MODEL_REPLY = "Sure, the plumber said Tuesday works."


def _battery(world: _World, tenant: Party) -> None:
    """Each lane, down each of its paths that sends, for ``tenant`` (and the vendor, the PM)."""
    lang = tenant.language or "en"
    world.run(act("create_wo", summary="fridge is not cooling"), tenant, "fridge")
    world.run(act("relay_to_open_wo", "WO-204", note="drips at night"), tenant, "it drips")
    world.run(act("relay_to_open_wo", "WO-204", note="bring a wrench"), VENDOR, "wrench")
    world.run(act("relay_to_open_wo", "WO-204", note="priority"), PM, "priority")
    world.run(act("schedule_visit", "WO-204", availability="after 2pm"), tenant, "after 2")
    world.run(act("schedule_visit", "WO-204", availability="friday 9am"), VENDOR, "fri")
    world.run(act("schedule_visit", "WO-204", availability="monday"), PM, "monday")
    world.run(
        act("schedule_visit", "WO-204", mode="confirm", availability="tomorrow", **WINDOW),
        tenant,
        "tomorrow",
    )
    world.run(
        act("schedule_visit", "WO-204", mode="confirm", availability="tomorrow", **WINDOW),
        PM,
        "tomorrow",
    )
    world.run(act("record_rating", "WO-198", stars=4), tenant, "4")
    world.run(act("relay_to_vendor", "WO-204", message="gate code 1234"), tenant, "code")
    for words in ("thanks a lot", "alright, bye for now", "hm, whatever"):
        world.run(act("continue_with_assistant"), tenant, words)
    world.run(
        act("continue_with_assistant"),
        tenant,
        "and the fridge",
        package_lanes=("create_wo", "continue_with_assistant"),
    )
    world.run(act("continue_with_assistant", "WO-204"), tenant, "news?", contexts=CONTEXTS)
    world.run(act("continue_with_assistant", "WO-204"), PM, "status of WO-204")
    world.run(act("continue_with_assistant", reply_hint=MODEL_REPLY), tenant, "when?")
    world.model_replies.append(MODEL_REPLY)
    world.run(
        act("clarify", question=say(QUESTION_LEAD, lang), candidate_ids=["WO-204", "new"]),
        tenant,
        "it's leaking",
        contexts=CONTEXTS,
    )
    world.run(
        act("clarify", question=say(WHICH_AGAIN, lang), candidate_ids=["WO-204", "WO-198"]),
        tenant,
        "the one",
        contexts=CONTEXTS,
    )
    world.run(
        act("clarify", question=say(WHICH_AGAIN_ONE, lang), candidate_ids=["WO-204"]),
        tenant,
        "hmm",
        contexts=CONTEXTS,
    )
    world.run(act("escalate", reason="emergency", hazard="gas smell"), tenant, "gas smell")
    world.run(act("escalate", reason="fallback", severity="info"), tenant, "the vent flaps")
    world.run(act("escalate", reason="guard_tripped", severity="info"), tenant, "again")
    world.run(
        AnswerWait(
            target_wo_id="WO-204",
            params=AnswerWaitParams(kind="offer", answer="accept", offer_index=1),
        ),
        VENDOR,
        "1",
    )
    # manage_existing: list, hold (one, several, by an unverified call), release, no match.
    world.run(act("manage_existing", operation="list"), tenant, "what's open")
    world.run(act("manage_existing", operation="list"), PM, "open")
    world.run(act("manage_existing", operation="cancel", wo_ids=["WO-999"]), tenant, "cancel")
    world.run(
        act("manage_existing", operation="reschedule", wo_ids=["WO-204"], request="monday"),
        tenant,
        "move it",
        options=("WO-204", "WO-205"),
    )
    world.run(
        act("manage_existing", operation="cancel", wo_ids=["WO-205"]),
        tenant,
        "cancel",
        by_unverified_call=True,
    )
    cancel = act("manage_existing", operation="cancel", wo_ids=["WO-205"])
    held = world.run(cancel, tenant, "cancel the window one")
    world.run(cancel, tenant, "yes", release=True, pending_id=held)
    reschedule = act("manage_existing", operation="reschedule", wo_ids=["WO-204"], request="fri")
    held = world.run(reschedule, tenant, "friday instead")
    world.run(reschedule, tenant, "yes", release=True, pending_id=held)
    relay = act("relay_to_open_wo", "WO-204", note="water everywhere")
    world.run(relay, tenant, "water everywhere", held=(relay,), by_unverified_call=True)


@pytest.mark.parametrize("tenant", [MARIA_3B, ROSA], ids=["english", "spanish"])
def test_every_text_a_lane_sends_is_a_fixed_text_or_the_model_reply(tenant: Party) -> None:
    world = _World(tenant)
    _battery(world, tenant)
    sent = world.bodies()
    assert len(sent) >= 25
    foreign = [
        body
        for body in sent
        if body not in world.model_replies and not composed_of_fixed_texts(body)
    ]
    assert foreign == []
    if tenant.language == "es":
        to_tenant = [m.body for m in world.messenger.to(tenant.phone)]
        assert "¡De nada!" in to_tenant  # and the rest in Spanish: each from the module


# --- the dispatch run's texts (sent by its steps, composed by dispatch_texts) ---------------------


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_dispatch_text_is_composed_of_fixed_texts(language: str) -> None:
    place = Property(property_id="elm", name="Elm Court", address="1 Elm St", timezone="UTC")
    vendor = Vendor(
        vendor_id="v-ida", name="Ida Fixes", phone="+17205550100", trades=(Trade.GENERAL,)
    )
    wo = _wo("WO-4a1", "hallway light flickers", MARIA.party_id, property_id="elm")
    judged = Judgment(
        priority=Urgency.URGENT,
        trade=Trade.ELECTRICAL,
        nte_usd=250,
        approval_needed=True,
        after_hours=False,
        vendors=(RankedVendor(vendor_id="v-ida", name="Ida Fixes", rank=1),),
        offer_timeout_seconds=5400,
    )
    texts = [
        offer_text(wo, vendor, place, "3B", judged, 1, language),
        offer_text(
            wo,
            vendor,
            None,
            None,
            judged.model_copy(update={"offer_timeout_seconds": 3600}),
            1,
            language,
        ),
        assigned_vendor_text(wo, place, "3B", ("gate code 42",), language),
        assigned_vendor_text(wo, place, None, (), language),
        tenant_coming_text(wo, vendor, language),
        approval_text(wo, judged, language),
        withdrawn_text(wo.model_copy(update={"status": WorkOrderStatus.CANCELLED}), "", language),
        withdrawn_text(wo, "the tenant fixed it", language),
        withdrawn_text(wo, "", language),
        lapsed_text(wo, language),
    ]
    assert [t for t in texts if not composed_of_fixed_texts(t)] == []


def test_every_no_vendor_page_is_composed_of_fixed_texts() -> None:
    wo = _wo("WO-4a1", "hallway light flickers", MARIA.party_id, property_id="elm")
    judged = Judgment(
        priority=Urgency.URGENT,
        trade=Trade.ELECTRICAL,
        nte_usd=250,
        approval_needed=True,
        after_hours=True,
        vendors=(RankedVendor(vendor_id="v-ida", name="Ida Fixes", rank=1),),
        offer_timeout_seconds=5400,
    )
    base = DispatchRun(wo_id=wo.wo_id, started_at=T0, updated_at=T0, judgment=judged)
    offers = tuple(
        Offer(index=n, vendor_id=vendor, sent_at=T0, outcome=outcome)  # type: ignore[arg-type]
        for n, (vendor, outcome) in enumerate(
            [("v-ida", "declined"), ("v-zed", "timed_out"), ("v-ida", "withdrawn")], 1
        )
    )
    unstaffed = judged.model_copy(update={"vendors": ()})
    runs = [
        base.model_copy(update={"approval": "refused"}),
        base.model_copy(update={"approval": "timed_out"}),
        base.model_copy(update={"judgment": unstaffed}),
        base.model_copy(update={"judgment": unstaffed.model_copy(update={"after_hours": False})}),
        base.model_copy(update={"offers": offers}),
        base,
        base.model_copy(update={"judgment": None}),
    ]
    trail = ["WO-4a1 opened by text", "offered to Ida: declined"]
    pages = [no_vendor_page(wo, run, trail) for run in runs]
    pages += [no_vendor_page(wo.model_copy(update={"unit": None}), runs[4], [])]
    assert [p for p in pages if not composed_of_fixed_texts(p, only="NO_VENDOR_")] == []


# --- the hourly digest page (composed by domain/digest.py, sent by pipeline/digest.py) ------------


def _digest_line(kind: Any, minute: int, **changes: Any) -> DigestLine:
    at = T0.replace(minute=minute)
    return DigestLine.model_validate(
        {
            "subject": f"{kind}#{minute}",
            "kind": kind,
            "who": f"+1415555{minute:04d}",
            "first_at": at,
            "last_at": at,
            "packages": 1,
            "messages": 1,
            **changes,
        }
    )


def test_every_line_of_the_digest_page_is_composed_of_fixed_texts() -> None:
    hour = T0.replace(minute=0, second=0, microsecond=0)
    lines = [
        _digest_line("unknown_number", 5, excerpt="is the laundry open on sundays", messages=3),
        _digest_line("unknown_number", 6),
        _digest_line("emergency", 7, who="Maria (tenant, unit 3B)", why="daily page cap reached"),
        _digest_line("break_in", 8, why="no progress", excerpt="x" * 200),
        _digest_line("fallback", 9, excerpt="the vent flaps", why="the model was down"),
        _digest_line("emergency", 10, who="y" * 200, messages=2),
    ]
    pages = [
        digest_page(hour, lines, max_lines=4),
        digest_page(hour, lines, max_lines=10),
        digest_page(hour, lines[:1], max_lines=10),
        digest_page(hour, lines[2:3], max_lines=10),
        digest_page(hour, [], max_lines=10),
    ]
    sent = [row for page in pages for row in page.split("\n")]
    assert len(sent) >= 17
    assert [row for row in sent if not composed_of_fixed_texts(row, only="DIGEST_")] == []


# --- what dispatch asks the tenant before judging (composed by domain/gather.py) ------------------


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_gather_question_is_composed_of_fixed_texts(language: str) -> None:
    wo = _wo("WO-4a1", "hallway light flickers", MARIA.party_id)
    long_wo = _wo("WO-4a2", "the hallway light flickers " * 20, MARIA.party_id)
    asked: list[tuple[Any, ...]] = [
        ("trade",),
        ("photo",),
        ("location", "access", "pets"),
        ("trade", "location", "access", "pets", "availability", "photo"),
    ]
    questions = [question(w, items, language) for w in (wo, long_wo) for items in asked]
    said = re.compile(r"(?:with|con): (.*)\.", re.DOTALL)
    for text in questions:
        assert composed_of_fixed_texts(text, only="GATHER_QUESTION"), text
        # What it asks for (a field of the question): the module's items, numbered when several.
        listed = said.search(text)
        assert listed is not None, text
        items = [re.sub(r"^\d+\) ", "", item) for item in listed.group(1).split("; ")]
        assert all(composed_of_fixed_texts(item, only="GATHER_ASK") for item in items), text


# --- fail-open's page (pipeline/fail_open.py): its template, and why the package failed ---------


def test_every_fail_open_reason_is_a_fixed_text() -> None:
    kinds = [*fixed_texts.FAIL_OPEN_WHY, "KeyError", "Lambda.Unknown", "States.TaskFailed"]
    reasons = [short_failure_reason(StepError(Error=kind, Cause="boom")) for kind in kinds]
    assert [r for r in reasons if not composed_of_fixed_texts(r, only="FAIL_OPEN_WHY")] == []


def test_a_page_past_the_daily_cap_becomes_a_digest_line_of_fixed_texts() -> None:
    """Whom a digest line is about and why it is no page (lanes/escalate.py) are the module's
    texts too: the digest page's fields, checked here where they are made."""
    world = _World(MARIA_3B, caps=InMemoryDailyCaps(pages=0))
    world.run(act("escalate", reason="guard_tripped", severity="info"), MARIA_3B, "again")
    world.run(act("escalate", reason="fallback", severity="info"), PM, "the vent flaps")
    world.run(act("escalate", reason="fallback", severity="info"), VENDOR, "hmm ok")
    hours = world.digest.due(T0 + timedelta(hours=2), 3)
    lines = [line for hour in hours for line in world.digest.close(hour, T0 + timedelta(hours=2))]
    assert len(lines) == 3
    assert [x.who for x in lines if not composed_of_fixed_texts(x.who, only="PAGE_WHO")] == []
    # Why a break-in is no page is the lane's to say (a fallback's why is the brain's reading).
    breaks = [x.why for x in lines if x.kind == "break_in"]
    assert breaks != []
    assert [why for why in breaks if not composed_of_fixed_texts(why, only="PAGE_")] == []
    page = digest_page(hours[0], lines, max_lines=10)
    assert [
        row for row in page.split("\n") if not composed_of_fixed_texts(row, only="DIGEST_")
    ] == []
