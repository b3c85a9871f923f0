"""Fixed texts maestro sends, each in English and Spanish (docs/consent-and-language.md).

A text is a mapping from a language code to its wording, English always there; a reader gets
it through :func:`maestro.domain.language.in_language` (their language when it has a
translation, else English). Only texts with nothing to fill in live here; a text built around
a work order's words is composed where it is sent.

Today: the safety advice an emergency sends, by hazard, and the sentence that follows it.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "ALERTED",
    "BROUGHT_IN",
    "HELD_BACK",
    "PAGED",
    "SAFETY_ADVICE",
    "UNREACHED",
    "AdviceKind",
    "Texts",
]

Texts = dict[str, str]
"""One fixed text: its wording by language code ("en" always there)."""

AdviceKind = Literal[
    "carbon_monoxide",
    "gas",
    "fire",
    "electrical",
    "water_electrical",
    "water",
    "no_heat",
    "generic",
]

# What to do now, by hazard: short enough for one text, the first step first.
SAFETY_ADVICE: Final[dict[AdviceKind, Texts]] = {
    "carbon_monoxide": {
        "en": "Get everyone out to fresh air now and call 911. Don't go back in until the fire "
        "department says it is safe.",
        "es": "Salgan todos al aire libre ahora y llamen al 911. No vuelvan a entrar hasta que "
        "los bomberos digan que es seguro.",
    },
    "gas": {
        "en": "Leave now. Don't use light switches, phones, appliances or flames inside. From "
        "outside, call 911 or the gas company's emergency line.",
        "es": "Salga ahora. No use interruptores, teléfonos, aparatos ni llamas adentro. Desde "
        "afuera, llame al 911 o a la línea de emergencias de la compañía de gas.",
    },
    "fire": {
        "en": "Get out now and call 911. Close doors behind you; don't go back for belongings.",
        "es": "Salga ahora y llame al 911. Cierre las puertas al salir; no vuelva por sus "
        "pertenencias.",
    },
    "electrical": {
        "en": "Keep away from it and don't touch it. If you can reach the breaker panel safely, "
        "switch that circuit off. If you see smoke or flames, get out and call 911.",
        "es": "Aléjese y no lo toque. Si puede llegar al panel de breakers sin peligro, apague "
        "ese circuito. Si ve humo o llamas, salga y llame al 911.",
    },
    "water_electrical": {
        "en": "Keep away from the water and don't touch outlets, switches or anything plugged "
        "in. Switch the power off at the breaker panel only if you can reach it without "
        "stepping in water. If anyone is at risk, call 911.",
        "es": "Aléjese del agua y no toque enchufes, interruptores ni nada conectado. Apague la "
        "luz en el panel de breakers solo si puede llegar sin pisar agua. Si alguien corre "
        "peligro, llame al 911.",
    },
    "water": {
        "en": "If it is safe, shut off the water at the main valve. Keep clear of outlets, "
        "appliances and anything electrical near the water.",
        "es": "Si es seguro, cierre la llave de paso principal del agua. Aléjese de enchufes, "
        "aparatos y todo lo eléctrico cerca del agua.",
    },
    "no_heat": {
        "en": "Keep everyone together in one room with extra layers. Don't heat your home with "
        "the oven, a grill or a fuel heater: they give off carbon monoxide. If anyone is too "
        "cold or unwell, call 911.",
        "es": "Reúnanse en un solo cuarto y abríguense bien. No caliente la casa con el horno, "
        "un asador ni un calentador de combustible: despiden monóxido de carbono. Si alguien "
        "tiene demasiado frío o se siente mal, llame al 911.",
    },
    "generic": {
        "en": "If anyone is in danger, call 911 now.",
        "es": "Si alguien está en peligro, llame al 911 ahora.",
    },
}

# What follows the advice: true only when it happened (the lane picks the one that did).
PAGED: Final[Texts] = {
    "en": "We've alerted the on-call property manager, who will contact you.",
    "es": "Hemos avisado al administrador de guardia, que se pondrá en contacto con usted.",
}
ALERTED: Final[Texts] = {
    "en": "We've alerted the on-call property manager.",
    "es": "Hemos avisado al administrador de guardia.",
}
"""Fail-open's follow-up when it pages the PM itself."""
HELD_BACK: Final[Texts] = {
    "en": "Your message goes to the property manager with their next update; if anyone is in "
    "danger, call 911.",
    "es": "Su mensaje llegará al administrador de la propiedad con su próxima actualización; si "
    "alguien está en peligro, llame al 911.",
}
UNREACHED: Final[Texts] = {
    "en": "We could not reach an on-call property manager automatically; if anyone is in "
    "danger, call 911.",
    "es": "No pudimos avisar automáticamente a un administrador de guardia; si alguien está en "
    "peligro, llame al 911.",
}
BROUGHT_IN: Final[Texts] = {
    "en": "I've asked the property manager to help with this; they'll be in touch with you.",
    "es": "Le he pedido al administrador de la propiedad que le ayude con esto; se pondrá en "
    "contacto con usted.",
}
"""To a party when the guards tripped and the PM takes over (seed 003)."""


