"""Consent and language (#18, deliverable 6) on the embedded stack, through the signed webhooks.

Every count is read from a surface: what Twilio (the loopback) holds, the consent partition in
the conversations table, the decision log's outcomes. Wordings are this file's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from embedded import log, new_executions, pages, sms, to_phone

from maestro.adapters.dynamodb_consent import DynamoConsentStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.consent import ConsentChange
from maestro.domain.directory import Person, PersonRole
from maestro.domain.fixed_texts import SAFETY_ADVICE
from maestro.domain.models import Party, WorkOrder, WorkOrderStatus
from maestro.lanes.escalate import PAGED_TEXTS
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.twilio_loopback import Fault
from maestro_dev.local.world import MARIA, housed, seed, seed_directory
from maestro_dev.scripted import ScriptedModel

pytestmark = pytest.mark.integration

GAS = "there's a strong smell of gas coming from behind the stove"


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _unsent(stack: LocalStack) -> list[str]:
    """Every "not sent" the decision log's outcomes record, across all packages."""
    found: list[str] = []
    for execution in stack.executions():
        package_id = execution["name"]
        for outcome in log(stack).outcomes_for(package_id):
            found += outcome.unsent
    return found


def _tenant(stack: LocalStack, phone: str, **fields: object) -> Party:
    """A tenant of 4C, imported; their phone → party row."""
    person = Person(
        person_id=f"tenant-{phone[-4:]}",
        role=PersonRole.TENANT,
        phones=(phone,),
        name="Lucía",
        unit_id="4C",
        **fields,  # type: ignore[arg-type]
    )
    seed_directory(stack, housed(person))
    party = stack.parties.by_phone(phone)
    assert party is not None
    return party


def test_stop_then_a_gas_report_pages_the_pm_and_texts_them_nothing_until_start(
    stack: LocalStack,
) -> None:
    sms(stack, "Stop")
    new_executions(stack, stack.idle + 1)
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert state.opted_out
    assert state.detail == "STOP"
    assert to_phone(stack, MARIA.phone) == []  # Twilio answers STOP; maestro adds nothing

    sms(stack, GAS)
    stack.advance(60)  # the floor expedites it
    emergency = [p for p in pages(stack) if p.startswith("[EMERGENCY]")]
    assert len(emergency) == 1
    assert MARIA.phone in emergency[0]
    assert to_phone(stack, MARIA.phone) == []  # not even the safety advice
    refused = [u for u in _unsent(stack) if MARIA.phone in u]
    assert refused
    assert all("opted out" in u for u in refused)
    assert {e["status"] for e in stack.executions()} == {"SUCCEEDED"}

    sms(stack, "START")
    new_executions(stack, stack.idle + 1)
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert not state.opted_out
    assert to_phone(stack, MARIA.phone) == []  # Twilio confirms START at the carrier

    sms(stack, "the bathroom fan rattles every time it runs")
    new_executions(stack, stack.idle + 1)
    assert len(to_phone(stack, MARIA.phone)) >= 1  # texts resume


def test_yes_opts_back_in_only_while_opted_out(stack: LocalStack) -> None:
    """YES is an answer in maestro: from a sender who never opted out it changes nothing."""
    sms(stack, "yes")
    new_executions(stack, stack.idle + 1)
    assert stack.consent.state(MARIA.phone) is None
    sms(stack, "unsubscribe")
    new_executions(stack, stack.idle + 1)
    sms(stack, "YES!")
    new_executions(stack, stack.idle + 1)
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert not state.opted_out
    assert state.detail == "YES"


def test_a_21610_status_callback_marks_the_recipient_opted_out(stack: LocalStack) -> None:
    stack.twilio.undeliverable(MARIA.phone, 21610)  # opted out at the carrier
    sms(stack, "the dishwasher leaves a puddle of grey water after each cycle")
    new_executions(stack, stack.idle + 1)
    assert to_phone(stack, MARIA.phone)  # maestro did not know: it texted
    stack.advance(5)  # Twilio's status callbacks arrive
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert state.opted_out
    assert state.source == "twilio_21610"

    before = len(to_phone(stack, MARIA.phone))
    sms(stack, "also the kitchen light flickers")
    new_executions(stack, stack.idle + 1)
    assert len(to_phone(stack, MARIA.phone)) == before  # nothing more tried


