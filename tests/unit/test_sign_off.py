"""The sign-off rule: a text that only closes the conversation, in English or Spanish."""

from __future__ import annotations

import pytest

from maestro.domain.sign_off import MAX_SIGN_OFF_CHARS, is_sign_off

SIGN_OFFS = [
    "thanks, bye",
    "Thank you!! Bye",
    "ok that's all, thank you",
    "Okay that’s it thx",
    "perfect, we're all set. cheers",
    "Great, appreciate your help. Have a good evening",
    "awesome thanks a bunch 🙏",
    "byeee 👋",
    "ttyl",
    "Thank you so much again, have a great weekend",
    "no that'll be all, thanks",
    "Nothing else, thank you very much",
    "got it, thanks for letting me know",
    "Thanks Marisol!",
    "bye Vic, take care",
    "sounds good, talk soon",
    "Much appreciated. Good night",
    "gracias",
    "gracias, eso es todo",
    "Muchísimas gracias por su ayuda, que tenga buen día",
    "vale, nada más por ahora. Hasta luego",
    "Perfecto, mil gracias!",
    "listo, eso sería todo, cuídese",
    "ok gracias, igualmente",
    "Adiós y gracias por todo",
    "de acuerdo, se lo agradezco. Buenas noches",
    "graciasss",
    "chao",
]

NOT_SIGN_OFFS = [
    "thanks — also the sink is leaking",
    "Thanks! The dishwasher won't drain though",
    "thank you for fixing the faucet, but now the toilet runs",
    "thanks, unit 4B",
    "bye the way the garage door is stuck",
    "ok",
    "yes",
    "sounds good",
    "great",
    "is that all?",
    "that's all broken in the bathroom",
    "no more hot water since this morning",
    "Thanks. Fire!",
    "Thanks. Smoke in the hallway",
    "thanks, see you at 3",
    "can you come tomorrow? thanks",
    "thanks for nothing, still no heat",
    "gracias pero sigue goteando",
    "gracias, también se rompió la ventana",
    "hasta luego, el calentador no prende",
    "buenas noches, hay una fuga en la cocina",
    "todo bien con el plomero?",
    "",
    "   ",
    "👍",
    "cancel it, thanks",
    "reschedule please, thank you",
]


@pytest.mark.parametrize("text", SIGN_OFFS)
def test_a_text_that_only_closes_is_a_sign_off(text: str) -> None:
    assert is_sign_off(text)


@pytest.mark.parametrize("text", NOT_SIGN_OFFS)
def test_a_text_with_anything_else_in_it_is_not(text: str) -> None:
    assert not is_sign_off(text)


def test_a_name_is_allowed_once_and_only_after_a_thanks_or_a_farewell() -> None:
    assert is_sign_off("Thanks Ana")
    assert not is_sign_off("Ana thanks")  # a name first is someone being told something
    assert not is_sign_off("Thanks Ana Lopez Garcia")
    assert not is_sign_off("thanks ana")  # not written as a name: no guess


def test_a_long_text_is_never_a_sign_off() -> None:
    text = ("thanks " * (MAX_SIGN_OFF_CHARS // 7 + 2)).strip()
    assert len(text) > MAX_SIGN_OFF_CHARS
    assert not is_sign_off(text)
