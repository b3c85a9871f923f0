"""Spanish read without a model (review of #20): the offline brain read no Spanish problem at
all ("la secadora no funciona" got "no entendí qué necesita"), a Spanish pick naming a job by
its room or thing ("la del baño") was asked again forever, and "cinco estrellas" was no
rating. The offline brain now reads a Spanish text its rules found nothing in again in its
word-for-word English gloss (``maestro.domain.spanish_gloss``); the answer reader and the
rating reader know the Spanish words. Wordings of our own, used by no scenario or labeled set.
"""

from __future__ import annotations

import pytest
from builders import MARIA, package, wo_context

from maestro.brain.offline import OfflineBrain, _rating
from maestro.domain.actions import CreateWo, Lane, RelayToOpenWo
from maestro.domain.answers import read_answer
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.models import OpenContext

SHOWER = wo_context("WO-520", "shower head drips all night, unit 7C")
SLOW_SINK = wo_context("WO-510", "kitchen sink drains slowly, unit 7C")


def _queued(text: str, contexts: tuple[OpenContext, ...] = ()) -> list[object]:
    pkg = package(text)
    samples = OfflineBrain().samples(pkg, "tenant", contexts)
    disposal = dispose(pkg, MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))
    queued: list[object] = []
    for item in disposal.actions:
        action = item.action
        if isinstance(action, CreateWo):
            queued.append(("create", action.params.category))
        elif isinstance(action, RelayToOpenWo):
            queued.append((Lane.RELAY_TO_OPEN_WO, action.target_wo_id, action.params.note))
        else:
            queued.append((Lane(action.lane), action.target_wo_id))
    return queued


@pytest.mark.parametrize(
    ("text", "created"),
    [
        (
            "el calentador no prende y la puerta del cuarto está trabada",
            [("create", "plumbing"), ("create", "locks")],
        ),
        ("la estufa hace mucho ruido", [("create", "appliance")]),
        ("hola, el excusado no le baja", [("create", "plumbing")]),
    ],
)
def test_a_spanish_problem_opens_its_work_orders(text: str, created: list[object]) -> None:
    assert _queued(text) == created


def test_spanish_news_for_an_open_job_goes_on_in_the_tenants_own_words() -> None:
    text = "la regadera todavía gotea"
    assert _queued(text, (SHOWER, SLOW_SINK)) == [(Lane.RELAY_TO_OPEN_WO, "WO-520", text)]


@pytest.mark.parametrize(
    "text",
    ["gracias, que tenga buen día", "el vecino hace mucho ruido", "mi celular no prende"],
)
def test_spanish_chit_chat_people_and_belongings_open_nothing(text: str) -> None:
    assert _queued(text) == [(Lane.CONTINUE_WITH_ASSISTANT, None)]


IDS = ("WO-401", "WO-402", "WO-403")
LINES = (
    "WO-401: bedroom window won't close, unit 2C",
    "WO-402: fridge not cooling, unit 2C",
    "WO-403: stove burner won't light, unit 2C",
)


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("la de la recámara", ("WO-401",)),
        ("la del refri y la de la estufa", ("WO-402", "WO-403")),
        ("todas menos la ventana", ("WO-402", "WO-403")),
    ],
)
def test_a_spanish_answer_names_a_job_by_its_thing_or_room(
    reply: str, picked: tuple[str, ...]
) -> None:
    answer = read_answer(reply, IDS, LINES)
    assert (answer.kind, answer.ids) == ("pick", picked)


@pytest.mark.parametrize(
    ("text", "stars"),
    [("le doy cinco estrellas", 5), ("4 de 5, llegó tarde", 4), ("tres estrellas nada más", 3)],
)
def test_a_spanish_rating_is_read(text: str, stars: int) -> None:
    rating = _rating(text)
    assert rating is not None
    assert (rating.stars, rating.strong) == (stars, True)


def test_a_spanish_command_names_its_job_by_its_thing() -> None:
    """ "ya no necesito lo de la ventana, cancélelo" was asked about among all three: the
    window is named in Spanish. Held for a YES like any command."""
    from maestro.domain.actions import ManageExisting

    contexts = (
        wo_context("WO-431", "bedroom window won't close, unit 2C"),
        wo_context("WO-432", "fridge not cooling, unit 2C"),
    )
    pkg = package("ya no hace falta lo del refri, anúlelo por favor")
    samples = OfflineBrain().samples(pkg, "tenant", contexts)
    disposal = dispose(pkg, MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))
    (item,) = disposal.actions
    assert isinstance(item.action, ManageExisting)
    assert (item.action.params.operation, item.action.params.wo_ids) == ("cancel", ("WO-432",))