def test_a_send_twilio_refuses_with_21610_is_an_opt_out_not_a_failure(stack: LocalStack) -> None:
    stack.twilio.fault(
        Fault(to=MARIA.phone, status=400, code=21610, message="Attempt to send to unsubscribed")
    )
    sms(stack, "the front door lock sticks in the morning")
    (execution,) = new_executions(stack, stack.idle + 1)
    assert execution["status"] == "SUCCEEDED"  # no fail-open: a refusal is no failure
    assert to_phone(stack, MARIA.phone) == []
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert state.opted_out
    assert state.source == "twilio_21610"
    assert any("21610" in u for u in _unsent(stack))


def test_no_sms_consent_in_the_directory_means_no_text_and_still_a_page(
    stack: LocalStack,
) -> None:
    tenant = _tenant(stack, "+14155557731", sms_consent=False)
    sms(stack, "smoke is pouring out of the dryer vent", sender=tenant.phone)
    stack.advance(60)
    assert to_phone(stack, tenant.phone) == []
    assert any(tenant.phone in p for p in pages(stack) if p.startswith("[EMERGENCY]"))
    assert any("no SMS consent" in u for u in _unsent(stack))


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("es", "huele a gas en la cocina"),
        (None, "hay un olor fuerte a gas en el pasillo del segundo piso"),
        (None, "se está escapando el gas de la estufa, qué hago"),
    ],
)
def test_a_spanish_gas_report_gets_spanish_advice_and_an_immediate_page(
    stack: LocalStack, language: str | None, text: str
) -> None:
    tenant = _tenant(stack, "+14155557742", language=language)
    sms(stack, text, sender=tenant.phone)
    stack.advance(60)  # immediate: the floor expedites it, no idle window
    (advice,) = to_phone(stack, tenant.phone)
    assert advice.startswith("Salga ahora.")
    assert advice.endswith(PAGED_TEXTS["es"])
    assert any(tenant.phone in p for p in pages(stack) if p.startswith("[EMERGENCY]"))


@pytest.mark.parametrize(
    ("text", "advice_kind"),
    [
        # CO by its device, "CO" in Spanish word order, from a tenant the directory gives no
        # language: the old floor read neither, so it waited the idle window with no page
        ("la alarma del CO no deja de pitar y a mi niño le duele la cabesa", "carbon_monoxide"),
        # gas as it is often typed: no accents, the silent h dropped, "k" for "qu"
        ("uele bien feo a gas en la cosina, ke ago", "gas"),
        # too terse for the language detector: the Spanish rule that read it says Spanish
        ("SALE HUMO NEGRO!!", "fire"),
    ],
)
def test_a_spanish_emergency_typed_as_texted_pages_at_once_with_its_own_advice(
    stack: LocalStack, text: str, advice_kind: str
) -> None:
    """#20: the floor reads Spanish as it is texted, and the advice is the hazard's, in
    Spanish (the message's language: the directory names none)."""
    tenant = _tenant(stack, "+14155557746")
    assert stack.idle > 60
    sms(stack, text, sender=tenant.phone)
    stack.advance(60)  # well inside the idle window: only the floor's expedite flushes it
    (advice,) = to_phone(stack, tenant.phone)
    assert advice == f"{SAFETY_ADVICE[advice_kind]['es']} {PAGED_TEXTS['es']}"  # type: ignore[index]
    emergency = [p for p in pages(stack) if p.startswith("[EMERGENCY]")]
    assert len(emergency) == 1
    assert tenant.phone in emergency[0]


def test_the_directory_language_wins_over_the_message(stack: LocalStack) -> None:
    tenant = _tenant(stack, "+14155557753", language="es")
    sms(stack, "there are flames coming out of the oven", sender=tenant.phone)
    stack.advance(60)
    (advice,) = to_phone(stack, tenant.phone)
    assert advice.startswith("Salga ahora y llame al 911.")


def test_consent_writes_keep_the_latest_change(stack: LocalStack) -> None:
    """A late redelivery of an old STOP does not undo a later START; a YES opts in only an
    opted-out phone."""
    store = DynamoConsentStore(stack.ddb, stack.tables["conversations"])
    phone, now = "+14155557764", stack.clock.now()
    start = ConsentChange(opted_out=False, source="keyword", detail="START")
    stop = ConsentChange(opted_out=True, source="keyword", detail="STOP")
    yes = ConsentChange(opted_out=False, source="keyword", detail="YES", only_if_opted_out=True)
    assert not store.record(phone, yes, now)  # never opted out: nothing to opt back in
    assert store.state(phone) is None
    assert store.record(phone, start, now)
    assert not store.record(phone, stop, now - timedelta(seconds=30))  # older: ignored
    state = store.state(phone)
    assert state is not None
    assert not state.opted_out
    assert store.record(phone, stop, now + timedelta(seconds=1))
    assert store.record(phone, stop, now + timedelta(seconds=1))  # a redelivery: the same
    assert store.record(phone, yes, now + timedelta(seconds=2))
    state = store.state(phone)
    assert state is not None
    assert not state.opted_out
    assert state.detail == "YES"