# --- completion (#20 item 2) ---
# A vendor's "it's done", the tenant's answer, a PM's close (docs/completion.md). Templates:
# ``{job}`` is the work order's id and short summary, ``{vendor}`` the vendor's name.

COMPLETION_CHECK: Final[Texts] = {
    "en": "{vendor} says {job} is finished. All good? Reply YES, or tell us what's still wrong.",
    "es": "{vendor} dice que {job} está terminada. ¿Todo bien? Responda SÍ, o díganos qué sigue "
    "mal.",
}
"""To the tenant, when the vendor reports the job done."""
COMPLETION_NOTED: Final[Texts] = {
    "en": "Thanks, {job} is marked finished and I've asked the tenant to confirm. If they say "
    "something is still wrong, I'll text you.",
    "es": "Gracias, {job} quedó marcada como terminada y le pedí al inquilino que lo confirme. "
    "Si dice que algo sigue mal, le escribiré.",
}
"""To the vendor who reported it."""
COMPLETION_NOTED_SEVERAL: Final[Texts] = {
    "en": "Thanks, these are marked finished and I've asked each tenant to confirm: {jobs}. If "
    "one says something is still wrong, I'll text you.",
    "es": "Gracias, estos quedaron marcados como terminados y le pedí a cada inquilino que lo "
    "confirme: {jobs}. Si alguno dice que algo sigue mal, le escribiré.",
}
"""To the vendor who reported several jobs at once ("both are done")."""
COMPLETION_NOT_REPORTABLE: Final[Texts] = {
    "en": "{job} is {status}, so I haven't marked it finished.",
    "es": "{job} está en estado {status}, así que no la he marcado como terminada.",
}
COMPLETION_NO_JOB: Final[Texts] = {
    "en": "I couldn't find an open job of yours to mark finished. Your open jobs: {jobs}.",
    "es": "No encontré un trabajo abierto suyo para marcar como terminado. Sus trabajos "
    "abiertos: {jobs}.",
}
NO_OPEN_JOBS: Final[Texts] = {"en": "none", "es": "ninguno"}
RATING_REQUEST: Final[Texts] = {
    "en": "Thanks for confirming: {job} is closed. How did {vendor} do? Reply with 1 to 5 stars.",
    "es": "Gracias por confirmar: {job} está cerrada. ¿Qué tal lo hizo {vendor}? Responda con "
    "1 a 5 estrellas.",
}
"""To the tenant once their YES completes the job: the rating request it opens."""
CLOSED_BY_PM_RATING_REQUEST: Final[Texts] = {
    "en": "{job} was closed by the property manager. How did it go? Reply with 1 to 5 stars.",
    "es": "{job} fue cerrada por el administrador de la propiedad. ¿Qué tal salió? Responda con "
    "1 a 5 estrellas.",
}
CLOSED_BY_PM_NO_VENDOR: Final[Texts] = {
    "en": "{job} was closed by the property manager; no vendor visit is coming. If it still "
    "needs fixing, just text us.",
    "es": "{job} fue cerrada por el administrador de la propiedad; no vendrá ningún técnico. Si "
    "todavía necesita arreglo, escríbanos.",
}
"""To the tenant when a PM closes their request no vendor took: nothing to rate."""
CLOSE_NO_VENDOR: Final[Texts] = {
    "en": "No vendor has taken {jobs}: closing tells the tenant it's closed, with no visit and "
    "no rating asked.",
    "es": "Ningún técnico ha tomado {jobs}: al cerrarla se le avisa al inquilino que está "
    "cerrada, sin visita y sin pedirle calificación.",
}
"""Said first in a PM's held close of a request no vendor took (before their YES)."""
COMPLETION_CONFIRMED_TO_VENDOR: Final[Texts] = {
    "en": "The tenant confirmed {job} is done; it's closed. Thank you!",
    "es": "El inquilino confirmó que {job} está terminada; quedó cerrada. ¡Gracias!",
}
CLOSED_BY_PM_TO_VENDOR: Final[Texts] = {
    "en": "{job} was closed by the property manager.",
    "es": "{job} fue cerrada por el administrador de la propiedad.",
}
CLOSED_DONE: Final[Texts] = {
    "en": "Done: I've closed {jobs}.",
    "es": "Listo: he cerrado {jobs}.",
}
"""To the PM whose held close their YES released."""
NOT_REPORTED_YET: Final[Texts] = {
    "en": "{job} hasn't been reported finished yet, so I've left it open.",
    "es": "{job} todavía no se ha reportado como terminada, así que la dejé abierta.",
}
"""To a tenant whose "it's done" comes before any report: nothing changes."""
REOPENED_TO_VENDOR: Final[Texts] = {
    "en": "The tenant says {job} isn't finished: \"{said}\". It's open again with you.",
    "es": 'El inquilino dice que {job} no está terminada: "{said}". Vuelve a estar abierta a '
    "su cargo.",
}
REOPENED_ACK: Final[Texts] = {
    "en": "Thanks, I've reopened {job} and told {vendor} what's still wrong.",
    "es": "Gracias, reabrí {job} y le dije a {vendor} qué sigue mal.",
}
YOUR_VENDOR: Final[Texts] = {"en": "your vendor", "es": "su técnico"}
"""The vendor's name when the directory has none."""
CLOSE_VERB: Final[Texts] = {"en": "close", "es": "cerrar"}
"""A held close, in the hold's "Reply YES to …" (a PM's "close WO-12")."""


