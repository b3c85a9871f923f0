"""Every fixed text maestro sends, each with its English and Spanish wording.

One module, so what maestro can say is read in one place and a test checks that every text a
lane sends is one of these (or the checked model reply): ``tests/unit/test_fixed_texts.py``
compiles each template to a pattern and reads what the lanes send.

A text is a :data:`Texts`: a template by language code, English always there. A template may
name fields (``{wo_id}``) that :func:`say` fills; a field holds data (an id, a summary, a
person's words), never wording of its own. The reader's language picks the wording
(:func:`maestro.domain.language.in_language`: the directory's language, else their message's,
else English). Texts only the PM or an operator reads (pages) may be English only: say why in a
comment beside them. A mapping of texts by a key (``SAFETY_ADVICE`` by hazard) is fine too.

Each text says what was done or asked, never a promise no queued action backs.

Adding a text: define it at module level as ``NAME: Final[Texts] = {"en": ..., "es": ...}`` in
the block of its lane (or a block of your own appended at the end, headed
``# --- <name> (#20 item N) ---``), and send it with ``say(NAME, language, field=value)``.
:func:`every_text` finds it by its shape; nothing else to register.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from maestro.domain.language import in_language

Texts = dict[str, str]
"""One fixed text: its template by language code ("en" always there)."""


def say(texts: Mapping[str, str], language: str, /, **fields: object) -> str:
    """``texts`` in ``language`` (else English), its fields filled."""
    return in_language(texts, language).format(**fields)


def _is_texts(value: object) -> bool:
    return (
        isinstance(value, dict)
        and "en" in value
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    )


def every_text() -> dict[str, Texts]:
    """Every fixed text of this module by its name (``SAFETY_ADVICE.gas`` for one of a
    mapping), found by shape: whatever a block defines is listed without registering it."""
    found: dict[str, Texts] = {}
    for name, value in globals().items():
        if name.startswith("__") or not isinstance(value, dict):
            continue
        if _is_texts(value):
            found[name] = value
            continue
        for key, inner in value.items():
            if _is_texts(inner):
                found[f"{name}.{key}"] = inner
    return found


# --- safety (an emergency's advice and what follows it) -----------------------------------------

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


# --- the assistant's replies (lanes/continue_with_assistant.py) ----------------------------------

ON_IT: Final[Texts] = {
    "en": "Thanks for your message. I'm on it and will get back to you shortly.",
    "es": "Gracias por su mensaje. Me ocupo de ello y le respondo en breve.",
}
"""Only when another action of the same package acts on the message (``fixed_reply``)."""
WELCOME: Final[Texts] = {"en": "You're welcome!", "es": "¡De nada!"}
"""A thanks with nothing to act on is answered in kind."""
RECORDED: Final[Texts] = {
    "en": "I've saved your message, but I haven't acted on it: I couldn't tell what you need. "
    "If something needs fixing or changing, tell me what it is and where.",
    "es": "He guardado su mensaje, pero no he hecho nada con él: no entendí qué necesita. Si "
    "algo necesita arreglo o un cambio, dígame qué es y dónde.",
}
"""A message nothing acted on: said so, with what to send instead."""
STATUS_LINE: Final[Texts] = {
    "en": "{wo_id} ({summary}) {where}.",
    "es": "{wo_id} ({summary}) {where}.",
}
STATUS: Final[dict[str, Texts]] = {
    "open": {
        "en": "is open; no visit is booked yet. We'll text you when one is",
        "es": "está abierta; aún no hay visita programada. Le avisaremos por mensaje cuando la "
        "haya",
    },
    "assigned": {
        "en": "has a vendor assigned; no visit is booked yet",
        "es": "tiene un técnico asignado; aún no hay visita programada",
    },
    "scheduled": {"en": "is scheduled", "es": "está programada"},
    "scheduled_at": {
        "en": "is scheduled: the visit is {visit}",
        "es": "está programada: la visita es {visit}",
    },
    "in_progress": {"en": "is in progress", "es": "está en curso"},
    "completion_reported": {
        "en": "was reported finished by its vendor; the tenant is asked to confirm",
        "es": "el técnico la reportó terminada; se le pidió al inquilino que lo confirme",
    },
    "completed": {"en": "is completed", "es": "está completada"},
    "cancelled": {"en": "was cancelled", "es": "fue cancelada"},
    "other": {"en": "is {status}", "es": "está en estado {status}"},
}
"""Where a work order stands, from the stored record (``STATUS_LINE``'s ``where``)."""
PM_STATUS_LINE: Final[Texts] = {
    "en": "{wo_id} ({summary}) {where}. {unit}{who}, {urgency}.",
}
"""To a PM only (PMs read English: the directory gives them no other language today)."""
PM_STATUS_OPEN: Final[Texts] = {"en": "is open; no visit is booked yet"}
PM_NO_VENDOR: Final[Texts] = {"en": "no vendor assigned yet"}
PM_VENDOR: Final[Texts] = {"en": "vendor {name}"}
PM_UNIT: Final[Texts] = {"en": "unit {unit}, "}


# --- questions (domain/dispose.py, domain/pending.py, lanes/clarify.py) ---------------------------

QUESTION_ONE: Final[Texts] = {
    "en": "Did you mean {wo_id} ({about})? Reply YES, or tell us which one you mean.",
    "es": "¿Se refiere a {wo_id} ({about})? Responda SÍ, o díganos a cuál se refiere.",
}
"""One candidate: named, so a YES (or "1") picks it."""
QUESTION_LEAD: Final[Texts] = {
    "en": "Just to be sure I get this right, which one do you mean?",
    "es": "Solo para entenderlo bien, ¿a cuál se refiere?",
}
"""Several candidates: followed by ``OPTION`` for each, numbered."""
OPTION: Final[Texts] = {"en": "{number}) {line}", "es": "{number}) {line}"}
OPTION_SEPARATOR = "; "
QUESTION_MORE: Final[Texts] = {
    "en": "Sorry, I want to get this right: could you tell me a bit more about what you need?",
    "es": "Disculpe, quiero entenderlo bien: ¿podría contarme un poco más sobre lo que necesita?",
}
YOUR_REQUEST: Final[Texts] = {"en": "your request", "es": "su solicitud"}
SOMETHING_NEW: Final[Texts] = {"en": "something new", "es": "algo nuevo"}
WHICH_AGAIN: Final[Texts] = {
    "en": "Sorry, I didn't catch which one you mean. Please reply with the number:",
    "es": "Disculpe, no entendí a cuál se refiere. Por favor, responda con el número:",
}
"""A re-ask among several: the clarify lane numbers the candidates after it."""
WHICH_AGAIN_ONE: Final[Texts] = {
    "en": "Sorry, I didn't catch that.",
    "es": "Disculpe, no le entendí.",
}
"""A re-ask about one: the clarify lane names it after (``QUESTION_ONE``)."""
NONE_OF_THEM: Final[Texts] = {
    "en": "OK, I won't add it to any of them. Tell me more if it's something new.",
    "es": "De acuerdo, no lo agregaré a ninguna. Cuénteme más si se trata de algo nuevo.",
}
NOT_ACTED_CHANGED: Final[Texts] = {
    "en": "{what}, so I didn't act on it there. Reply if it still needs attention and I'll open "
    "a new request.",
    "es": "{what}, así que no hice nada ahí. Responda si todavía necesita atención y abriré una "
    "solicitud nueva.",
}
"""A picked work order changed since the question (``what``: the re-validation's summary)."""


# --- holds: "Reply YES to …" (domain/pending.py) -------------------------------------------------

TO_BE_SURE: Final[Texts] = {"en": "Just to be sure:", "es": "Solo para confirmar:"}
LEFT_AS_IS_ONE: Final[Texts] = {
    "en": "OK, I've left {wo_ids} as it is.",
    "es": "De acuerdo, he dejado {wo_ids} como estaba.",
}
LEFT_AS_IS_MANY: Final[Texts] = {
    "en": "OK, I've left {wo_ids} as they are.",
    "es": "De acuerdo, he dejado {wo_ids} como estaban.",
}
NOTHING_DONE: Final[Texts] = {
    "en": "OK, I haven't done any of it.",
    "es": "De acuerdo, no he hecho nada.",
}
YES_IN_APP: Final[Texts] = {
    "en": "That yes came in the app, but I asked by text, so only a text back confirms it.",
    "es": "Ese sí llegó por la app, pero se lo pregunté por mensaje de texto, así que solo una "
    "respuesta por texto lo confirma.",
}
YES_BY_CALL: Final[Texts] = {
    "en": "A call from this number said yes, but a call can't confirm it; only a text back can.",
    "es": "Una llamada desde este número dijo que sí, pero una llamada no puede confirmarlo; "
    "solo una respuesta por texto puede.",
}
HOLD_EXPIRED: Final[Texts] = {
    "en": "That request to confirm has expired, so I haven't changed anything. If you still "
    "want it, send the request again and I'll ask you to confirm it.",
    "es": "Esa solicitud de confirmación ya venció, así que no he cambiado nada. Si todavía lo "
    "quiere, envíe la solicitud otra vez y le pediré que la confirme.",
}
"""A YES to a hold that expired before it came."""
NOTHING_TO_CONFIRM: Final[Texts] = {
    "en": "There's nothing waiting for your yes right now (a request to confirm expires after a "
    "while), so I haven't changed anything. Tell me what you'd like done.",
    "es": "Ahora no hay nada pendiente de su sí (una solicitud de confirmación vence al cabo de "
    "un tiempo), así que no he cambiado nada. Dígame qué quiere que haga.",
}
"""A YES with nothing open to answer (the hold expired and was closed earlier, or none was)."""


# --- refusals (domain/dispose.py, brain/offline.py) ----------------------------------------------

NOT_YOURS_TO_DO: Final[Texts] = {
    "en": "I haven't done that: {what} {wo_ids} is for the tenant or the property manager to "
    "ask, so nothing was changed.",
    "es": "No lo he hecho: {what} {wo_ids} lo pide el inquilino o el administrador de la "
    "propiedad, así que no se cambió nada.",
}
"""A vendor's command about a work order their part does not allow (``what``: ``DOING``)."""
DOING: Final[dict[str, Texts]] = {
    "cancel": {"en": "cancelling", "es": "cancelar"},
    "reschedule": {"en": "moving", "es": "cambiar de fecha"},
    "rate": {"en": "rating", "es": "valorar"},
    "relay": {"en": "passing on messages about", "es": "pasar mensajes sobre"},
    "change": {"en": "changing", "es": "cambiar"},
}
NOT_FOR_PM: Final[Texts] = {
    "en": '{wo_ids} {what}. Text "open" for yours.',
}
"""To a PM only (English, as the PM status lines)."""
NOT_FOR_PM_ONE: Final[Texts] = {
    "en": "is not an open work order of a property you manage, so I haven't done anything with it",
}
NOT_FOR_PM_MANY: Final[Texts] = {
    "en": "are not open work orders of a property you manage, so I haven't done anything with them",
}
NOTHING_OPEN_TO: Final[dict[str, Texts]] = {
    "cancel": {
        "en": "You have no open requests to cancel, so nothing was changed.",
        "es": "No tiene solicitudes abiertas que cancelar, así que no se cambió nada.",
    },
    "reschedule": {
        "en": "You have no open requests to reschedule, so nothing was changed.",
        "es": "No tiene solicitudes abiertas que cambiar de fecha, así que no se cambió nada.",
    },
}
PM_HELP_TEXT: Final[Texts] = {
    "en": 'I can help with the work orders of your properties: text "open" to list them, '
    '"status of WO-204", "cancel WO-204" or "note WO-204: the vendor has the key".',
}
"""To a PM whose text matched no command (English, as the PM status lines)."""
PM_HAS_IT: Final[Texts] = {
    "en": "The property manager is looking into this and will be in touch.",
    "es": "El administrador de la propiedad está revisando esto y se pondrá en contacto.",
}
"""Said only after the guards brought the PM in (a page or the digest went)."""


# --- the brain fell back (lanes/escalate.py, pipeline/fail_open.py) ------------------------------

FOLLOW_UP: Final[Texts] = {
    "en": "I couldn't work out what to do with your message, so I've passed it to the property "
    "manager, who will follow up with you.",
    "es": "No pude entender qué hacer con su mensaje, así que se lo he pasado al administrador "
    "de la propiedad, que le dará seguimiento.",
}
"""To the sender when the brain fell back and the PM was paged (only then)."""
# Pages: read by the on-call PM, in English (the directory has no language for the page's
# reader at the time the page is built; the trail it quotes is in the sender's words anyway).
FALLBACK_PAGE: Final[Texts] = {
    "en": "[INFO] maestro could not handle a message from {who}{about}: {why}. They said: "
    '"{excerpt}". Done: nothing was changed; {told}.',
}
TOLD_FOLLOW_UP: Final[Texts] = {"en": "they are being told a person will follow up"}
FALL_BACK_WHY: Final[dict[str, Texts]] = {
    "transport_error": {"en": "the model could not be reached"},
    "timeout": {"en": "the model timed out"},
    "refused": {"en": "the model refused to answer"},
    "non_json": {"en": "the model's answer was malformed"},
    "schema_failure": {"en": "the model's answer was malformed"},
    "out_of_vocabulary": {
        "en": "the model's answer named actions or work orders it may not use",
    },
    "budget_exhausted": {"en": "the model budget for this conversation is used up"},
    "no_quorum": {"en": "the model's answers did not agree on anything"},
    "no_reading": {"en": "no reading of the message was made"},
}
"""Why the brain gave no usable answer, by the failure kind, for the page."""
FALL_BACK_COUNT: Final[Texts] = {"en": "{words} ({failed} of {k} answers failed)"}
EMERGENCY_PAGE: Final[Texts] = {
    "en": '[{severity}] {reason}{hazard}. From {who}{about}. They said: "{excerpt}"',
}
BREAK_IN_PAGE: Final[Texts] = {
    "en": '[INFO] maestro is going round in circles with {who}: {why}. Latest: "{excerpt}". '
    "Trail: {trail}. Please take over.",
}
FAIL_OPEN_PAGE: Final[Texts] = {
    "en": "[{severity}] maestro could not finish a package from {who}: {why}. Please look at "
    "the conversation (package {package_id}).",
}
"""No words of the sender's (a step's failure may carry them, #11), and nothing about
what was done: fail-open cannot know what the package did before it failed."""


# --- work orders (lanes/create_wo.py, relay_to_open_wo.py, record_rating.py) ---------------------

OPENED: Final[Texts] = {
    "en": "Got it: I've opened {wo_id} for {summary}. We'll be in touch to arrange a visit; "
    "reply here with anything to add.",
    "es": "Recibido: he abierto {wo_id} para {summary}. Le contactaremos para coordinar una "
    "visita; responda aquí si quiere añadir algo.",
}
ADDED: Final[Texts] = {
    "en": "Thanks, I've added that to {label}.",
    "es": "Gracias, lo he añadido a {label}.",
}
ADDED_AND_PASSED: Final[Texts] = {
    "en": "Thanks, I've added that to {label} and passed it on to {whom}.",
    "es": "Gracias, lo he añadido a {label} y se lo he pasado a {whom}.",
}
ADDED_FINDING: Final[Texts] = {
    "en": "Thanks, I've added that to {label}. I'm finding a vendor for it now and will text "
    "you when one accepts.",
    "es": "Gracias, lo he añadido a {label}. Estoy buscando un técnico y le escribiré cuando "
    "uno acepte.",
}
PM_NOTED: Final[Texts] = {
    "en": "Noted on {label}: it is on the work order's record only; the tenant and the vendor "
    "were not sent it.",
}
"""To a PM only (English, as the PM status lines)."""
UPDATE_FROM: Final[Texts] = {
    "en": "Update on {label} from {name}: {note}",
    "es": "Novedad en {label} de {name}: {note}",
}
UPDATE: Final[Texts] = {
    "en": "Update on {label}: {note}",
    "es": "Novedad en {label}: {note}",
}
RATED: Final[Texts] = {
    "en": "Thank you! Your {stars}/5 rating for {label} is recorded.",
    "es": "¡Gracias! Su valoración de {stars}/5 para {label} ha quedado registrada.",
}


# --- answers to offers and approvals (lanes/answer_wait.py) ---------------------------------------

WAIT_DONE: Final[dict[str, Texts]] = {
    "accept": {
        "en": "Noted: you've accepted {wo}. The job details follow in a separate text.",
        "es": "Anotado: ha aceptado {wo}. Los detalles del trabajo le llegan en otro mensaje.",
    },
    "decline": {
        "en": "Noted: you've declined {wo}. Thanks for letting us know.",
        "es": "Anotado: ha rechazado {wo}. Gracias por avisarnos.",
    },
    "approve": {
        "en": "Noted: you've approved {wo}. I'll go on and offer it to a vendor.",
        "es": "Anotado: ha aprobado {wo}. Seguiré y se la ofreceré a un técnico.",
    },
    "refuse": {
        "en": "Noted: you've refused {wo}, so no vendor will be offered it.",
        "es": "Anotado: ha rechazado {wo}, así que no se le ofrecerá a ningún técnico.",
    },
}
WAIT_GONE: Final[dict[str, Texts]] = {
    "offer": {
        "en": "That offer for {wo} is no longer open.",
        "es": "Esa oferta de {wo} ya no está abierta.",
    },
    "approval": {
        "en": "The approval request for {wo} is no longer open.",
        "es": "La solicitud de aprobación de {wo} ya no está abierta.",
    },
}
WAIT_NONE_OPEN: Final[dict[str, Texts]] = {
    "offer": {
        "en": "The offers for {wos} are no longer open.",
        "es": "Las ofertas de {wos} ya no están abiertas.",
    },
    "approval": {
        "en": "The approval requests for {wos} are no longer open.",
        "es": "Las solicitudes de aprobación de {wos} ya no están abiertas.",
    },
}
WAIT_ASK: Final[dict[str, Texts]] = {
    "offer": {
        "en": "Reply 1 to accept {wo}, 2 to decline.",
        "es": "Responda 1 para aceptar {wo}, 2 para rechazar.",
    },
    "approval": {
        "en": "Reply YES to approve {wo}, NO to refuse it.",
        "es": "Responda SÍ para aprobar {wo}, NO para rechazarla.",
    },
}
WAIT_ASK_WHICH: Final[dict[str, Texts]] = {
    "offer": {
        "en": "You have offers open for {wos}. Reply 1 to accept or 2 to decline with the work "
        'order, e.g. "1 {first}".',
        "es": "Tiene ofertas abiertas de {wos}. Responda 1 para aceptar o 2 para rechazar con "
        'la orden, p. ej. "1 {first}".',
    },
    "approval": {
        "en": "You have approvals open for {wos}. Reply YES or NO with the work order, "
        'e.g. "YES {first}".',
        "es": "Tiene aprobaciones abiertas de {wos}. Responda SÍ o NO con la orden, "
        'p. ej. "SÍ {first}".',
    },
}


# --- visits (lanes/schedule_visit.py) and messages to the vendor (lanes/relay_to_vendor.py) -----

VISIT_CONFIRMED: Final[Texts] = {
    "en": "Visit confirmed for {label}: {when}.",
    "es": "Visita confirmada para {label}: {when}.",
}
"""To the tenant and the vendor alike."""
PM_SUGGESTS_VISIT: Final[Texts] = {
    "en": "The property manager suggests a visit for {label}: {availability}. Please confirm a "
    "time with the tenant.",
    "es": "El administrador de la propiedad sugiere una visita para {label}: {availability}. "
    "Por favor, acuerde una hora con el inquilino.",
}
VENDOR_PROPOSES_VISIT: Final[Texts] = {
    "en": "The technician proposes a visit for {label}: {availability}. OK?",
    "es": "El técnico propone una visita para {label}: {availability}. ¿Le parece bien?",
}
ASKED_THE_TENANT: Final[Texts] = {
    "en": "Thanks, I've asked the tenant about {label}: {availability}.",
    "es": "Gracias, le he preguntado al inquilino sobre {label}: {availability}.",
}
AVAILABILITY_NOTED: Final[Texts] = {
    "en": "Thanks, noted your availability for {label}: {availability}.",
    "es": "Gracias, anoté su disponibilidad para {label}: {availability}.",
}
AVAILABILITY_NOTED_FINDING: Final[Texts] = {
    "en": "Thanks, noted your availability for {label}: {availability}. I'm finding a vendor for "
    "it now and will text you when one accepts.",
    "es": "Gracias, anoté su disponibilidad para {label}: {availability}. Estoy buscando un "
    "técnico y le escribiré cuando uno acepte.",
}
TENANT_AVAILABILITY: Final[Texts] = {
    "en": "Tenant availability for {label}: {availability}. Please confirm a time.",
    "es": "Disponibilidad del inquilino para {label}: {availability}. Por favor, confirme una "
    "hora.",
}
# What a PM who set or proposed a visit is told (English, as the PM status lines).
PM_VISIT_CONFIRMED: Final[Texts] = {"en": "Visit confirmed for {label}: {when}; {whom}."}
PM_TOLD: Final[Texts] = {"en": "told the {whom}"}
PM_NOBODY_TOLD: Final[Texts] = {"en": "nobody could be told"}
PM_PASSED_TO_VENDOR: Final[Texts] = {
    "en": "Passed to the vendor for {label}: {availability}. The tenant hears once a time is "
    "confirmed.",
}
PM_NO_VENDOR_TOLD: Final[Texts] = {
    "en": "Noted on {label}: no vendor could be told, so nobody was sent it yet.",
}
MESSAGE_FOR_VENDOR: Final[Texts] = {
    "en": "Message from {who} about {wo_id} ({summary}{unit}): {message}",
    "es": "Mensaje de {who} sobre {wo_id} ({summary}{unit}): {message}",
}
UNIT_SUFFIX: Final[Texts] = {"en": ", unit {unit}", "es": ", unidad {unit}"}


# --- listing, holding and releasing cancels and reschedules (lanes/manage_existing.py) -----------

WO_LINE: Final[Texts] = {"en": "{wo_id} ({summary}{unit})", "es": "{wo_id} ({summary}{unit})"}
"""A work order named in a text (``unit``: ``UNIT_SUFFIX`` or nothing)."""
LISTED_WO: Final[Texts] = {"en": "{line} [{status}]", "es": "{line} [{status}]"}
STATUS_WORD: Final[dict[str, Texts]] = {
    "open": {"en": "open", "es": "abierta"},
    "assigned": {"en": "assigned", "es": "asignada"},
    "scheduled": {"en": "scheduled", "es": "programada"},
    "in_progress": {"en": "in_progress", "es": "en curso"},
    "completion_reported": {"en": "completion_reported", "es": "terminada, por confirmar"},
    "completed": {"en": "completed", "es": "completada"},
    "cancelled": {"en": "cancelled", "es": "cancelada"},
}
NO_OPEN_REQUESTS: Final[Texts] = {
    "en": "You have no open requests.",
    "es": "No tiene solicitudes abiertas.",
}
OPEN_REQUESTS: Final[Texts] = {
    "en": "Your open requests: {items}.",
    "es": "Sus solicitudes abiertas: {items}.",
}
NO_MATCH: Final[Texts] = {
    "en": "I couldn't match that to one of your open requests. {listing} Which one do you mean?",
    "es": "No pude relacionar eso con una de sus solicitudes abiertas. {listing} ¿A cuál se "
    "refiere?",
}
# A PM's listing (English, as the PM status lines).
PM_NO_OPEN: Final[Texts] = {"en": "The properties you manage have no open work orders."}
PM_OPEN: Final[Texts] = {
    "en": 'Open work orders at your properties ({total}): {items}{more}. Text "status of" and an '
    "id for one.",
}
PM_MORE: Final[Texts] = {"en": "; and {more} more not listed here"}

PROPOSE_WHAT: Final[dict[str, Texts]] = {
    "cancel": {"en": "cancel {which}", "es": "cancelar {which}"},
    "complete": {"en": "close {which}", "es": "cerrar {which}"},
}
"""What a YES does, for a held cancel or close (a reschedule's is MOVE_TO / MOVE_NEW_TIME)."""
PROPOSE_ALL: Final[Texts] = {"en": "all of them", "es": "todas"}
PROPOSE_BOTH: Final[Texts] = {"en": "both", "es": "ambas"}
PROPOSE_NUMBERS: Final[Texts] = {"en": "{numbers}", "es": "la {numbers}"}
PROPOSE_NUMBERS_JOIN: Final[Texts] = {"en": " and ", "es": " y la "}
PROPOSE_MANY: Final[Texts] = {
    "en": "Reply YES to {what}: {numbered}. Or reply with a number for just that "
    "one. Anything else keeps them as they are.",
    "es": "Responda SÍ o YES para {what}: {numbered}. O responda con un número "
    "para solo esa. Cualquier otra respuesta las deja como están.",
}
PROPOSE_MANY_BY_CALL: Final[Texts] = {
    "en": "We got a call from this number asking to {what}: {numbered}. Reply YES "
    "to confirm, or a number for just that one; if it wasn't you, ignore this text.",
    "es": "Recibimos una llamada desde este número que pide {what}: {numbered}. "
    "Responda SÍ o YES para confirmar, o un número para solo esa; si no fue usted, ignore este "
    "mensaje.",
}
PROPOSE_ONE: Final[Texts] = {
    "en": "Reply YES to {what}. Anything else keeps it as it is.",
    "es": "Responda SÍ o YES para {what}. Cualquier otra respuesta la deja como está.",
}
PROPOSE_ONE_BY_CALL: Final[Texts] = {
    "en": "We got a call from this number asking to {what}. Reply YES to confirm; "
    "if it wasn't you, ignore this text.",
    "es": "Recibimos una llamada desde este número que pide {what}. Responda SÍ o "
    "YES para confirmar; si no fue usted, ignore este mensaje.",
}
CHANGED_NOTHING_CHANGED: Final[Texts] = {
    "en": "{what} just now, so I haven't changed anything.",
    "es": "Algo acaba de cambiar ({what}), así que no he cambiado nada.",
}
CHANGED_NOTHING_DONE: Final[Texts] = {
    "en": "{what} just now, so I haven't done any of it.",
    "es": "Algo acaba de cambiar ({what}), así que no he hecho nada de eso.",
}
DONE_CANCELLED: Final[Texts] = {
    "en": "Done: I've cancelled {names}.",
    "es": "Listo: he cancelado {names}.",
}
WHEN_SAID: Final[Texts] = {"en": ": {request}", "es": ": {request}"}
CANCELLED_BY: Final[dict[str, Texts]] = {
    "pm": {
        "en": "{line} was cancelled by the property manager.",
        "es": "{line} fue cancelada por el administrador de la propiedad.",
    },
    "tenant": {
        "en": "{line} was cancelled by the tenant.",
        "es": "{line} fue cancelada por el inquilino.",
    },
}
VISIT_ASKED_BY: Final[dict[str, Texts]] = {
    "pm": {
        "en": "The property manager asks for the visit for {line}{when}. Please confirm a time.",
        "es": "El administrador de la propiedad pide la visita de {line}{when}. Por favor, "
        "confirme una hora.",
    },
    "tenant": {
        "en": "The tenant asks for the visit for {line}{when}. Please confirm a time.",
        "es": "El inquilino pide la visita de {line}{when}. Por favor, confirme una hora.",
    },
}
HELD_PROPOSAL: Final[Texts] = {
    "en": "You asked me to {asked}. Reply YES to confirm.",
    "es": "Me pidió {asked}. Responda SÍ o YES para confirmar.",
}
HELD_PROPOSAL_BY_CALL: Final[Texts] = {
    "en": "We got a call from this number asking to {asked}. Reply YES to confirm; if it wasn't "
    "you, ignore this text.",
    "es": "Recibimos una llamada desde este número que pide {asked}. Responda SÍ o YES para "
    "confirmar; si no fue usted, ignore este mensaje.",
}
HELD_JOIN: Final[Texts] = {"en": "; and ", "es": "; y "}
HELD_WHAT: Final[dict[str, Texts]] = {
    "new": {"en": "the new request", "es": "la nueva solicitud"},
    "create": {"en": "open a new request: {summary}", "es": "abrir una nueva solicitud: {summary}"},
    "home": {
        "en": "pass on when you're home for {wo}: {when}",
        "es": "avisar cuándo está usted en casa para {wo}: {when}",
    },
    "propose": {
        "en": "propose a visit for {wo}: {when}",
        "es": "proponer una visita para {wo}: {when}",
    },
    "add": {"en": 'add this to {wo}: "{note}"', "es": 'agregar esto a {wo}: "{note}"'},
    "tell": {
        "en": 'tell the vendor of {wo}: "{said}"',
        "es": 'decirle al técnico de {wo}: "{said}"',
    },
    "rate": {"en": "rate {wo} {stars}/5", "es": "calificar {wo} con {stars}/5"},
    "cancel": {"en": "cancel {names}", "es": "cancelar {names}"},
    "close": {"en": "close {names}", "es": "cerrar {names}"},
    "move": {
        "en": "move the visit for {names}{when}",
        "es": "cambiar la visita de {names}{when}",
    },
    "move_when": {"en": " to {request}", "es": " para {request}"},
}
"""What a held action would do, as the party who asked would say it."""
EMERGENCY_SINCE: Final[Texts] = {
    "en": "Earlier you reported an emergency. Before I arrange anything:",
    "es": "Antes nos avisó de una emergencia. Antes de organizar nada:",
}
"""Said first when a visit's answer comes after an emergency (the visit is held for a YES)."""
RESUME_NOTE: Final[Texts] = {"en": "{wo_id} {note}."}
"""Said first when the work order changed since its question (``note``: the re-validation's
words, English: the re-validation writes them in English)."""


# --- dispatch: offers, approvals, who is coming (domain/dispatch_texts.py composes them) ---------

TRADE: Final[dict[str, Texts]] = {
    "plumbing": {"en": "plumbing", "es": "plomería"},
    "electrical": {"en": "electrical", "es": "electricidad"},
    "hvac": {"en": "heating/cooling", "es": "climatización"},
    "appliance": {"en": "appliance", "es": "electrodomésticos"},
    "pest": {"en": "pest control", "es": "control de plagas"},
    "locksmith": {"en": "locksmith", "es": "cerrajería"},
    "roofing": {"en": "roofing", "es": "techos"},
    "general": {"en": "general repair", "es": "mantenimiento general"},
}
PRIORITY: Final[dict[str, Texts]] = {
    "routine": {"en": "", "es": ""},
    "urgent": {"en": "URGENT ", "es": "URGENTE "},
    "emergency": {"en": "EMERGENCY ", "es": "EMERGENCIA "},
}
HOURS: Final[Texts] = {"en": "{n} hours", "es": "{n} horas"}
ONE_HOUR: Final[Texts] = {"en": "1 hour", "es": "1 hora"}
MINUTES: Final[Texts] = {"en": "{n} minutes", "es": "{n} minutos"}
ONE_MINUTE: Final[Texts] = {"en": "1 minute", "es": "1 minuto"}
SOME_PROPERTY: Final[Texts] = {"en": "one of our properties", "es": "una de nuestras propiedades"}
PLACE_UNIT: Final[Texts] = {"en": "{place}, unit {unit}", "es": "{place}, unidad {unit}"}
OFFER: Final[Texts] = {
    "en": "{name}, new job {wo_id} ({kind}, up to ${nte}){what}. At {place}. Reply 1 to accept "
    "{wo_id}, 2 to decline. The offer is open for {open_for}.",
    "es": "{name}, trabajo nuevo {wo_id} ({kind}, hasta ${nte}){what}. En {place}. Responda 1 "
    "para aceptar {wo_id}, 2 para rechazar. La oferta está abierta {open_for}.",
}
SUMMARY_AFTER_COLON: Final[Texts] = {"en": ": {summary}", "es": ": {summary}"}
SUMMARY_IN_PARENS: Final[Texts] = {"en": " ({summary})", "es": " ({summary})"}
ASSIGNED_TO_VENDOR: Final[Texts] = {
    "en": "{wo_id} is yours. Go to {where}. The tenant says: {said}",
    "es": "{wo_id} es suyo. Dirección: {where}. El inquilino dice: {said}",
}
ASSIGNED_NO_ACCESS: Final[Texts] = {
    "en": "{wo_id} is yours. Go to {where}. The tenant gave no access details.",
    "es": "{wo_id} es suyo. Dirección: {where}. El inquilino no dio detalles de acceso.",
}
VENDOR_COMING: Final[Texts] = {
    "en": "{name} has accepted {wo_id}{what} and is the one coming to fix it. Next is the visit "
    "time: reply here with times that suit you, or if anything changes.",
    "es": "{name} aceptó {wo_id}{what} y es quien vendrá a arreglarlo. Falta acordar la hora de "
    "la visita: responda aquí con los horarios que le convienen, o si algo cambia.",
}
APPROVE_JOB: Final[Texts] = {"en": "{kind} job", "es": "Trabajo de {kind}"}
APPROVE: Final[Texts] = {
    "en": "Approve {wo_id} up to ${nte}? YES/NO. {job}{unit}{what}.",
    "es": "¿Aprueba {wo_id} hasta ${nte}? SÍ/NO. {job}{unit}{what}.",
}
APPROVE_UNIT: Final[Texts] = {"en": ", unit {unit}", "es": ", unidad {unit}"}
WITHDRAWN: Final[Texts] = {
    "en": "{head}; the offer is withdrawn. No need to reply.",
    "es": "La orden {head}; la oferta queda retirada. No hace falta responder.",
}
WITHDRAWN_HEAD: Final[dict[str, Texts]] = {
    "cancelled": {"en": "{wo_id} was cancelled", "es": "{wo_id} se canceló"},
    "completed": {"en": "{wo_id} was completed", "es": "{wo_id} ya se completó"},
    "closed": {"en": "{wo_id} is closed", "es": "{wo_id} ya no está abierta"},
}
WITHDRAWN_SAID: Final[Texts] = {"en": "{wo_id}: {said}"}
"""Why the offer is withdrawn in the dispatch run's own words (English; Spanish says "closed")."""
LAPSED: Final[Texts] = {
    "en": "The offer for {wo_id} has closed: no answer came in time. No need to reply.",
    "es": "La oferta de {wo_id} se cerró: no llegó respuesta a tiempo. No hace falta responder.",
}


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


# --- the hourly digest page (domain/digest.py composes it; pipeline/digest.py sends it) ---
# English only: the digest is a page only the PM reads.

DIGEST_HEAD: Final[Texts] = {
    "en": "[INFO] maestro digest, {day} {start}-{end} UTC: {counts}. Unknown numbers are bound "
    "to no one: add them to the directory or reply to them yourself.",
}
DIGEST_NOTHING: Final[Texts] = {"en": "nothing"}
DIGEST_COUNTS_JOIN: Final[Texts] = {"en": " and "}
DIGEST_UNKNOWN_ONE: Final[Texts] = {"en": "1 number not in the directory"}
DIGEST_UNKNOWN_MANY: Final[Texts] = {"en": "{number} numbers not in the directory"}
DIGEST_HELD_ONE: Final[Texts] = {"en": "1 page held back by the daily cap"}
DIGEST_HELD_MANY: Final[Texts] = {"en": "{number} pages held back by the daily cap"}
DIGEST_LINE: Final[dict[str, Texts]] = {
    "emergency": {"en": "- {time} EMERGENCY from {who}{count}{said}{why}"},
    "break_in": {"en": "- {time} stuck: {who}{count}{said}{why}"},
    "fallback": {"en": "- {time} needs a look: {who}{count}{said}{why}"},
    "unknown_number": {"en": "- {time} {who}{count}{said}{why}"},
}
DIGEST_TEXTS: Final[Texts] = {"en": " ({number} texts)"}
DIGEST_SAID: Final[Texts] = {"en": ': "{excerpt}"'}
DIGEST_WHY: Final[Texts] = {"en": " [{why}]"}
DIGEST_MORE: Final[Texts] = {"en": "and {more} more"}


# --- a WO no vendor took: the page to the PM (domain/dispatch_texts.py composes it) ---
# English only: a page only the PM reads.

# Why there is no vendor is part of the head: a word that changes with the situation is its own
# text (so a test reading the page catches a reason written anywhere else).
NO_VENDOR_PAGE: Final[dict[str, Texts]] = {
    "refused": {
        "en": "{wo_id} needs a vendor by hand: the approval was refused, no vendor was asked. "
        "({about}) {summary}."
    },
    "approval_timed_out": {
        "en": "{wo_id} needs a vendor by hand: no answer to the approval request, no vendor was "
        "asked. ({about}) {summary}."
    },
    "no_trade": {
        "en": "{wo_id} needs a vendor by hand: no {trade} vendor serves the property. "
        "({about}) {summary}."
    },
    "no_trade_after_hours": {
        "en": "{wo_id} needs a vendor by hand: no {trade} vendor serves the property after "
        "hours. ({about}) {summary}."
    },
    "none_accepted": {
        "en": "{wo_id} needs a vendor by hand: no vendor accepted. ({about}) {summary}."
    },
    "none_offered": {
        "en": "{wo_id} needs a vendor by hand: no vendor was offered the job. ({about}) {summary}."
    },
}
NO_VENDOR_NTE: Final[Texts] = {"en": "NTE ${nte}"}
NO_VENDOR_PROPERTY: Final[Texts] = {"en": "property {property}"}
NO_VENDOR_UNIT: Final[Texts] = {"en": "unit {unit}"}
NO_VENDOR_ASKED: Final[Texts] = {"en": "Asked: {asked}."}
NO_VENDOR_ANSWERED: Final[Texts] = {"en": "{name}: {outcome}"}
NO_VENDOR_OUTCOME: Final[dict[str, Texts]] = {
    "open": {"en": "no answer yet"},
    "accepted": {"en": "accepted"},
    "declined": {"en": "declined"},
    "timed_out": {"en": "no answer in time"},
    "withdrawn": {"en": "withdrawn"},
}
NO_VENDOR_TRAIL: Final[Texts] = {"en": "Trail: {trail}"}


# --- what dispatch asks the tenant before judging (domain/gather.py composes it) ---

GATHER_QUESTION: Final[Texts] = {
    "en": "To send the right person for {about}, please reply with: {listed}.",
    "es": "Para enviar a la persona indicada para {about}, responda por favor con: {listed}.",
}
GATHER_ABOUT: Final[Texts] = {"en": "{wo_id} ({summary})", "es": "{wo_id} ({summary})"}
# One item each; several are numbered with OPTION and joined by "; ".
GATHER_ASK: Final[dict[str, Texts]] = {
    "trade": {
        "en": "what needs fixing (a leak, power, heat, an appliance, pests…)",
        "es": "qué hay que arreglar (una fuga, la luz, la calefacción, un aparato, plagas…)",
    },
    "location": {"en": "where in your home it is", "es": "en qué parte de su casa está"},
    "access": {
        "en": "whether they may go in if you're out",
        "es": "si pueden entrar si usted no está",
    },
    "pets": {"en": "any pets", "es": "si tiene mascotas"},
    "availability": {"en": "when they can come", "es": "cuándo pueden venir"},
    "photo": {"en": "a photo of the problem", "es": "una foto del problema"},
}


# --- what fail-open's page says failed, and about whom (pipeline/fail_open.py fills it) ---
# English only: the PM's page. A short reason by the failure's kind, never the raw exception or
# the sender's words (#11).

FAIL_OPEN_WHY: Final[dict[str, Texts]] = {
    "LeaseBusy": {"en": "it waited too long for the conversation's previous package"},
    "LeaseLost": {"en": "it lost the conversation's turn while running"},
    "States.Timeout": {"en": "a step timed out"},
    "States.DataLimitExceeded": {"en": "the package was too large for a step"},
    "States.Runtime": {"en": "the workflow could not read its own state"},
    "TransientError": {"en": "a service kept failing"},
    "SendFailedError": {
        "en": "a text could not be sent (the SMS provider refused it or kept failing)"
    },
}
FAIL_OPEN_WHY_OTHER: Final[Texts] = {"en": "a step failed ({error})"}
FAIL_OPEN_UNKNOWN_SENDER: Final[Texts] = {"en": "an unknown sender"}


# --- whom a page or a digest line is about, and why a page became a digest line ---
# (lanes/escalate.py, pipeline/fail_open.py). English only: the PM's pages and digest.

PAGE_WHO: Final[Texts] = {"en": "{name} ({role}{unit})"}
PAGE_WHO_UNKNOWN: Final[Texts] = {"en": "UNKNOWN number {phone}"}
PAGE_FROM: Final[Texts] = {"en": "{name} ({role}{unit}, {phone})"}
PAGE_FROM_UNKNOWN: Final[Texts] = {
    "en": "UNKNOWN number {phone} (not in the directory; not bound to anyone)"
}
PAGE_CAP_REACHED: Final[Texts] = {"en": "daily page cap reached"}
PAGE_RE: Final[Texts] = {"en": " re {target}"}
PAGE_HAZARD: Final[Texts] = {"en": ": {hazard}"}
BREAK_IN_NO_REASON: Final[Texts] = {"en": "no progress"}
BREAK_IN_NO_TRAIL: Final[Texts] = {"en": "(none)"}
