"""A PM acts on the work orders of the properties they manage, and only those (issue #18): the
role rules, dispose enforcing them, the offline brain reading a PM's commands in words no
other test uses, and the references it reads ids from."""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import T0, consensus, package, wo_context

from maestro.brain.offline import OfflineBrain
from maestro.brain.stage_models import models_for
from maestro.domain.actions import (
    ContinueWithAssistant,
    Lane,
    ManageExisting,
    RelayToOpenWo,
)
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.models import OpenContext, Party, PartyRole, WorkOrder, WorkOrderStatus
from maestro.domain.roles import PM_CONTEXTS, allowed, manages, part_in, part_of
from maestro.domain.wo_refs import wo_refs
from maestro.pipeline.shared import Pipeline, PipelineDeps
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDailyCaps,
    InMemoryDecisionLog,
    InMemoryDigest,
    InMemoryGates,
    InMemoryLeases,
    InMemoryPageThrottle,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryStateStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

ELM, OAK = "prop-elm", "prop-oak"
PM = Party(
    party_id="pm-pat", role=PartyRole.PM, phone="+14155550171", property_ids=(ELM, "prop-ash")
)
TENANT = Party(party_id="tenant-t", role=PartyRole.TENANT, phone="+14155550100")
VENDOR = Party(party_id="vendor-v", role=PartyRole.VENDOR, phone="+14155550142")


def _wo(property_id: str | None) -> WorkOrder:
    return WorkOrder(
        wo_id="WO-204",
        tenant_id=TENANT.party_id,
        vendor_id=VENDOR.party_id,
        property_id=property_id,
        summary="leak under the kitchen sink",
        created_at=T0 - timedelta(hours=2),
        updated_at=T0 - timedelta(hours=1),
    )


# -- the rules ----------------------------------------------------------------------------------


def test_a_pm_manages_only_the_properties_the_directory_gives_them() -> None:
    assert manages(PM, ELM)
    assert not manages(PM, OAK)
    assert not manages(PM, None)  # a WO with no property is nobody's to manage
    assert not manages(TENANT.model_copy(update={"property_ids": (ELM,)}), ELM)  # not a PM
    assert not manages(None, ELM)


def test_a_pms_part_in_a_work_order_is_by_its_property() -> None:
    assert part_of(PM, _wo(ELM)) == "pm"
    assert part_of(PM, _wo(OAK)) is None
    assert part_of(PM, _wo(None)) is None
    assert part_in(PM, "t", "v", "prop-ash") == "pm"
    # The tenant and the vendor keep theirs, whatever the property.
    assert part_of(TENANT, _wo(OAK)) == "tenant"
    assert part_of(VENDOR, _wo(OAK)) == "vendor"


@pytest.mark.parametrize(
    "lane",
    [Lane.MANAGE_EXISTING, Lane.RELAY_TO_OPEN_WO, Lane.CONTINUE_WITH_ASSISTANT, Lane.RECORD_RATING],
)
def test_a_pm_may_act_on_their_propertys_wo_and_not_on_anothers(lane: Lane) -> None:
    assert allowed(lane, part_of(PM, _wo(ELM)))
    assert not allowed(lane, part_of(PM, _wo(OAK)))


def test_a_pm_still_opens_no_work_order() -> None:
    assert not allowed(Lane.CREATE_WO, "pm")


# -- dispose enforces them ----------------------------------------------------------------------

MINE = wo_context("WO-204", "leak under the kitchen sink, unit 3B").model_copy(
    update={"relation": "pm"}
)
NOT_MARKED = wo_context("WO-204", "leak under the kitchen sink, unit 3B")


def _cancel(wo_id: str) -> ManageExisting:
    return ManageExisting.model_validate(
        {"confidence": 0.9, "params": {"operation": "cancel", "wo_ids": [wo_id]}}
    )


def _queued(text: str, contexts: list[OpenContext], *plan: object) -> list[tuple[str, str | None]]:
    disposal = dispose(package(text, phone=PM.phone), PM, contexts, consensus(plan))
    return [(q.action.lane, q.action.target_wo_id) for q in disposal.actions]


def test_dispose_lets_a_pm_cancel_a_wo_the_lease_step_found_theirs() -> None:
    assert _queued("cancel 204", [MINE], _cancel("WO-204")) == [("manage_existing", None)]


