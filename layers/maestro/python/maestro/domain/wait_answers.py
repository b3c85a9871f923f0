"""Reading a reply to a WO execution's wait: a vendor's to their open offer, a PM's to an approval.

An open offer or approval is a pending item of the party it waits for (``maestro.domain.
dispatch``): their next text is read against it here, deterministically, before holds,
questions and the brain (resolve). What decides is the shape of the reply, not a list of
sentences:

- a bare answer: "1" / "2" for an offer (the offer text asks for them), a yes or no word
  ("yep", "sí", "nope") alone or with courtesies ("yes please", "no thanks");
- otherwise the answer's words and phrases anywhere in it, each yes-word read with the
  negation before it ("can't take it", "no puedo ir", "don't approve" are a no); idioms whose
  "no" is not a refusal ("no problem", "sin problema") are not read as one;
- a yes and an independent no together ("yes but can't till Friday") are unclear: asked again;
- a reply that names another work order, reports finished work ("all done at 3B"), asks a
  question or says something longer without any answer in it is something else ("other"): it
  goes on to the holds, the questions and the brain, and the wait stays open;
- a short reply with no answer in it ("hmm", "ok") is unclear: asked again, never guessed.

Which wait it answers: the work orders it names among the open ones; else the only one open;
else "all"/"both" answers every open one; several open and none named → asked which.

Pure: the lease step reads the open waits (:class:`OpenWait`, compact, never the task token),
the answer_wait lane re-reads the run for the token.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field

from maestro.domain.actions import AnswerWait, AnswerWaitParams
from maestro.domain.answers import tokens
from maestro.domain.common import AwareDatetime, Frozen, truncate
from maestro.domain.dispatch import DispatchRun, WaitKind
from maestro.domain.models import Channel, Package, Party
from maestro.domain.pending import Resolution, ResolvedAction
from maestro.domain.wo_refs import wo_ref_spans

__all__ = [
    "AnsweredKind",
    "OpenWait",
    "WaitReply",
    "open_waits",
    "read_wait_reply",
    "resolve_waits",
]

AnsweredKind = Literal["offer", "approval"]
"""The waits a party answers by text (a gather wait is completed by the lane that binds the
tenant's next package to the WO)."""
ReplyKind = Literal["accept", "decline", "approve", "refuse", "unclear", "other"]


class OpenWait(Frozen):
    """One open wait of the sender, as the lease snapshot carries it (no task token)."""

    wo_id: str
    kind: WaitKind
    offer_index: int | None = None
    started_at: AwareDatetime
    deadline: AwareDatetime

    @classmethod
    def of(cls, run: DispatchRun) -> OpenWait | None:
        wait = run.waiting
        if wait is None:
            return None
        return cls(
            wo_id=run.wo_id,
            kind=wait.kind,
            offer_index=wait.offer_index,
            started_at=wait.started_at,
            deadline=wait.deadline,
        )


def open_waits(runs: Sequence[DispatchRun], party_id: str) -> tuple[OpenWait, ...]:
    """The open waits of ``party_id`` among ``runs``, by WO id."""
    found = [
        wait
        for run in runs
        if run.waiting is not None
        and run.waiting.party_id == party_id
        and (wait := OpenWait.of(run)) is not None
    ]
    return tuple(sorted(found, key=lambda w: w.wo_id))


class WaitReply(Frozen):
    answer: ReplyKind
    wo_ids: tuple[str, ...] = Field(default=(), description="The open waits it answers")
    which: bool = Field(default=False, description="Several open and none named: ask which")
    named: bool = Field(default=False, description="It names the work orders it answers")
    why: str = ""


def _vocab(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _phrases(*phrases: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p.split()) for p in phrases)


# Courtesies and glue: a reply made of an answer word and these is a bare answer.
_FILLERS = _vocab(
    "the a an i im it its this that one job offer work order please pls plz thanks thank you "
    "thx ty sorry hi hey hello yo sir maam man boss and so well just then for to me my ok okay "
    "k kk alright sounds good cool great hola gracias por favor el la lo es eso trabajo bueno"
)
# Negations: a yes-word right after one of these (within three words) is a no.
_NEGATORS = _vocab(
    "no not never dont cant cannot wont unable isnt arent doesnt didnt couldnt wouldnt nunca ni"
)
_NEGATION_WINDOW = 3
# "No" that is not a refusal: read as a plain yes.
_IDIOMS = _phrases(
    "no problem",
    "no prob",
    "no probs",
    "no worries",
    "not a problem",
    "sin problema",
    "no hay problema",
    "no te preocupes",
)
_ALL = _vocab("all both everything each todos todas ambos ambas")
# Finished work is a report, not an answer to a new offer or an approval.
_FINISHED = _vocab(
    "done finished fixed completed complete repaired replaced installed terminado terminada "
    "termine arreglado arreglada reparado reparada instalado instalada"
)


class _Vocabulary(Frozen):
    yes_words: frozenset[str]
    yes_phrases: tuple[tuple[str, ...], ...]
    no_words: frozenset[str]
    no_phrases: tuple[tuple[str, ...], ...]
    yes: ReplyKind
    no: ReplyKind
    numbers: bool = Field(description="1 answers yes, 2 answers no (the offer text says so)")


_OFFER = _Vocabulary(
    yes_words=_vocab(
        "yes y ye yeah yea yep yup ya yah yas sure accept accepted accepting accepts take "
        "taking grab grabbing omw coming available absolutely definitely certainly deal "
        "si claro acepto aceptado aceptada aceptamos vale dale voy vamos disponible puedo tomo"
    ),
    yes_phrases=_phrases(
        "i can",
        "we can",
        "can do",
        "on my way",
        "on the way",
        "count me in",
        "im in",
        "will do",
        "be there",
        "heading over",
        "heading there",
        "got it",
        "i got this",
        "do it",
        "en camino",
        "voy para alla",
        "lo tomo",
        "me lo quedo",
        "cuenta conmigo",
        "de acuerdo",
        "lo hago",
    ),
    no_words=_vocab(
        "no n nope nah naw decline declined declining declines pass passing busy unavailable "
        "booked swamped slammed full cant cannot unable wont negative ocupado ocupada imposible "
        "paso rechazo rechazado lleno llena"
    ),
    no_phrases=_phrases(
        "not available",
        "not today",
        "not me",
        "too far",
        "too busy",
        "not this time",
        "out of town",
        "tengo otro",
        "no alcanzo",
    ),
    yes="accept",
    no="decline",
    numbers=True,
)
_APPROVAL = _Vocabulary(
    yes_words=_vocab(
        "yes y yeah yea yep yup ya sure approve approved approves approving authorize "
        "authorized authorise authorised fine proceed affirmative si aprobado aprobada apruebo "
        "autorizo autorizado autorizada adelante dale vale claro hazlo"
    ),
    yes_phrases=_phrases(
        "go ahead", "go for it", "do it", "green light", "send someone", "send it", "de acuerdo"
    ),
    no_words=_vocab(
        "no n nope nah deny denied denies refuse refused reject rejected decline declined "
        "negative rechazo rechazado rechazada niego denegado denegada"
    ),
    no_phrases=_phrases(
        "hold off",
        "too expensive",
        "too much",
        "too pricey",
        "too high",
        "not now",
        "no way",
        "muy caro",
        "demasiado caro",
        "demasiado",
    ),
    yes="approve",
    no="refuse",
    numbers=False,
)
_SHORT = 3
"""Words (besides courtesies): a reply this short with no answer in it is an unclear attempt."""


def _find(words: Sequence[str], phrase: Sequence[str]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == tuple(phrase)]


def _without_idioms(words: list[str]) -> list[str]:
    for idiom in _IDIOMS:
        while starts := _find(words, idiom):
            i = starts[0]
            words = [*words[:i], "_fine", *words[i + len(idiom) :]]
    return words


def _negated(words: Sequence[str], at: int) -> bool:
    return any(w in _NEGATORS for w in words[max(0, at - _NEGATION_WINDOW) : at])


def _hits(words: Sequence[str], vocab: _Vocabulary) -> tuple[bool, bool]:
    """(a yes anywhere, a no anywhere); a negated yes-word or phrase counts as a no."""
    yes = no = False
    yes_spots = [(i, 1) for i, w in enumerate(words) if w in vocab.yes_words or w == "_fine"]
    yes_spots += [(i, len(p)) for p in vocab.yes_phrases for i in _find(words, p)]
    covered: set[int] = set()
    for start, length in yes_spots:
        if _negated(words, start):
            no = True
            covered.update(range(max(0, start - _NEGATION_WINDOW), start + length))
        else:
            yes = True
    for i, word in enumerate(words):
        if word in vocab.no_words and i not in covered:
            no = True
    if any(_find(words, p) for p in vocab.no_phrases):
        no = True
    return yes, no


def read_wait_reply(text: str, kind: AnsweredKind, open_wo_ids: Sequence[str]) -> WaitReply:
    """How ``text`` answers the sender's open waits of ``kind`` (the WOs ``open_wo_ids``)."""
    vocab = _OFFER if kind == "offer" else _APPROVAL
    open_ids = tuple(dict.fromkeys(i.upper() for i in open_wo_ids))
    spans = wo_ref_spans(text)
    named = tuple(dict.fromkeys(r.wo_id for r in spans if r.wo_id in open_ids))
    foreign = tuple(r.wo_id for r in spans if not r.bare and r.wo_id not in open_ids)
    if foreign:
        return WaitReply(answer="other", why=f"names another work order ({foreign[0]})")
    stripped = text
    for ref in sorted(
        (r for r in spans if r.wo_id in open_ids), key=lambda r: r.start, reverse=True
    ):
        stripped = stripped[: ref.start] + " " + stripped[ref.end :]
    words = _without_idioms(tokens(stripped))
    core = [w for w in words if w not in _FILLERS]

    answer: ReplyKind
    why: str
    if vocab.numbers and core in (["1"], ["2"]):
        answer, why = (vocab.yes, "1") if core == ["1"] else (vocab.no, "2")
    else:
        yes, no = _hits(words, vocab)
        bare = bool(core) and all(
            w in vocab.yes_words or w in vocab.no_words or w in _ALL or w == "_fine" for w in core
        )
        if set(core) & _FINISHED and not bare:
            return WaitReply(answer="other", why="reports finished work")
        if yes and not no:
            answer, why = vocab.yes, "a yes"
        elif no and not yes:
            answer, why = vocab.no, "a no"
        elif yes and no:
            answer, why = "unclear", "both a yes and a no"
        elif "?" in text and len(core) >= 2:
            return WaitReply(answer="other", why="a question, with no answer in it")
        elif len(core) <= _SHORT:
            answer, why = "unclear", "no answer in it"
        else:
            return WaitReply(answer="other", why="about something else")

    if answer == "unclear":
        which = len(open_ids) > 1 and not named
        return WaitReply(answer=answer, wo_ids=named, which=which, named=bool(named), why=why)
    if named:
        return WaitReply(
            answer=answer, wo_ids=named, named=True, why=f"{why}, naming {', '.join(named)}"
        )
    if len(open_ids) == 1:
        return WaitReply(answer=answer, wo_ids=open_ids, why=f"{why}, to the one open")
    if set(core) & _ALL:
        return WaitReply(answer=answer, wo_ids=open_ids, why=f"{why}, to all of them")
    return WaitReply(answer="unclear", which=True, why=f"{why}, but to which of several?")


_MAPPED: dict[ReplyKind, Literal["yes", "no", "unclear"]] = {
    "accept": "yes",
    "approve": "yes",
    "decline": "no",
    "refuse": "no",
    "unclear": "unclear",
}
_BY_CALL = {
    "en": "A call can't answer this; only a text back can.",
    "es": "Una llamada no puede responder a esto; solo una respuesta por texto puede.",
}


def resolve_waits(
    package: Package,
    sender: Party | None,
    waits: Sequence[OpenWait],
    holds_asked_at: Sequence[datetime] = (),
) -> Resolution | None:
    """The package read as the answer to the sender's open offers or approvals: the resolution
    whose queue answers them (``answer_wait``), or None when it is something else (or the
    sender has none open): then holds, questions and the brain read it as before.

    ``holds_asked_at``: when the sender's live held confirmations were asked ("Reply YES to
    cancel WO-…"). A bare yes or no that names no work order answers the newest thing asked:
    when a hold was asked after every open wait of the kind, it is the hold's (a PM's YES to a
    cancel never approves a job instead); naming the WO ("YES WO-301") still answers the wait."""
    if sender is None:
        return None
    text = " ".join(package.text.split())
    for kind in ("offer", "approval"):
        mine = [w for w in waits if w.kind == kind]
        if not mine:
            continue
        by_wo = {w.wo_id: w for w in mine}
        reply = read_wait_reply(text, kind, list(by_wo))
        if reply.answer == "other":
            continue
        newest = max(w.started_at for w in mine)
        if not reply.named and any(at > newest for at in holds_asked_at):
            continue  # a bare answer, and a hold was asked since: it answers the hold
        say = ""
        answer = reply.answer
        if answer != "unclear" and not package.answers_on(Channel.SMS):
            # Asked by text: a call's caller ID proves nothing, so it answers nothing; the
            # number's owner is asked again by text.
            answer, say = "unclear", _BY_CALL["es" if sender.language == "es" else "en"]
        actions: tuple[ResolvedAction, ...]
        if answer == "unclear":
            single = reply.wo_ids[0] if len(reply.wo_ids) == 1 else None
            if single is None and len(by_wo) == 1:
                single = next(iter(by_wo))
            actions = (
                ResolvedAction(
                    action=_answer(kind, "unclear", single, by_wo, tuple(sorted(by_wo))),
                    say=say,
                ),
            )
        else:
            actions = tuple(
                ResolvedAction(action=_answer(kind, answer, wo_id, by_wo, ()))
                for wo_id in reply.wo_ids
            )
        return Resolution(
            route="answered",
            kind="wait",
            answer=_MAPPED[answer],
            actions=actions,
            reason=truncate(
                f"{kind} of {', '.join(sorted(by_wo))} open: "
                f"'{truncate(text, 60)}' reads as {answer} ({reply.why})"
                + (" [by a call: asked again by text]" if say else ""),
                500,
            ),
        )
    return None


def _answer(
    kind: AnsweredKind,
    answer: Literal["accept", "decline", "approve", "refuse", "unclear"],
    wo_id: str | None,
    by_wo: dict[str, OpenWait],
    candidates: tuple[str, ...],
) -> AnswerWait:
    wait = by_wo.get(wo_id) if wo_id is not None else None
    return AnswerWait(
        target_wo_id=wo_id,
        confidence=1.0,
        why=f"the answer to an open {kind}, read deterministically",
        params=AnswerWaitParams(
            kind=kind,
            answer=answer,
            offer_index=wait.offer_index if wait is not None and kind == "offer" else None,
            candidates=candidates if wo_id is None else (),
        ),
    )
