"""Consent keywords, the messenger's consent guard, and the language a person reads (#18).

Pure rules and in-memory fakes; the same behaviours through the webhooks and the pipeline are in
tests/integration/test_consent_and_language.py. Every wording here is this file's own.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from builders import MARIA, T0, act, consensus, package, wo_context

from maestro.adapters.messaging import ConsentGuard
from maestro.domain.actions import Clarify, ContinueWithAssistant
from maestro.domain.consent import (
    ConsentChange,
    ConsentState,
    consent_change,
    consent_keyword,
    is_bare_consent_keyword,
    only_consent_keywords,
)
from maestro.domain.digest import DigestEntry, hour_of
from maestro.domain.dispose import QueuedAction, dispose
from maestro.domain.fixed_texts import RECORDED
from maestro.domain.language import detect_language, in_language, language_for
from maestro.domain.models import (
    Channel,
    Party,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.pending import PendingSnapshot, resolve_pending
from maestro.domain.safety import safety_floor
from maestro.lanes import execute
from maestro.lanes.context import LaneContext
from maestro.lanes.escalate import PAGED_TEXTS, safety_instructions
from maestro.pipeline.digest import DigestDeps, DigestSender
from maestro.ports.messaging import NotTextableError, SendFailedError, SentMessage
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDigest,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

PM = "+14155550199"
ANA = Party(party_id="tenant-ana", role=PartyRole.TENANT, phone="+14155550321", language="es")
QUIET = Party(party_id="tenant-q", role=PartyRole.TENANT, phone="+14155550322", sms_consent=False)


# --- the keywords ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "word"),
    [
        ("STOP", "STOP"),
        ("  stop. ", "STOP"),
        ("Unsubscribe!", "UNSUBSCRIBE"),
        ("optout", "OPTOUT"),
        ("Revoke", "REVOKE"),
        ("end", "END"),
        ("start", "START"),
        ("UNSTOP", "UNSTOP"),
        ("yes!!", "YES"),
    ],
)
def test_a_keyword_alone_is_read_in_any_case_and_punctuation(body: str, word: str) -> None:
    assert consent_keyword(body) == word


@pytest.mark.parametrize(
    "body",
    [
        "please stop texting me at night",  # a request in words, not Twilio's keyword
        "the drip won't stop",
        "stopped",
        "cancel WO-204",
        "start the repair monday",
        "yes, 2pm works",
        "opt out",
        "",
    ],
)
def test_a_keyword_inside_a_sentence_is_no_keyword(body: str) -> None:
    assert consent_keyword(body) is None
    assert consent_change(body) is None


def test_the_changes_each_keyword_makes() -> None:
    assert consent_change("QUIT") == ConsentChange(opted_out=True, source="keyword", detail="QUIT")
    start = consent_change("Start")
    assert start is not None
    assert not start.opted_out
    assert not start.only_if_opted_out
    yes = consent_change("Yes")
    assert yes is not None
    assert not yes.opted_out
    assert yes.only_if_opted_out


def test_yes_is_never_a_bare_keyword_it_is_an_answer() -> None:
    assert is_bare_consent_keyword("STOP")
    assert is_bare_consent_keyword("unstop")
    assert not is_bare_consent_keyword("YES")
    assert only_consent_keywords(package("stop", "STOPALL"))
    assert not only_consent_keywords(package("yes"))
    assert not only_consent_keywords(package("STOP", "also there's smoke in the stairwell"))
    assert not only_consent_keywords(package("stop", channel=Channel.IN_APP))


# --- the guard ------------------------------------------------------------------------------------


class InMemoryConsent:
    def __init__(self) -> None:
        self.states: dict[str, ConsentState] = {}

    def record(self, phone: str, change: ConsentChange, at: datetime) -> bool:
        held = self.states.get(phone)
        if change.only_if_opted_out and not (held and held.opted_out):
            return False
        self.states[phone] = ConsentState(
            phone=phone,
            opted_out=change.opted_out,
            at=at,
            source=change.source,
            detail=change.detail,
        )
        return True

    def state(self, phone: str) -> ConsentState | None:
        return self.states.get(phone)


class RefusingMessenger:
    def __init__(self, code: str | None) -> None:
        self.code = code

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        raise SendFailedError(
            idempotency_key, "Twilio answered 400", transient=False, attempts=1, code=self.code
        )


def _guard(inner: object | None = None) -> tuple[ConsentGuard, InMemoryConsent]:
    consent = InMemoryConsent()
    guard = ConsentGuard(
        inner or RecordingMessenger(),  # type: ignore[arg-type]
        consent,
        FixedClock(T0),
        InMemoryPartyDirectory([MARIA, ANA, QUIET]),
    )
    return guard, consent


def test_the_guard_refuses_an_opted_out_phone_and_sends_once_they_opt_back_in() -> None:
    guard, consent = _guard()
    consent.record(ANA.phone, ConsentChange(opted_out=True, source="keyword", detail="END"), T0)
    with pytest.raises(NotTextableError, match="opted out"):
        guard.send(ANA.phone, "hola", idempotency_key="k1")
    assert isinstance(guard.inner, RecordingMessenger)
    assert guard.inner.sent == []
    consent.record(ANA.phone, ConsentChange(opted_out=False, source="keyword", detail="START"), T0)
    assert guard.send(ANA.phone, "hola", idempotency_key="k2").to == ANA.phone


def test_the_guard_refuses_a_phone_the_directory_records_no_consent_for() -> None:
    guard, _ = _guard()
    with pytest.raises(NotTextableError, match="no SMS consent"):
        guard.send(QUIET.phone, "your visit is booked", idempotency_key="k1")
    assert guard.send(MARIA.phone, "your visit is booked", idempotency_key="k2")


def test_twilio_refusing_with_21610_is_recorded_as_an_opt_out() -> None:
    guard, consent = _guard(RefusingMessenger("21610"))
    with pytest.raises(NotTextableError, match="21610"):
        guard.send(MARIA.phone, "the plumber is on the way", idempotency_key="k1")
    state = consent.state(MARIA.phone)
    assert state is not None
    assert state.opted_out
    assert state.source == "twilio_21610"


def test_any_other_refusal_stays_a_failed_send() -> None:
    guard, consent = _guard(RefusingMessenger("21211"))
    with pytest.raises(SendFailedError) as raised:
        guard.send(MARIA.phone, "the plumber is on the way", idempotency_key="k1")
    assert not isinstance(raised.value, NotTextableError)
    assert consent.state(MARIA.phone) is None


def _ctx(guard: ConsentGuard, text: str, sender: Party, flush: int = 1) -> LaneContext:
    pkg = package(text, phone=sender.phone, flush=flush)
    return LaneContext(
        package=pkg,
        sender=sender,
        open_contexts=(),
        action_index=0,
        idempotency_key=f"{pkg.package_id}#0",
        work_orders=InMemoryWorkOrderStore([]),
        pending=InMemoryPendingStore(),
        parties=InMemoryPartyDirectory([MARIA, ANA, QUIET]),
        messenger=guard,
        on_call_pm_phone=PM,
        now=T0,
        timeline=InMemoryTimeline(),
    )


def test_an_opted_out_senders_emergency_pages_the_pm_and_claims_no_advice_sent() -> None:
    guard, consent = _guard()
    consent.record(MARIA.phone, ConsentChange(opted_out=True, source="keyword", detail="STOP"), T0)
    ctx = _ctx(guard, "water is gushing out of the wall socket", MARIA)
    outcome = execute(act("escalate", reason="emergency", severity="emergency", hazard=""), ctx)
    assert isinstance(guard.inner, RecordingMessenger)
    assert [m.to for m in guard.inner.sent] == [PM]
    assert "safety instructions not sent" in outcome.note
    assert [u for u in outcome.unsent if "opted out" in u]
    assert all(e.claim.get("to") != MARIA.phone for e in outcome.events)


def test_a_page_the_pm_may_not_receive_fails_the_action() -> None:
    guard, consent = _guard()
    consent.record(PM, ConsentChange(opted_out=True, source="keyword", detail="STOP"), T0)
    ctx = _ctx(guard, "there is smoke in the laundry room", MARIA)
    with pytest.raises(NotTextableError):
        execute(act("escalate", reason="emergency", severity="emergency", hazard=""), ctx)


# --- language -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "se me rompió la llave del lavabo y no para de gotear",
        "¿a qué hora viene el plomero?",
        "el refri no enfria desde el martes",
        "hola, la puerta del balcón no cierra bien",
        "Muchas gracias por todo",
    ],
)
def test_spanish_wordings_are_read_as_spanish(text: str) -> None:
    assert detect_language(text) == "es"


@pytest.mark.parametrize(
    "text",
    [
        "the radiator in the bedroom is ice cold",
        "can someone check the garage door this week?",
        "thanks, that works for me",
        "my tap drips all night",
    ],
)
def test_english_wordings_are_read_as_english(text: str) -> None:
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text", ["ok", "WO-204", "👍", "3pm", ""])
def test_a_message_that_says_too_little_has_no_language(text: str) -> None:
    assert detect_language(text) is None


def test_the_directory_language_comes_first_then_the_message_then_english() -> None:
    assert language_for("es", "the sink is blocked") == "es"
    assert language_for(None, "el fregadero está tapado") == "es"
    assert language_for(None, "👍") == "en"


def test_a_language_without_a_translation_reads_english() -> None:
    assert in_language(PAGED_TEXTS, "fr") == PAGED_TEXTS["en"]


@pytest.mark.parametrize(
    ("hazard", "text", "kind", "opening"),
    [
        ("huele a gas", "", "gas", "Salga ahora."),
        ("", "sale mucho humo por debajo de la puerta", "fire", "Salga ahora y llame"),
        ("", "se inundó el sótano con agua", "water", "Si es seguro"),
        ("", "la alarma de monóxido no deja de sonar", "carbon_monoxide", "Salgan todos"),
        ("", "algo raro pasa", "generic", "Si alguien está en peligro"),
    ],
)
def test_the_safety_advice_in_spanish(hazard: str, text: str, kind: str, opening: str) -> None:
    chosen, advice = safety_instructions(hazard, text, "es")
    assert chosen == kind
    assert advice.startswith(opening)


def test_a_spanish_reader_gets_spanish_advice_and_page_note() -> None:
    guard, _ = _guard()
    ctx = _ctx(guard, "there's a burning smell from the outlet", ANA)  # directory says es
    execute(act("escalate", reason="emergency", severity="emergency", hazard=""), ctx)
    assert isinstance(guard.inner, RecordingMessenger)
    (advice,) = guard.inner.to(ANA.phone)
    assert advice.body.endswith(PAGED_TEXTS["es"])


def test_the_fixed_replies_follow_the_readers_language() -> None:
    guard, _ = _guard()
    sent = guard.inner
    assert isinstance(sent, RecordingMessenger)
    execute(act("create_wo", summary="bathroom fan rattles"), _ctx(guard, "el ventilador", ANA))
    execute(act("continue_with_assistant"), _ctx(guard, "oigan, tengo una duda", MARIA))
    execute(act("continue_with_assistant"), _ctx(guard, "quick question for you", MARIA, 2))
    (opened,) = sent.to(ANA.phone)
    assert opened.body.startswith("Recibido: he abierto WO-")
    spanish, english = (m.body for m in sent.to(MARIA.phone))
    # Maria has no language: her words pick it. Nothing acted on either: said so, not "on it".
    assert spanish == RECORDED["es"]
    assert english == RECORDED["en"]


# --- the safety floor in Spanish ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("ayuda, huelo gas en todo el departamento", "gas"),
        ("creo que hay una fuga de gas en el sótano", "gas"),
        ("apesta a gas en la escalera", "gas"),
        ("se prendió fuego el microondas", "smoke_fire"),
        ("hay humo saliendo de la secadora", "smoke_fire"),
        ("hay un incendio en el tercer piso", "smoke_fire"),
        ("se inundó el cuarto de lavado", "flooding"),
        ("se reventaron las tuberías del sótano", "flooding"),
        ("cae agua por el techo de la sala", "flooding"),
        ("el detector de monóxido de carbono suena sin parar", "carbon_monoxide"),
    ],
)
def test_the_floor_catches_spanish_emergencies(text: str, category: str) -> None:
    hit = safety_floor(text)
    assert hit is not None
    assert hit.category == category


@pytest.mark.parametrize(
    "text",
    [
        "quiero pagar la factura del gas",
        "el técnico de gas viene mañana",
        "fuimos a ver los fuegos artificiales",
        "hay una gotera pequeña en el baño",
        "¿cuándo cambian el detector de humo?",
        "compramos un detector de monóxido",
        "ya no huele a gas, gracias",
        "no hay humo, solo olor a comida",
        "estamos inundados de trabajo esta semana",
    ],
)
def test_the_floor_leaves_everyday_spanish_alone(text: str) -> None:
    assert safety_floor(text) is None


# --- the digest -----------------------------------------------------------------------------------


def test_a_digest_page_to_an_opted_out_pm_is_not_sent_and_stays_due() -> None:
    guard, consent = _guard()
    consent.record(PM, ConsentChange(opted_out=True, source="keyword", detail="STOP"), T0)
    digest = InMemoryDigest()
    hour = hour_of(T0)
    digest.add(
        DigestEntry(
            subject="unknown#+12125550123",
            kind="unknown_number",
            who="+12125550123",
            excerpt="is this the leasing office",
            package_id="pkg-digest-1",
            at=hour + timedelta(minutes=5),
        )
    )
    clock = FixedClock(hour + timedelta(hours=1, minutes=1))
    bus = InMemoryBus()
    sender = DigestSender(
        DigestDeps(digest=digest, messenger=guard, bus=bus, clock=clock, on_call_pm_phone=PM)
    )
    report = sender.run()
    assert report.pages == ()
    assert bus.events == {}  # nothing claims a page that did not go
    consent.record(PM, ConsentChange(opted_out=False, source="keyword", detail="START"), T0)
    assert len(sender.run().pages) == 1  # still due: it goes once the PM opts back in


# --- the tenant's other fixed texts in their language ---------------------------------------------

ROSA_ES = Party(
    party_id="tenant-rosa", role=PartyRole.TENANT, phone="+14155550331", unit="5C", language="es"
)
ROSA_EN = ROSA_ES.model_copy(update={"language": "en"})
TECH = Party(party_id="vendor-tech", role=PartyRole.VENDOR, phone="+14155550332", name="Tech")


def _rosas_wo(**changes: object) -> WorkOrder:
    data: dict[str, object] = {
        "wo_id": "WO-301",
        "tenant_id": ROSA_ES.party_id,
        "vendor_id": TECH.party_id,
        "unit": "5C",
        "summary": "fuga bajo el fregadero",
        "created_at": T0 - timedelta(days=1),
        "updated_at": T0 - timedelta(hours=3),
    }
    return WorkOrder.model_validate({**data, **changes})


class _Rosa:
    """One tenant (Rosa, Spanish or English in the directory), her work order and its vendor."""

    def __init__(self, rosa: Party, wo: WorkOrder | None = None) -> None:
        self.rosa = rosa
        self.work_orders = InMemoryWorkOrderStore([wo or _rosas_wo()])
        self.pending = InMemoryPendingStore()
        self.messenger = RecordingMessenger()

    def ctx(self, text: str, flush: int = 1, sender: Party | None = None) -> LaneContext:
        sender = sender or self.rosa
        pkg = package(text, phone=sender.phone, flush=flush)
        return LaneContext(
            package=pkg,
            sender=sender,
            open_contexts=(),
            action_index=0,
            idempotency_key=f"{pkg.package_id}#0",
            work_orders=self.work_orders,
            pending=self.pending,
            parties=InMemoryPartyDirectory([self.rosa, TECH]),
            messenger=self.messenger,
            on_call_pm_phone=PM,
            now=T0,
            timeline=InMemoryTimeline(),
        )

    def to_rosa(self) -> list[str]:
        return [m.body for m in self.messenger.to(self.rosa.phone)]


# The words are neutral ("ok", an id) so the directory's language is what decides.
@pytest.mark.parametrize(
    ("rosa", "listing"),
    [
        (
            ROSA_ES,
            "Sus solicitudes abiertas: WO-301 (fuga bajo el fregadero, unidad 5C) [abierta].",
        ),
        (ROSA_EN, "Your open requests: WO-301 (fuga bajo el fregadero, unit 5C) [open]."),
    ],
)
def test_the_listing_is_in_the_tenants_language(rosa: Party, listing: str) -> None:
    world = _Rosa(rosa)
    execute(act("manage_existing", operation="list"), world.ctx("ok"))
    assert world.to_rosa() == [listing]


@pytest.mark.parametrize(
    ("rosa", "prompt", "done", "no"),
    [
        (
            ROSA_ES,
            "Responda SÍ o YES para cancelar WO-301 (fuga bajo el fregadero, unidad 5C). "
            "Cualquier otra respuesta la deja como está.",
            "Listo: he cancelado WO-301 (fuga bajo el fregadero, unidad 5C).",
            "De acuerdo, he dejado WO-301 como estaba.",
        ),
        (
            ROSA_EN,
            "Reply YES to cancel WO-301 (fuga bajo el fregadero, unit 5C). "
            "Anything else keeps it as it is.",
            "Done: I've cancelled WO-301 (fuga bajo el fregadero, unit 5C).",
            "OK, I've left WO-301 as it is.",
        ),
    ],
)
def test_a_held_cancel_its_release_and_a_no_are_in_the_tenants_language(
    rosa: Party, prompt: str, done: str, no: str
) -> None:
    world = _Rosa(rosa)
    cancel = act("manage_existing", operation="cancel", wo_ids=["WO-301"])
    execute(cancel, world.ctx("WO-301"))
    (held,) = world.pending.confirmations_for(rosa.party_id, T0)
    assert world.to_rosa() == [prompt]
    declined = resolve_pending(
        package("no", phone=rosa.phone), rosa, PendingSnapshot(confirmations=(held,)), {}, {}, T0
    )
    (reply,) = declined.actions
    assert isinstance(reply.action, ContinueWithAssistant)
    assert reply.action.params.reply_hint == no
    ctx = world.ctx("1", flush=2)
    ctx.queued = QueuedAction(
        index=0,
        action=cancel,
        idempotency_key=ctx.idempotency_key,
        decision_id="resolve#0",
        pending_id=held.confirmation_id,
        release=True,
    )
    assert execute(cancel, ctx).status == "done"
    assert world.to_rosa()[-1] == done


def test_an_unclear_answer_to_a_spanish_hold_is_asked_again_in_spanish() -> None:
    world = _Rosa(ROSA_ES)
    execute(act("manage_existing", operation="cancel", wo_ids=["WO-301"]), world.ctx("WO-301"))
    (held,) = world.pending.confirmations_for(ROSA_ES.party_id, T0)
    again = resolve_pending(
        package("mmm", phone=ROSA_ES.phone), ROSA_ES, PendingSnapshot(confirmations=(held,)),
        {"WO-301": _rosas_wo()}, {}, T0,
    )  # fmt: skip
    (ask,) = again.actions
    assert ask.say == "Solo para confirmar:"


def test_a_pm_cancelling_tells_a_spanish_tenant_in_spanish_and_the_vendor_in_english() -> None:
    world = _Rosa(ROSA_ES, _rosas_wo(property_id="prop-1"))
    pm = Party(party_id="pm-1", role=PartyRole.PM, phone=PM, property_ids=("prop-1",))
    cancel = act("manage_existing", operation="cancel", wo_ids=["WO-301"])
    execute(cancel, world.ctx("WO-301", sender=pm))
    (held,) = world.pending.confirmations_for(pm.party_id, T0)
    ctx = world.ctx("yes", flush=2, sender=pm)
    ctx.queued = QueuedAction(
        index=0,
        action=cancel,
        idempotency_key=ctx.idempotency_key,
        decision_id="resolve#0",
        pending_id=held.confirmation_id,
        release=True,
    )
    assert execute(cancel, ctx).status == "done"
    assert world.to_rosa()[-1] == (
        "WO-301 (fuga bajo el fregadero, unidad 5C) fue cancelada por el administrador de la "
        "propiedad."
    )
    (to_tech,) = [m.body for m in world.messenger.to(TECH.phone)]
    assert (
        to_tech == "WO-301 (fuga bajo el fregadero, unit 5C) was cancelled by the property manager."
    )


@pytest.mark.parametrize(
    ("rosa", "noted", "confirmed"),
    [
        (
            ROSA_ES,
            "Gracias, anoté su disponibilidad para WO-301 (fuga bajo el fregadero): "
            "jueves por la tarde.",
            "Visita confirmada para WO-301 (fuga bajo el fregadero): "
            "del jue 18 jun 14:00 UTC al jue 18 jun 16:00 UTC.",
        ),
        (
            ROSA_EN,
            "Thanks, noted your availability for WO-301 (fuga bajo el fregadero): "
            "jueves por la tarde.",
            "Visit confirmed for WO-301 (fuga bajo el fregadero): "
            "Thu 18 Jun 14:00 UTC to Thu 18 Jun 16:00 UTC.",
        ),
    ],
)
def test_visit_texts_to_the_tenant_are_in_their_language(
    rosa: Party, noted: str, confirmed: str
) -> None:
    world = _Rosa(rosa)
    propose = act("schedule_visit", "WO-301", mode="propose", availability="jueves por la tarde")
    execute(propose, world.ctx("WO-301"))
    window = {"window_start": T0 + timedelta(days=1), "window_end": T0 + timedelta(days=1, hours=2)}
    execute(act("schedule_visit", "WO-301", mode="confirm", **window), world.ctx("ok", 2))
    assert world.to_rosa() == [noted, confirmed]
    # The vendor's copy of "confirmed" is in the vendor's language (none in the directory).
    assert [m.body for m in world.messenger.to(TECH.phone)][-1].startswith("Visit confirmed for")


def test_the_technicians_proposal_reaches_a_spanish_tenant_in_spanish() -> None:
    world = _Rosa(ROSA_ES)
    ctx = world.ctx("friday 9-11", sender=TECH)
    execute(act("schedule_visit", "WO-301", mode="propose", availability="viernes 9-11"), ctx)
    assert world.to_rosa() == [
        "El técnico propone una visita para WO-301 (fuga bajo el fregadero): viernes 9-11. "
        "¿Le parece bien?"
    ]


@pytest.mark.parametrize(
    ("rosa", "status", "visit", "reply"),
    [
        (ROSA_ES, WorkOrderStatus.OPEN, False,
         "WO-301 (fuga bajo el fregadero) está abierta; aún no hay visita programada. "
         "Le avisaremos por mensaje cuando la haya."),
        (ROSA_ES, WorkOrderStatus.SCHEDULED, True,
         "WO-301 (fuga bajo el fregadero) está programada: la visita es "
         "del sáb 20 jun 09:30 UTC al sáb 20 jun 11:00 UTC."),
        (ROSA_ES, WorkOrderStatus.COMPLETED, False,
         "WO-301 (fuga bajo el fregadero) está completada."),
        (ROSA_EN, WorkOrderStatus.OPEN, False,
         "WO-301 (fuga bajo el fregadero) is open; no visit is booked yet. "
         "We'll text you when one is."),
        (ROSA_EN, WorkOrderStatus.SCHEDULED, True,
         "WO-301 (fuga bajo el fregadero) is scheduled: the visit is "
         "Sat 20 Jun 09:30 UTC to Sat 20 Jun 11:00 UTC."),
    ],
)  # fmt: skip
def test_the_status_reply_is_in_the_tenants_language(
    rosa: Party, status: WorkOrderStatus, visit: bool, reply: str
) -> None:
    start = datetime(2026, 6, 20, 9, 30, tzinfo=UTC)
    window = VisitWindow(start=start, end=start + timedelta(minutes=90)) if visit else None
    world = _Rosa(rosa, _rosas_wo(status=status, visit=window))
    execute(act("continue_with_assistant", "WO-301"), world.ctx("ok"))
    assert world.to_rosa() == [reply]


def test_a_clarifying_questions_fixed_framing_is_in_the_tenants_language() -> None:
    world = _Rosa(ROSA_ES)
    ask = act("clarify", question="¿Cuál?", candidate_ids=["WO-301", "new"], reason="multi_context")
    ctx = world.ctx("ok")
    ctx.open_contexts = (wo_context("WO-301", "fuga bajo el fregadero, unidad 5C"),)
    execute(ask, ctx)
    assert world.to_rosa() == ["¿Cuál? 1) WO-301: fuga bajo el fregadero, unidad 5C; 2) algo nuevo"]


@pytest.mark.parametrize(
    ("rosa", "lead", "new"),
    [
        (ROSA_ES, "Solo para entenderlo bien, ¿a cuál se refiere? ", "algo nuevo"),
        (ROSA_EN, "Just to be sure I get this right, which one do you mean? ", "something new"),
    ],
)
def test_dispose_asks_which_one_in_the_senders_language(rosa: Party, lead: str, new: str) -> None:
    contexts = [wo_context("WO-301", "fuga bajo el fregadero"), wo_context("WO-302", "puerta")]
    split = consensus(
        [act("relay_to_open_wo", "WO-301", note="sigue goteando")],
        [act("relay_to_open_wo", "WO-302", note="sigue goteando")],
        [act("create_wo", summary="algo")],
    )
    pkg = package("sigue goteando", phone=rosa.phone)
    disposal = dispose(pkg, rosa.model_copy(update={"party_id": MARIA.party_id}), contexts, split)
    (question,) = [q.action for q in disposal.actions if isinstance(q.action, Clarify)]
    assert question.params.question.startswith(lead)
    assert new in question.params.question or "WO-302" in question.params.question


@pytest.mark.parametrize(
    ("rosa", "asked"),
    [
        (
            ROSA_ES,
            "Recibimos una llamada desde este número que pide abrir una nueva solicitud: la "
            'ducha no calienta; y agregar esto a WO-301 (fuga bajo el fregadero, unidad 5C): "ya '
            'gotea menos". Responda SÍ o YES para confirmar; si no fue usted, ignore este mensaje.',
        ),
        (
            ROSA_EN,
            "We got a call from this number asking to open a new request: la ducha no calienta; "
            'and add this to WO-301 (fuga bajo el fregadero, unit 5C): "ya gotea menos". Reply '
            "YES to confirm; if it wasn't you, ignore this text.",
        ),
    ],
)
def test_what_a_call_asked_is_held_with_a_prompt_in_the_tenants_language(
    rosa: Party, asked: str
) -> None:
    world = _Rosa(rosa)
    create = act("create_wo", summary="la ducha no calienta")
    relay = act("relay_to_open_wo", "WO-301", note="ya gotea menos")
    ctx = world.ctx("ok")
    ctx.package = package("ok", phone=rosa.phone, channel=Channel.VOICE)
    ctx.queued = QueuedAction(
        index=0,
        action=create,
        idempotency_key=ctx.idempotency_key,
        decision_id="dispose#0",
        held=(create, relay),
        by_unverified_call=True,
    )
    execute(create, ctx)
    assert world.to_rosa() == [asked]


def test_a_si_in_the_app_to_a_texted_hold_is_asked_again_in_spanish() -> None:
    world = _Rosa(ROSA_ES)
    execute(act("manage_existing", operation="cancel", wo_ids=["WO-301"]), world.ctx("WO-301"))
    (held,) = world.pending.confirmations_for(ROSA_ES.party_id, T0)
    in_app = package("sí", phone=ROSA_ES.phone, flush=2, channel=Channel.IN_APP)
    result = resolve_pending(
        in_app, ROSA_ES, PendingSnapshot(confirmations=(held,)), {"WO-301": _rosas_wo()}, {}, T0
    )
    (again,) = result.actions
    assert not again.release
    assert again.say.startswith("Ese sí llegó por la app, pero se lo pregunté por mensaje de texto")