def test_dispose_refuses_a_pm_a_wo_not_marked_theirs_and_says_so() -> None:
    """Naive: "a PM may act on any": the cancel of a context not of their properties runs."""
    disposal = dispose(
        package("cancel 204", phone=PM.phone), PM, [NOT_MARKED], consensus((_cancel("WO-204"),))
    )
    assert [q.action.lane for q in disposal.actions] == ["continue_with_assistant"]


def test_dispose_answers_a_pm_naming_a_wo_outside_their_contexts_with_a_plain_refusal() -> None:
    """A model proposing an id it was not given: no question among the PM's others (it is not
    ambiguous), nothing run; the reply names the id and says why."""
    note = RelayToOpenWo.model_validate(
        {"target_wo_id": "WO-777", "confidence": 0.9, "params": {"note": "key at the desk"}}
    )
    disposal = dispose(package("note 777", phone=PM.phone), PM, [MINE], consensus((note,)))
    (reply,) = disposal.actions
    assert isinstance(reply.action, ContinueWithAssistant)
    hint = reply.action.params.reply_hint or ""
    assert hint.startswith("WO-777 is not an open work order of a property you manage")


# -- the offline brain reads a PM's commands ----------------------------------------------------

BRAIN = OfflineBrain()
POLICY = ConsensusPolicy(k=5)
HEATER = wo_context("WO-3F9A21C0", "bedroom radiator is cold, unit 7 [scheduled]").model_copy(
    update={"relation": "pm"}
)
SINK = wo_context("WO-204", "kitchen sink drips, unit 3B [open]").model_copy(
    update={"relation": "pm"}
)


def _read(text: str, contexts: list[OpenContext] | None = None) -> list[object]:
    (sample, *_) = BRAIN.samples(package(text, phone=PM.phone), "pm", contexts or [SINK, HEATER])
    return list(sample.actions or ())


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("yo how is wo204 coming along", "WO-204"),
        ("update on #204 pls", "WO-204"),
        ("WO-3f9a21c0 ??", "WO-3F9A21C0"),
        ("is the radiator job done yet? whats the status", "WO-3F9A21C0"),
    ],
)
def test_a_pm_asking_where_one_stands_gets_a_reply_bound_to_it(text: str, target: str) -> None:
    (action,) = _read(text)
    assert isinstance(action, ContinueWithAssistant)
    assert action.target_wo_id == target
    assert action.params.reply_hint is None  # the lane answers from the store


@pytest.mark.parametrize(
    "text", ["what's still outstanding?", "open tickets", "show me the list", "OPEN"]
)
def test_a_pm_asking_what_is_open_gets_the_listing(text: str) -> None:
    (action,) = _read(text)
    assert isinstance(action, ManageExisting)
    assert action.params.operation == "list"


@pytest.mark.parametrize(
    ("text", "wo_ids"),
    [
        ("kill 204 - tenant moved out. cancel it", ("WO-204",)),
        ("please cancel the radiator one", ("WO-3F9A21C0",)),
        ("Cancel WO-204 and wo-3f9a21c0", ("WO-204", "WO-3F9A21C0")),
    ],
)
def test_a_pms_cancel_names_their_work_orders(text: str, wo_ids: tuple[str, ...]) -> None:
    (action,) = _read(text)
    assert isinstance(action, ManageExisting)
    assert (action.params.operation, action.params.wo_ids) == ("cancel", wo_ids)


@pytest.mark.parametrize(
    ("text", "target", "note"),
    [
        ("note on 204: plumber has the lobby fob", "WO-204", "plumber has the lobby fob"),
        ("FYI wo 204 - dog in the unit, knock first", "WO-204", "dog in the unit, knock first"),
        ("jot down for #204 that the gate code is 5521", "WO-204", "that the gate code is 5521"),
    ],
)
def test_a_pms_note_is_a_note_on_that_work_order(text: str, target: str, note: str) -> None:
    (action,) = _read(text)
    assert isinstance(action, RelayToOpenWo)
    assert (action.target_wo_id, action.params.note) == (target, note)


@pytest.mark.parametrize(
    "text", ["cancel WO-5150", "status of wo 88?", "note #912: leave it", "pls cancel 4410"]
)
def test_an_id_a_pm_does_not_have_is_refused_in_words_never_targeted(text: str) -> None:
    (action,) = _read(text)
    assert isinstance(action, ContinueWithAssistant)
    assert action.target_wo_id is None
    assert "is not an open work order of a property you manage" in (action.params.reply_hint or "")


