"""A Spanish tenant, the offline brain, signed SMS only (review of #20): two problems in one
Spanish text open two work orders and the tenant hears it in Spanish; her Spanish rating is
recorded. Naive: "He guardado su mensaje, pero no he hecho nada con él", nothing opened, and
"cinco estrellas" met the same.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from embedded import flush, sms, to_phone, work_orders

from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.directory import Directory, Person, PersonRole, Property, Trade, Unit, Vendor
from maestro.domain.models import WorkOrder, WorkOrderStatus
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed_directory

pytestmark = pytest.mark.integration

ALAMO = "prop-alamo"
INES = Person(
    person_id="t-ines",
    role=PersonRole.TENANT,
    name="Inés",
    phones=("+13125550611",),
    unit_id="alamo-5",
)
DIRECTORY = Directory(
    properties=(Property(property_id=ALAMO, name="Álamo Court"),),
    units=(Unit(unit_id="alamo-5", property_id=ALAMO, label="5"),),
    people=(INES,),
)


def test_a_spanish_text_of_two_problems_opens_two_work_orders_and_a_rating_is_recorded() -> None:
    with LocalStack(start=datetime(2027, 6, 8, 14, 0, tzinfo=UTC)) as stack:
        seed_directory(stack, DIRECTORY)
        ines = INES.phones[0]
        now = stack.clock.now()
        DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).create(
            WorkOrder(
                wo_id="WO-880",
                tenant_id=INES.person_id,
                unit="5",
                property_id=ALAMO,
                summary="hallway closet door off its track",
                status=WorkOrderStatus.COMPLETED,
                rating_requested=True,
                created_at=now - timedelta(days=3),
                updated_at=now - timedelta(hours=4),
            )
        )

        sms(stack, "buenas, la lavadora no sirve y el apagador de la sala está flojo", ines)
        flush(stack)
        opened = [wo for wo in work_orders(stack) if wo.wo_id != "WO-880"]
        assert sorted(wo.category for wo in opened) == ["appliance", "electrical"]
        acks = [t for t in to_phone(stack, ines) if t.startswith("Recibido: he abierto WO-")]
        assert len(acks) == 2, to_phone(stack, ines)

        sms(stack, "cinco estrellas, todo bien", ines)
        flush(stack)
        rated = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).get("WO-880")
        assert rated is not None
        assert rated.rating == 5


def test_the_gather_question_goes_in_the_language_of_her_words_when_the_directory_names_none() -> (
    None
):
    # The directory gives Inés no language: the question the work order's execution sends her
    # (a step that reads no timeline) is in the language of her words, read when gather ran.
    assert INES.language is None
    with LocalStack(start=datetime(2027, 6, 8, 14, 0, tzinfo=UTC)) as stack:
        seed_directory(stack, DIRECTORY)
        ines = INES.phones[0]
        sms(stack, "hola, el horno de la cocina no calienta desde ayer", ines)
        flush(stack)
        stack.wait_for_executions(allow_paused=True)
        (opened,) = work_orders(stack)
        assert opened.language == "es"
        asked = [t for t in to_phone(stack, ines) if "WO-" in t and "Recibido" not in t]
        assert asked, to_phone(stack, ines)
        assert all(t.startswith("Para enviar a la persona indicada") for t in asked), asked


def test_a_vendors_done_reaches_her_in_the_language_her_work_order_was_opened_in() -> None:
    # Not the sender and no directory language: the completion question goes to Inés in the
    # language she wrote in when the job was opened (the work order's), not in English.
    dee = Vendor(vendor_id="v-dee-es", name="Dee", phone="+13125550619", trades=(Trade.PLUMBING,))
    with LocalStack(start=datetime(2027, 6, 8, 14, 0, tzinfo=UTC)) as stack:
        seed_directory(stack, DIRECTORY.model_copy(update={"vendors": (dee,)}))
        now = stack.clock.now()
        store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
        for wo_id, language in (("WO-881", "es"), ("WO-882", None)):
            store.create(
                WorkOrder(
                    wo_id=wo_id,
                    tenant_id=INES.person_id,
                    vendor_id=dee.vendor_id,
                    unit="5",
                    property_id=ALAMO,
                    summary="bathroom sink drips" if wo_id == "WO-881" else "porch light out",
                    category="plumbing",
                    status=WorkOrderStatus.ASSIGNED,
                    language=language,
                    created_at=now - timedelta(days=1),
                    updated_at=now - timedelta(days=1),
                )
            )
        sms(stack, "WO-881 all fixed, new washer in", dee.phone)
        flush(stack)
        sms(stack, "WO-882 done, bulb swapped", dee.phone)
        flush(stack)
        heard = to_phone(stack, INES.phones[0])
        assert any("WO-881" in t and "dice que" in t for t in heard), heard
        assert any("WO-882" in t and " says " in t for t in heard), heard  # no language: English
