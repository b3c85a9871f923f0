"""Every dispatch text (maestro.domain.dispatch_texts): what it says, in which language, and
that it fits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import T0, work_order
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro.domain.directory import Property, Trade, Vendor
from maestro.domain.dispatch import DispatchRun, Judgment, Offer, RankedVendor
from maestro.domain.dispatch_texts import (
    MAX_PAGE_CHARS,
    MAX_TEXT_CHARS,
    approval_text,
    assigned_vendor_text,
    lapsed_text,
    no_vendor_page,
    offer_text,
    tenant_coming_text,
    withdrawn_text,
)
from maestro.domain.models import Urgency, WorkOrder, WorkOrderStatus

ASPEN = Property(
    property_id="aspen",
    name="Aspen Row Flats",
    address="900 Aspen Row, Boulder CO",
    timezone="America/Denver",
)
OTTO = Vendor(
    vendor_id="v-otto", name="Otto Rooter", phone="+17205550123", trades=(Trade.PLUMBING,)
)
WO = work_order(
    wo_id="WO-3e8f",
    summary="bathtub drain backs up (upstairs bathroom)",
    category="plumbing",
    unit="2F",
    property_id="aspen",
)


def judgment(
    priority: Urgency = Urgency.ROUTINE, *, seconds: int = 14400, nte: int = 300
) -> Judgment:
    return Judgment(
        priority=priority,
        trade=Trade.PLUMBING,
        nte_usd=nte,
        approval_needed=False,
        after_hours=False,
        vendors=(
            RankedVendor(vendor_id="v-otto", name="Otto Rooter", rank=1),
            RankedVendor(vendor_id="v-pia", name="Pia Pipes", rank=2),
        ),
        offer_timeout_seconds=seconds,
    )


LONG = "water everywhere and it keeps coming back no matter what we try " * 8
HUGE_WO = work_order(wo_id="WO-77aa88bb99", summary=LONG, unit="Penthouse North " * 4)
HUGE_VENDOR = OTTO.model_copy(update={"name": "Otto's Round-the-Clock Plumbing " * 3})
HUGE_PROPERTY = ASPEN.model_copy(update={"name": "Aspen " * 30, "address": "Row " * 80})


# --- the offer ----------------------------------------------------------------------------------


def test_the_offer_says_what_where_how_much_how_long_and_how_to_answer() -> None:
    text = offer_text(WO, OTTO, ASPEN, "2F", judgment(), 1, "en")
    assert text.startswith("Otto Rooter, new job WO-3e8f (plumbing, up to $300)")
    assert "bathtub drain backs up" in text
    assert "At Aspen Row Flats, unit 2F." in text
    assert "Reply 1 to accept WO-3e8f, 2 to decline." in text
    assert "open for 4 hours" in text


def test_the_offer_names_the_property_and_unit_but_not_the_address() -> None:
    text = offer_text(WO, OTTO, ASPEN, "2F", judgment(), 2, "en")
    assert "900 Aspen Row" not in text
    assert "Boulder" not in text


def test_a_later_offer_reads_as_the_first_did() -> None:
    # A vendor is not told they were not the first asked.
    assert offer_text(WO, OTTO, ASPEN, "2F", judgment(), 3, "en") == offer_text(
        WO, OTTO, ASPEN, "2F", judgment(), 1, "en"
    )


@pytest.mark.parametrize(
    ("priority", "seconds", "marks"),
    [
        (Urgency.EMERGENCY, 600, ("EMERGENCY plumbing", "open for 10 minutes")),
        (Urgency.URGENT, 1800, ("URGENT plumbing", "open for 30 minutes")),
        (Urgency.ROUTINE, 3600, ("(plumbing,", "open for 1 hour.")),
    ],
)
def test_the_offer_says_its_priority_and_its_own_wait(
    priority: Urgency, seconds: int, marks: tuple[str, str]
) -> None:
    text = offer_text(WO, OTTO, ASPEN, "2F", judgment(priority, seconds=seconds), 1, "en")
    for mark in marks:
        assert mark in text


def test_the_offer_in_spanish() -> None:
    text = offer_text(WO, OTTO, ASPEN, "2F", judgment(Urgency.URGENT, seconds=1800), 1, "es")
    assert "trabajo nuevo WO-3e8f (URGENTE plomería, hasta $300)" in text
    assert "En Aspen Row Flats, unidad 2F." in text
    assert "Responda 1 para aceptar WO-3e8f, 2 para rechazar." in text
    assert "abierta 30 minutos" in text


def test_an_offer_without_a_property_record_or_unit_still_says_how_to_answer() -> None:
    wo = work_order(wo_id="WO-0c0c", unit=None, category="plumbing")
    text = offer_text(wo, OTTO, None, None, judgment(), 1, "en")
    assert "At one of our properties." in text
    assert "Reply 1 to accept WO-0c0c, 2 to decline." in text


# --- after acceptance ---------------------------------------------------------------------------


def test_the_vendor_who_accepted_gets_the_address_and_what_the_tenant_said() -> None:
    notes = ["back door is open until 3", "one shy greyhound", "any weekday before lunch"]
    text = assigned_vendor_text(WO, ASPEN, "2F", notes, "en")
    assert text.startswith("WO-3e8f is yours.")
    assert "Aspen Row Flats, unit 2F (900 Aspen Row, Boulder CO)" in text
    assert "back door is open until 3 / one shy greyhound / any weekday before lunch" in text


def test_with_no_access_notes_the_vendor_is_told_so() -> None:
    text = assigned_vendor_text(WO, ASPEN, "2F", [" ", ""], "en")
    assert text.endswith("The tenant gave no access details.")
    spanish = assigned_vendor_text(WO, ASPEN, "2F", [], "es")
    assert spanish.startswith("WO-3e8f es suyo. Dirección: Aspen Row Flats, unidad 2F")
    assert spanish.endswith("El inquilino no dio detalles de acceso.")


def test_the_tenant_hears_who_is_coming_and_that_the_time_is_next() -> None:
    text = tenant_coming_text(WO, OTTO, "en")
    assert text.startswith("Otto Rooter has accepted WO-3e8f")
    assert "Next is the visit time" in text
    spanish = tenant_coming_text(WO, OTTO, "es")
    assert spanish.startswith("Otto Rooter aceptó WO-3e8f")
    assert "hora de la visita" in spanish


# --- approval, withdrawal, lapse ----------------------------------------------------------------


def test_the_pm_is_asked_to_approve_the_amount_yes_or_no() -> None:
    urgent = judgment(Urgency.URGENT, nte=650)
    text = approval_text(WO, urgent, "en")
    assert text.startswith("Approve WO-3e8f up to $650? YES/NO. URGENT plumbing job, unit 2F")
    assert "bathtub drain" in text
    assert approval_text(WO, urgent, "es").startswith("¿Aprueba WO-3e8f hasta $650? SÍ/NO.")


@pytest.mark.parametrize(
    ("status", "english", "spanish"),
    [
        (WorkOrderStatus.CANCELLED, "WO-3e8f was cancelled;", "WO-3e8f se canceló;"),
        (WorkOrderStatus.COMPLETED, "WO-3e8f was completed;", "WO-3e8f ya se completó;"),
    ],
)
def test_a_withdrawn_offer_says_why_from_the_wos_status(
    status: WorkOrderStatus, english: str, spanish: str
) -> None:
    closed = WO.model_copy(update={"status": status})
    text = withdrawn_text(closed, "ignored: the status says it", "en")
    assert text.startswith(english)
    assert "the offer is withdrawn" in text
    assert spanish in withdrawn_text(closed, "", "es")


def test_a_withdrawn_offer_on_a_wo_still_open_gives_the_reason_or_says_closed() -> None:
    assert withdrawn_text(WO, "the PM sent their own crew", "en").startswith(
        "WO-3e8f: the PM sent their own crew; the offer is withdrawn."
    )
    assert withdrawn_text(WO, "  ", "en").startswith("WO-3e8f is closed;")
    assert "ya no está abierta" in withdrawn_text(WO, "the PM sent their own crew", "es")


def test_a_lapsed_offer_says_it_closed_in_each_language() -> None:
    assert lapsed_text(WO, "en").startswith("The offer for WO-3e8f has closed")
    assert lapsed_text(WO, "es").startswith("La oferta de WO-3e8f se cerró")


@pytest.mark.parametrize("language", ["fr", "pt", "xx"])
def test_a_language_without_a_translation_reads_english(language: str) -> None:
    assert offer_text(WO, OTTO, ASPEN, "2F", judgment(), 1, language) == offer_text(
        WO, OTTO, ASPEN, "2F", judgment(), 1, "en"
    )
    assert lapsed_text(WO, language) == lapsed_text(WO, "en")


# --- the page -----------------------------------------------------------------------------------


def run(**changes: object) -> DispatchRun:
    base = DispatchRun(wo_id=WO.wo_id, started_at=T0, updated_at=T0, judgment=judgment())
    return base.model_validate({**base.model_dump(), **changes})


def offer(index: int, vendor_id: str, outcome: str) -> Offer:
    return Offer(
        index=index,
        vendor_id=vendor_id,
        sent_at=T0 + timedelta(hours=index),
        outcome=outcome,  # type: ignore[arg-type]
    )


def test_the_page_says_who_was_asked_and_how_each_answered() -> None:
    page = no_vendor_page(
        WO,
        run(offers=(offer(1, "v-otto", "declined"), offer(2, "v-pia", "timed_out"))),
        ["tenant opened WO-3e8f by text", "offered to Otto: declined", "offered to Pia: no answer"],
    )
    assert page.startswith("WO-3e8f needs a vendor by hand: no vendor accepted.")
    assert "(routine, plumbing, NTE $300, property aspen, unit 2F)" in page
    assert "Asked: Otto Rooter: declined; Pia Pipes: no answer in time." in page
    assert page.endswith(
        "Trail: tenant opened WO-3e8f by text | offered to Otto: declined | "
        "offered to Pia: no answer"
    )


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"approval": "refused"}, "the approval was refused, no vendor was asked"),
        ({"approval": "timed_out"}, "no answer to the approval request"),
        (
            {
                "judgment": judgment(Urgency.URGENT).model_copy(
                    update={"vendors": (), "after_hours": True}
                )
            },
            "no plumbing vendor serves the property after hours.",
        ),
        (
            # Routine work after hours was offered to every vendor: none at all serves it.
            {"judgment": judgment().model_copy(update={"vendors": (), "after_hours": True})},
            "no plumbing vendor serves the property.",
        ),
        ({}, "no vendor was offered the job"),
    ],
)
def test_the_page_says_why_there_is_no_vendor(changes: dict[str, object], why: str) -> None:
    assert why in no_vendor_page(WO, run(**changes), [])


def test_a_long_trail_keeps_its_newest_lines_within_the_page() -> None:
    trail = [f"step {n}: " + "details " * 12 for n in range(40)]
    page = no_vendor_page(HUGE_WO, run(offers=(offer(1, "v-otto", "declined"),)), trail)
    assert len(page) <= MAX_PAGE_CHARS
    assert "WO-77aa88bb99" in page
    assert "step 39:" in page
    assert "step 0:" not in page


# --- every text fits ----------------------------------------------------------------------------


def _every_text(wo: WorkOrder, language: str) -> list[str]:
    return [
        offer_text(wo, HUGE_VENDOR, HUGE_PROPERTY, wo.unit, judgment(), 1, language),
        assigned_vendor_text(wo, HUGE_PROPERTY, wo.unit, [LONG, LONG], language),
        tenant_coming_text(wo, HUGE_VENDOR, language),
        approval_text(wo, judgment(Urgency.URGENT, nte=99999), language),
        withdrawn_text(wo, LONG, language),
        lapsed_text(wo, language),
    ]


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_text_fits_two_segments_and_keeps_the_wo_id(language: str) -> None:
    for text in _every_text(HUGE_WO, language):
        assert len(text) <= MAX_TEXT_CHARS, text
        assert "WO-77aa88bb99" in text, text


@pytest.mark.parametrize("language", ["en", "es"])
def test_a_cut_offer_still_says_how_to_answer(language: str) -> None:
    text = offer_text(HUGE_WO, HUGE_VENDOR, HUGE_PROPERTY, HUGE_WO.unit, judgment(), 1, language)
    answer = {
        "en": "Reply 1 to accept WO-77aa88bb99, 2 to decline.",
        "es": "Responda 1 para aceptar WO-77aa88bb99, 2 para rechazar.",
    }[language]
    assert answer in text
    assert "…" in text  # the summary was cut, not the instructions


# --- any words a person wrote still leave every text whole --------------------------------------

_WORDS = st.text(min_size=1, max_size=400).filter(lambda s: s.strip() != "")
_ID = st.from_regex(r"WO-[0-9A-F]{4,12}", fullmatch=True)


@settings(max_examples=80)
@given(
    wo_id=_ID,
    summary=_WORDS,
    unit=st.none() | _WORDS,
    names=st.tuples(_WORDS, _WORDS, st.text(max_size=300)),
    notes=st.lists(st.text(max_size=300), max_size=6),
    reason=st.text(max_size=200),
    language=st.sampled_from(["en", "es", "de"]),
    priority=st.sampled_from(list(Urgency)),
    seconds=st.integers(min_value=1, max_value=7 * 24 * 3600),
    nte=st.integers(min_value=0, max_value=10**7),
)
def test_every_text_fits_and_names_its_wo_whatever_was_written(
    wo_id: str,
    summary: str,
    unit: str | None,
    names: tuple[str, str, str],
    notes: list[str],
    reason: str,
    language: str,
    priority: Urgency,
    seconds: int,
    nte: int,
) -> None:
    vendor_name, property_name, address = names
    wo = work_order(wo_id=wo_id, summary=summary, unit=unit, urgency=priority)
    who = OTTO.model_copy(update={"name": vendor_name})
    where = ASPEN.model_copy(update={"name": property_name, "address": address})
    judged = judgment(priority, seconds=seconds, nte=nte)
    texts = [
        offer_text(wo, who, where, unit, judged, 1, language),
        assigned_vendor_text(wo, where, unit, notes, language),
        tenant_coming_text(wo, who, language),
        approval_text(wo, judged, language),
        withdrawn_text(wo, reason, language),
        lapsed_text(wo, language),
    ]
    for text in texts:
        assert len(text) <= MAX_TEXT_CHARS
        assert wo_id in text
    answer = {"es": f"Responda 1 para aceptar {wo_id}, 2 para rechazar."}.get(
        language, f"Reply 1 to accept {wo_id}, 2 to decline."
    )
    assert answer in texts[0]
    page = no_vendor_page(wo, run(offers=(offer(1, "v-otto", "declined"),)), notes)
    assert len(page) <= MAX_PAGE_CHARS
    assert wo_id in page