def test_a_pms_words_that_are_no_command_get_what_they_can_text() -> None:
    (action,) = _read("morning! the tenant in 305 rang me earlier")
    assert isinstance(action, ContinueWithAssistant)
    assert action.target_wo_id is None
    assert '"open"' in (action.params.reply_hint or "")


def test_every_pm_reading_survives_dispose_with_their_contexts() -> None:
    for text in ("status of 204", "open", "cancel 204", "note 204: key at desk", "hi"):
        pkg = package(text, phone=PM.phone)
        samples = BRAIN.samples(pkg, "pm", [SINK, HEATER])
        disposal = dispose(pkg, PM, [SINK, HEATER], aggregate(samples, POLICY))
        assert all(d.disposition != "rejected" for d in disposal.decisions), text


# -- references ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "refs"),
    [
        ("whats up with wo 204", ("WO-204",)),
        ("work order #77 and WO-1a2b3c4d", ("WO-77", "WO-1A2B3C4D")),
        ("pls cancel 204", ("WO-204",)),
        ("home after 3pm, call 415-555-0101, $120, 10:30", ()),
        ("the wo is fine, unit 4B", ()),
    ],
)
def test_work_order_references_in_a_persons_words(text: str, refs: tuple[str, ...]) -> None:
    assert wo_refs(text) == refs


def test_a_bare_number_is_a_weaker_reference() -> None:
    assert wo_refs("cancel #204 and 205", bare=False) == ("WO-204",)


# -- a PM's contexts (the lease step) -----------------------------------------------------------


def _pipeline(wos: list[WorkOrder]) -> Pipeline:
    return Pipeline(
        PipelineDeps(
            buffer=InMemoryLeases(),  # type: ignore[arg-type]
            parties=InMemoryPartyDirectory([PM, TENANT, VENDOR]),
            work_orders=InMemoryWorkOrderStore(wos),
            timeline=InMemoryTimeline(),
            pending=InMemoryPendingStore(),
            decisions=InMemoryDecisionLog(),
            state=InMemoryStateStore(),
            messenger=RecordingMessenger(),
            bus=InMemoryBus(),
            models=models_for(None),
            gates=InMemoryGates(),
            clock=FixedClock(T0),
            on_call_pm_phone="+14155550199",
            throttle=InMemoryPageThrottle(),
            caps=InMemoryDailyCaps(),
            digest=InMemoryDigest(),
        )
    )


def _at(wo_id: str, property_id: str, **changes: object) -> WorkOrder:
    return _wo(property_id).model_copy(update={"wo_id": wo_id, **changes})


def test_a_pms_contexts_are_their_properties_open_wos_bounded_named_ones_first() -> None:
    """Naive: a PM's contexts are the WOs they are a party to, i.e. none; or every WO of
    every property they manage, however many (the brain's input grows with the portfolio)."""
    wos = [_at(f"WO-{n:03d}", ELM) for n in range(20)]
    wos += [
        _at("WO-500", ELM, status=WorkOrderStatus.COMPLETED),  # done: only when named
        _at("WO-900", OAK),  # another property's: never
        _at("WO-950", "prop-ash"),
    ]
    pipeline = _pipeline(wos)

    plain = pipeline.open_contexts(PM, T0, "anything open?")
    assert len(plain) == PM_CONTEXTS
    assert {c.relation for c in plain} == {"pm"}
    assert [c.context_id for c in plain] == [f"WO-{n:03d}" for n in range(PM_CONTEXTS)]

    named = pipeline.open_contexts(PM, T0, "status of wo 019 and WO-500, and WO-900?")
    ids = [c.context_id for c in named]
    assert ids[:2] == ["WO-019", "WO-500"]  # what the text names, first (a done one too)
    assert "WO-900" not in ids
    assert len(ids) == PM_CONTEXTS


def test_a_tenants_contexts_are_unchanged_by_properties() -> None:
    tenant = TENANT.model_copy(update={"property_ids": (ELM,)})
    pipeline = _pipeline([_at("WO-1", ELM), _at("WO-2", OAK)])
    contexts = pipeline.open_contexts(tenant, T0, "WO-2?")
    assert [(c.context_id, c.relation) for c in contexts] == [
        ("WO-1", "tenant"),
        ("WO-2", "tenant"),
    ]
