"""The safety floor in Spanish (#20): the hazards as Spanish-speaking tenants text them, with or
without accents and with the usual misspellings, and the everyday look-alikes left alone.

Wordings are this file's own: none is in ``evals/labeled/spanish_emergencies.jsonl`` (the set
measured by ``maestro eval labeled --set spanish``, never tuned on) and none in
``tests/unit/test_consent_and_language.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maestro.domain.safety import safety_floor
from maestro.domain.safety_spanish import SPANISH_RULES, sound_spelling

LABELED = Path(__file__).resolve().parents[2] / "evals" / "labeled"


SPANISH_EMERGENCIES = [
    ("se siente un olorsito a gas cerca del calentador", "gas"),
    ("guele a gas bien fuerte en la cosina", "gas"),
    ("la estufa esta soltando gas y no se apaga", "gas"),
    ("se escucha un silbido raro detras de la estufa", "gas"),
    ("la alarma del co2 sono y a mi hija le duele la cabeza", "carbon_monoxide"),
    ("suena el detector y todos estamos mareados", "carbon_monoxide"),
    ("se esta quemando el cuarto de mi hijo", "smoke_fire"),
    ("la alarma de humo no deja de sonar", "smoke_fire"),
    ("FUEGO!!", "smoke_fire"),
    ("el contacto de la recamara tiro chispas y se apago todo", "electrical"),
    ("huele a cable quemado cerca del apagador", "electrical"),
    ("el enchufe esta derretido", "electrical"),
    ("el interruptor da toques", "electrical"),
    ("hay alambres pelados en el baño", "electrical"),
    ("sale agua a chorros de la pared", "flooding"),
    ("el agua me llega hasta los tobillos en la cocina", "flooding"),
    ("el techo de la recamara gotea", "flooding"),
    ("no tenemos calefacción y está helando afuera", "no_heat_freezing"),
    ("la caldera se descompuso y hace muchisimo frio", "no_heat_freezing"),
    ("el heater no prende y estamos a 5 grados", "no_heat_freezing"),
    ("la calefaccion no sirve", "no_heat_freezing"),
    ("nos sentimos mareados y la alarma no para de sonar", "carbon_monoxide"),
    ("esta saliendo fuego del enchufe", "smoke_fire"),
    ("huele a quemado en todo el depa y no se que es", "electrical"),
    ("el cable de la lavadora se derritio", "electrical"),
    ("el sotano se lleno de agua", "flooding"),
    ("sin calefacción desde ayer y afuera está nevando", "no_heat_freezing"),
    ("nunca habia olido a gas asi, ayuda", "gas"),  # "never like this" is no negation
]


@pytest.mark.parametrize(("text", "category"), SPANISH_EMERGENCIES)
def test_spanish_emergencies_fire(text: str, category: str) -> None:
    hit = safety_floor(text)
    assert hit is not None
    assert hit.category == category
    assert text[hit.start : hit.end] == hit.phrase  # the span indexes the text as sent


# The first four raised on the floor before #20; the others guard the new rules' precision
# (the narrower floor before #20 left them alone too).
SPANISH_LOOK_ALIKES = [
    # a Spanish negator or a resolution, as "no smoke" and "is gone now" in English
    "no se siente ningun olor a gas, solo que la hornilla no prende",
    "el olor a gas ya se fue, gracias por venir",
    "mi hijo juega con fuego en el videojuego jaja",
    "mis hijos vieron una película de incendios y bomberos",
    "la estufa de gas no calienta bien",
    "el recibo de gas llego muy caro",
    "la alarma de humo pita porque necesita pila nueva",
    "mi vecino fuma y todo huele a humo de cigarro",
    "quemé las tortillas y sonó la alarma",
    "se disparó el breaker cuando usé la secadora",
    "no hay agua caliente en la regadera",
    "el calentador de agua no prende",
    "me llamas cuando vengas?",
    "las llamadas no entran a mi celular",
    "cuando sale y llamas al portero te abre",
    "hay una fuga chiquita debajo del lavabo, gotea en una cubeta",
    "el techo tiene una mancha vieja, no gotea",
    "la alarma del carro del vecino suena cada noche",
    "la calefacción ya funciona, gracias",
    "hoy hace frío, ¿van a prender la calefacción pronto?",
    "no tengo agua caliente y hace frío",
    "el enchufe del baño está flojo",
]


@pytest.mark.parametrize("text", SPANISH_LOOK_ALIKES)
def test_everyday_spanish_look_alikes_do_not_fire(text: str) -> None:
    assert safety_floor(text) is None


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("Huele a gás", "uele a gas"),
        ("güele a gas", "uele a gas"),
        ("calefacción", "kalefasion"),
        ("calefacion", "kalefasion"),
        ("se reventó", "se rebento"),
        ("se está llenando de humo", "se esta yenando de umo"),
        ("manguera", "mangera"),
        ("monóxido", "monosido"),
        ("quemando", "kemando"),
        ("fuegooo", "fuego"),
    ],
)
def test_the_sound_spelling_makes_variants_one_string(text: str, spelled: str) -> None:
    assert sound_spelling(text).text == spelled


def test_a_hit_maps_back_to_the_text_as_sent() -> None:
    text = "AYUDA!! Sale HUMO del horno"
    hit = safety_floor(text)
    assert hit is not None
    assert hit.phrase == "Sale HUMO"  # the silent h belongs to the word it was dropped from
    spelled = sound_spelling(text)
    assert len(spelled.starts) == len(spelled.ends) == len(spelled.text)


def test_spanish_rule_triggers_never_skip_a_match() -> None:
    # A trigger is a speed shortcut: every raw match of the rule must contain it, or the shortcut
    # would silently drop an emergency. (Reading the Spanish set here checks plumbing, not recall.)
    rows = (LABELED / "spanish_emergencies.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [
        *(json.loads(row)["text"] for row in rows),
        *(text for text, _ in SPANISH_EMERGENCIES),
        *SPANISH_LOOK_ALIKES,
    ]
    checked = 0
    for rule in SPANISH_RULES:
        assert rule.trigger is not None, rule.category
        for text in texts:
            spelled = sound_spelling(text).text
            for match in rule.pattern.finditer(spelled):
                checked += 1
                assert rule.trigger.search(match.group()), (rule.category, match.group(), text)
    assert checked > 50