def test_when_the_escalation_fails_fail_open_advises_in_the_directory_language(
    stack: LocalStack,
) -> None:
    """The early escalation fails for good: fail-open still sends the advice, once, in the
    language the directory names (the report itself is in English)."""
    tenant = _tenant(stack, "+14155557775", language="es")

    def broken_escalation(step: str, event: dict[str, object], call: Callable[[], Any]) -> Any:
        if step == "escalate":
            raise RuntimeError("the escalation step is down")
        return call()

    stack.fault = broken_escalation
    sms(stack, "I can smell gas all over the hallway", sender=tenant.phone)
    stack.advance(60)
    (advice,) = to_phone(stack, tenant.phone)
    assert advice.startswith("Salga ahora.")
    assert advice.endswith("Hemos avisado al administrador de guardia.")
    assert any(p.startswith("[EMERGENCY]") for p in pages(stack))


def test_a_bare_keyword_costs_no_model_call() -> None:
    """STOP and START are Twilio's to answer: no probe, no pre-check call, no brain sample. A
    sentence from the same sender does call the model (the count is not vacuous)."""
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    model = ScriptedModel(
        responder=lambda r: triage if r.purpose in ("probe", "precheck") else None
    )
    with LocalStack(model=model) as local:
        seed(local)
        for word in ("stop", "UNSTOP"):
            sms(local, word)
            new_executions(local, local.idle + 1)
        assert model.calls == []
        sms(local, "the hallway bulb outside my door is out")
        new_executions(local, local.idle + 1)
        assert {c.purpose for c in model.calls} >= {"probe"}


def test_an_opt_out_outlives_the_erasure_of_whoever_sent_it(stack: LocalStack) -> None:
    """An erase removes the person and their words, not the duty not to text their number."""
    from maestro.adapters.dynamodb_erase import DynamoEraser
    from maestro_dev.directory.apply import apply_directory
    from maestro_dev.local.world import WORLD

    sms(stack, "quit")
    new_executions(stack, stack.idle + 1)
    report = DynamoEraser(stack.ddb, stack.tables).erase(MARIA.phone)
    assert report is not None
    assert stack.parties.by_phone(MARIA.phone) is None  # erased
    state = stack.consent.state(MARIA.phone)
    assert state is not None
    assert state.opted_out  # and still not to be texted

    # Re-imported later (the PM's next export still lists her): still not texted.
    apply_directory(WORLD.directory(), stack.directory, stack.parties)
    assert stack.parties.by_phone(MARIA.phone) is not None
    sms(stack, "the hallway light by my door flickers all night")
    new_executions(stack, stack.idle + 1)
    assert to_phone(stack, MARIA.phone) == []


def test_a_spanish_tenant_cancels_with_si_after_a_spanish_hold_prompt(stack: LocalStack) -> None:
    """A tenant the directory says reads Spanish mixes an English verb with Spanish words
    ("cancel WO-377, ya no hace falta"); the prompt, the "sí" and the confirmation are Spanish.
    The offline brain reads Spanish commands too ("cancele", "anular", "reprogramar":
    ``maestro.domain.commands``); the English verb here is what bilingual tenants also text."""
    tenant = _tenant(stack, "+14155557764", language="es")
    now = stack.clock.now()
    leak = WorkOrder(
        wo_id="WO-377",
        tenant_id=tenant.party_id,
        unit="4C",
        summary="fuga en la tubería del baño",
        category="plumbing",
        created_at=now - timedelta(hours=5),
        updated_at=now - timedelta(hours=2),
    )
    works = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    works.create(leak)

    sms(stack, "cancel WO-377, ya no hace falta", sender=tenant.phone)
    new_executions(stack, stack.idle + 1)
    (prompt,) = to_phone(stack, tenant.phone)
    assert prompt.startswith("Responda SÍ o YES para cancelar WO-377 (fuga en la tubería del baño")
    assert works.get("WO-377") == leak  # held, not done

    sms(stack, "sí", sender=tenant.phone)
    new_executions(stack, stack.idle + 1)
    cancelled = works.get("WO-377")
    assert cancelled is not None
    assert cancelled.status is WorkOrderStatus.CANCELLED
    assert to_phone(stack, tenant.phone)[-1] == (
        "Listo: he cancelado WO-377 (fuga en la tubería del baño, unidad 4C)."
    )
