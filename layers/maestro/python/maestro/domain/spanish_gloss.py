"""A Spanish message's maintenance words in English, word for word: enough for the offline
brain's English rules to read a Spanish problem ("la secadora no funciona" → "the dryer is not
working") and for the answer reader to meet a Spanish pick ("la del baño") with the English
lines of the candidates ("bathroom sink clogged").

A gloss, not a translation: phrases first (a symptom said in several words), then single words,
then anything else left as it is. Only what the offline rules need (the things, rooms and
symptoms of a home, the glue words a clause is cut at) is glossed; a Spanish message the gloss
cannot make a problem of still reads as none, and the assistant says so. The safety floor
reads Spanish on its own (``maestro.domain.safety_spanish``): nothing here decides a hazard.

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata

from maestro.domain.language import detect_language

__all__ = ["english_gloss", "gloss_word"]


def _fold(text: str) -> str:
    """Lower case, accents dropped ("baño" → "bano"); ñ kept apart by NFKD as n + tilde."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# Symptoms said in several words, folded. Longer first where one holds another.
_PHRASES: tuple[tuple[str, str], ...] = (
    (r"no (?:sale|hay|tengo|tenemos) agua caliente", "there is no hot water"),
    (r"deja?o de funcionar", "stopped working"),
    (r"ya no funcionan?", "stopped working"),
    (r"no funcionan?", "is not working"),
    (r"no sirven?", "is not working"),
    (r"no (?:prende|prenden|enciende|encienden)", "won't turn on"),
    (r"no (?:apaga|apagan)", "won't turn off"),
    (r"no (?:cierra|cierran)", "won't close"),
    (r"no (?:abre|abren)", "won't open"),
    (r"no (?:enfria|enfrian)", "is not cooling"),
    (r"no (?:calienta|calientan)", "is not heating"),
    (r"no (?:drena|desagua|baja)", "won't drain"),
    (r"no (?:jala|descarga|le baja)", "won't flush"),
    (r"no (?:gira|giran)", "is not spinning"),
    (r"(?:se|esta|estan) (?:rompio|rompieron|quebro|quebraron)", "is broken"),
    (r"(?:se|esta|estan) (?:cayo|cayeron)", "fell off"),
    (r"(?:se|esta|estan) (?:safo|zafo|solto|soltaron)", "came loose"),
    (r"hace (?:un |mucho )?ruido", "is making a noise"),
    (r"huele (?:mal|feo|raro)|mal olor", "smells"),
    (r"(?:se|esta|estan) (?:tapo|tapado|tapada|atasco|atascado|atascada)", "is clogged"),
    (r"aire acondicionado|el aire|minisplit", "the AC"),
    (r"agua caliente", "hot water"),
    (r"taza del bano|taza", "toilet"),
    (r"sigue|siguen|todavia|aun", "still"),
)
_PHRASE = [(re.compile(rf"(?<![\w]){p}(?![\w])"), english) for p, english in _PHRASES]