# --- a held reschedule (#20) ---
# What a YES to a reschedule does, in words maestro composes: the new time when the request gives
# one ({when}: its time words only), else a new time to agree. The request goes on the WO's
# timeline and to its vendor, who confirms a time; the visit itself is not moved by the YES.
MOVE_TO: Final[Texts] = {
    "en": "ask to move the visit for {which} to {when}",
    "es": "pedir que la visita de {which} pase a {when}",
}
MOVE_NEW_TIME: Final[Texts] = {
    "en": "ask for a new time for the visit for {which}",
    "es": "pedir una nueva hora para la visita de {which}",
}
MOVE_ASKED: Final[Texts] = {
    "en": "Done: I've asked to move the visit for {jobs} to {when}.",
    "es": "Listo: pedí que la visita de {jobs} pase a {when}.",
}
MOVE_ASKED_NEW_TIME: Final[Texts] = {
    "en": "Done: I've asked for a new time for the visit for {jobs}.",
    "es": "Listo: pedí una nueva hora para la visita de {jobs}.",
}


# --- clarify (#20 item 1) ---
# A question about a command names the candidates, numbered ({options}), and says what the answer
# leads to; nothing is done until the party confirms the exact call (seed 004).

WHICH_TO_CANCEL: Final[Texts] = {
    "en": 'Which of these do you want me to cancel? {options}. Reply with their numbers (like "1 '
    'and 3") or "all".',
    "es": "¿Cuáles de estas quiere que cancele? {options}. Responda con sus números (por ejemplo, "
    '"1 y 3") o "todas".',
}
WHICH_TO_MOVE: Final[Texts] = {
    "en": "Which of these visits do you want me to move? {options}. Reply with their numbers "
    '(like "1 and 3") or "all".',
    "es": "¿Cuáles de estas visitas quiere que cambie? {options}. Responda con sus números (por "
    'ejemplo, "1 y 3") o "todas".',
}
WHICH_TO_RATE: Final[Texts] = {
    "en": "Which of these is your rating of {stars} for? {options}. Reply with the number.",
    "es": "¿A cuál de estas corresponde su calificación de {stars}? {options}. Responda con el "
    "número.",
}
WHICH_TO_PASS_ON: Final[Texts] = {
    "en": "Which of these is your message about? {options}. Reply with the number.",
    "es": "¿Sobre cuál de estas es su mensaje? {options}. Responda con el número.",
}
WHICH_FINISHED: Final[Texts] = {
    "en": 'Which of these jobs is finished? {options}. Reply with their numbers (like "1 and 3") '
    'or "all".',
    "es": "¿Cuáles de estos trabajos están terminados? {options}. Responda con sus números (por "
    'ejemplo, "1 y 3") o "todos".',
}
"""To a vendor whose "it's done" names none of their several jobs: the answer reports those."""
WHICH_TO_CLOSE: Final[Texts] = {
    "en": 'Which of these do you want me to close? {options}. Reply with their numbers (like "1 '
    'and 3") or "all".',
    "es": "¿Cuáles de estas quiere que cierre? {options}. Responda con sus números (por ejemplo, "
    '"1 y 3") o "todas".',
}
"""To a property manager whose close names no one work order: the answer's picks are held."""
NOT_CAUGHT: Final[Texts] = {
    "en": "Sorry, I didn't catch which ones you mean.",
    "es": "Disculpe, no entendí a cuáles se refiere.",
}
"""Said first when a question about a command is asked again."""
NOTHING_CANCELLED: Final[Texts] = {
    "en": "OK, I haven't cancelled anything.",
    "es": "De acuerdo, no he cancelado nada.",
}
NOTHING_MOVED: Final[Texts] = {
    "en": "OK, I haven't moved any visit.",
    "es": "De acuerdo, no he cambiado ninguna visita.",
}
NOTHING_RATED: Final[Texts] = {
    "en": "OK, I haven't recorded a rating.",
    "es": "De acuerdo, no he registrado ninguna calificación.",
}
NOTHING_MARKED_FINISHED: Final[Texts] = {
    "en": "OK, I haven't marked anything finished.",
    "es": "De acuerdo, no he marcado nada como terminado.",
}
NOTHING_CLOSED: Final[Texts] = {
    "en": "OK, I haven't closed anything.",
    "es": "De acuerdo, no he cerrado nada.",
}
NOTHING_PASSED_ON: Final[Texts] = {
    "en": "OK, I haven't passed anything on.",
    "es": "De acuerdo, no he transmitido nada.",
}