# Single words, folded.
_WORDS: dict[str, str] = {
    # things
    "secadora": "dryer", "lavadora": "washer", "lavaplatos": "dishwasher",
    "lavavajillas": "dishwasher", "refrigerador": "fridge", "refri": "fridge",
    "nevera": "fridge", "heladera": "fridge", "congelador": "freezer", "estufa": "stove",
    "horno": "oven", "microondas": "microwave", "inodoro": "toilet", "excusado": "toilet",
    "escusado": "toilet", "lavabo": "sink", "lavamanos": "sink", "fregadero": "sink",
    "tarja": "sink", "grifo": "faucet", "regadera": "shower", "ducha": "shower",
    "tina": "tub", "banera": "tub", "tuberia": "pipe", "tubo": "pipe", "desague": "drain",
    "drenaje": "drain", "calentador": "water heater", "boiler": "water heater",
    "calefaccion": "heat", "calefactor": "heater", "termostato": "thermostat",
    "radiador": "radiator", "enchufe": "outlet", "enchufes": "outlets", "contacto": "outlet",
    "tomacorriente": "outlet", "luz": "light", "luces": "lights", "foco": "bulb",
    "focos": "bulbs", "interruptor": "switch", "apagador": "switch", "puerta": "door",
    "puertas": "doors", "cerradura": "lock", "chapa": "lock", "ventana": "window",
    "ventanas": "windows", "techo": "ceiling", "pared": "wall", "paredes": "walls",
    "piso": "floor", "escalera": "stairs", "escaleras": "stairs", "manija": "handle",
    "perilla": "knob", "bisagra": "hinge", "persiana": "blinds", "persianas": "blinds",
    "cortina": "curtain", "ventilador": "fan", "extractor": "vent", "gabinete": "cabinet",
    "cajon": "drawer", "timbre": "doorbell", "barandal": "railing", "barandilla": "railing",
    # rooms
    "cocina": "kitchen", "bano": "bathroom", "recamara": "bedroom", "cuarto": "bedroom",
    "habitacion": "bedroom", "dormitorio": "bedroom", "sala": "living room",
    "sotano": "basement", "garaje": "garage", "cochera": "garage", "pasillo": "hallway",
    "lavanderia": "laundry room", "balcon": "balcony", "patio": "patio",
    # symptoms
    "roto": "broken", "rota": "broken", "rotos": "broken", "rotas": "broken",
    "descompuesto": "broken", "descompuesta": "broken", "tapado": "clogged",
    "tapada": "clogged", "atascado": "clogged", "atascada": "clogged",
    "obstruido": "clogged", "gotea": "is dripping", "gotean": "are dripping",
    "goteando": "dripping", "gotera": "leak", "fuga": "leak", "atorado": "stuck",
    "atorada": "stuck", "trabado": "stuck", "trabada": "stuck", "suelto": "loose",
    "suelta": "loose", "flojo": "loose", "floja": "loose", "parpadea": "flickers",
    "parpadean": "flicker", "moho": "mold", "cucarachas": "roaches", "ratones": "mice",
    "ratas": "rats", "chinches": "bed bugs", "hormigas": "ants", "agrietado": "cracked",
    "agrietada": "cracked", "rajado": "cracked", "rajada": "cracked",
    # people and the tenant's own things, which the rules know are no part of the home
    "vecino": "neighbor", "vecina": "neighbor", "vecinos": "neighbors", "perro": "dog",
    "gato": "cat", "hijo": "son", "hija": "daughter", "ninos": "kids", "esposo": "husband",
    "esposa": "wife", "tecnico": "technician", "plomero": "plumber",
    "electricista": "electrician", "casero": "landlord", "dueno": "landlord",
    "administrador": "manager", "celular": "phone", "telefono": "phone", "carro": "car",
    "coche": "car", "paquete": "package", "renta": "rent", "contrato": "lease",
    # glue: determiners, links, the verb "to be" (the rules cut and read on them)
    "el": "the", "la": "the", "los": "the", "las": "the", "mi": "my", "mis": "my",
    "nuestro": "our", "nuestra": "our", "del": "of the", "de": "of", "y": "and",
    "tambien": "also", "pero": "but", "ahora": "now", "esta": "is", "estan": "are",
    "es": "is", "son": "are", "en": "in", "ya": "already", "muy": "very",
}  # fmt: skip
_TOKEN = re.compile(r"[a-z]+|[^a-z]+")


def gloss_word(word: str) -> str:
    """One folded word's English, or the word itself ("bano" → "bathroom")."""
    return _WORDS.get(word, word)


def english_gloss(text: str) -> str | None:
    """``text`` glossed word for word when it is Spanish (``detect_language``), else None."""
    if detect_language(text) != "es":
        return None
    folded = _fold(text)
    for pattern, english in _PHRASE:
        folded = pattern.sub(english, folded)
    return "".join(gloss_word(t) for t in _TOKEN.findall(folded))
