"""The load run through `maestro serve` over HTTP: many parties, bursts, concurrent senders.

``maestro serve``'s server (the embedded stack behind its loopback HTTP server, offline brain)
runs in this process; the senders run in a process of their own, so their threads never compete
with the server's for one interpreter lock (Twilio's requests do not either). Each party's texts
go out in order from one sender thread, at the wall time their virtual time falls on at
``--speed``; every request is a new connection, as Twilio makes them, signed as Twilio signs
them, and its latency is measured from connecting to the last byte of the answer.

The figures are read back from the stores and the executions once the load has drained, never
from what the server answered (``load.py``'s check, over every inbound message the messages
table holds):

- ``packages``: executions of the package pipeline; ``failed_open``: those that failed open;
- ``lost``: stored messages in no package, plus messages answered 200 that were never stored;
- ``duplicated``: messages in more than one package or buffered twice in their conversation;
- ``order_violations``: a conversation's packages taking its lease out of flush order or
  overlapping, flush claims that do not follow each other seq for seq, and a party's messages
  given seqs out of the order it sent them in;
- ``evidence`` / ``shame``: the watcher's ledger, every domain event read back from its
  surface (a shame row is a claim no read confirmed, or an effect with no event);
- ``webhook_p50_ms`` / ``webhook_p95_ms``: the webhook's latency as the senders saw it;
  ``connection_errors``: requests that got no HTTP answer (a reset, a drop, a timeout);
- ``wo_without_outcome``: WOs the load opened whose dispatch run did not end assigned (the WO
  read back assigned to the vendor who accepted) or with the on-call PM paged, once the server
  has stopped and :func:`carry_dispatch` has carried every run to its end (vendors answering by
  signed SMS, virtual time advanced past every deadline); WOs closed meanwhile are counted
  apart; ``duplicate_offers``: an offer texted twice to one vendor for one WO (the loopback
  Twilio's outbox); ``dispatch``: the WOs by outcome and what the carry took.

Run: .venv/bin/python benchmarks/load_http.py [--parties 100] [--messages 1000] [--senders 25]
     [--speed 30] [--seed 7]   (make bench runs it and merges the ``load`` key into
     bench/results.json, then #17's 200 texts from 50 unknown numbers as ``unknown_senders``;
     --no-write leaves the file alone). Exits 1 unless failed_open, lost,
     duplicated, order_violations, connection_errors, shame, wo_without_outcome and
     duplicate_offers are 0, every request was answered 200, every emergency escalated at once
     and webhook_p95_ms is under 1,000.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import math
import multiprocessing
import random
import re
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from itertools import pairwise
from typing import Any
from urllib.parse import urlencode, urlsplit

VIRTUAL_HOUR = 3600.0
_HOUR = timedelta(hours=1)
P95_LIMIT_MS = 1000.0
CARRY_PATIENCE_SECONDS = 600.0
"""Wall time a step of the dispatch carry may take to settle: scores of work order executions
move at once there (each offer round, each deadline), on one interpreter."""
BUILDING_EVENTS = (
    (900.0, "the power just went out in the whole building"),
    (2400.0, "there's no water coming out of any tap"),
)
"""Moments when many parties text within one virtual minute (a building-wide outage)."""


@dataclass(frozen=True)
class Text:
    at: float  # virtual seconds from the start
    party: int
    phone: str
    body: str
    sid: str


@dataclass
class Sent:
    sid: str
    party: int
    status: int  # 0: no HTTP answer
    latency_ms: float
    error: str = ""


@dataclass
class ReadBack:
    """What the stores say about a load, whatever the senders were told."""

    stored: int
    packages: int
    failed_open: int
    lost: int
    duplicated: int
    package_order_violations: int
    claim_order_violations: int
    message_order_violations: int
    emergencies: int
    emergencies_escalated: int
    evidence: int
    shame: int
    executions: dict[str, int]

    @property
    def order_violations(self) -> int:
        return (
            self.package_order_violations
            + self.claim_order_violations
            + self.message_order_violations
        )


@dataclass
class HttpLoadReport:
    messages: int
    accepted: int
    stored: int
    packages: int
    failed_open: int
    lost: int
    duplicated: int
    order_violations: int
    package_order_violations: int
    claim_order_violations: int
    message_order_violations: int
    connection_errors: int
    refused: int
    emergencies: int
    emergencies_escalated: int
    evidence: int
    shame: int
    webhook_p50_ms: float
    webhook_p95_ms: float
    webhook_max_ms: float
    wall_seconds: float
    send_seconds: float
    drain_seconds: float
    executions: dict[str, int]
    wo_without_outcome: int = -1  # -1: not measured
    duplicate_offers: int = -1
    dispatch: dict[str, Any] = field(default_factory=dict)
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Everything but the latency (a machine's speed) holds."""
        return (
            self.wo_without_outcome == 0
            and self.duplicate_offers == 0
            and self.failed_open == 0
            and self.lost == 0
            and self.duplicated == 0
            and self.order_violations == 0
            and self.connection_errors == 0
            and self.refused == 0
            and self.accepted == self.stored == self.messages
            and self.emergencies == self.emergencies_escalated
            and self.shame == 0
            and self.executions == {"SUCCEEDED": self.packages}
        )


def plan_texts(
    parties: int, messages: int, rng: random.Random, hour: float = VIRTUAL_HOUR
) -> tuple[list[Text], list[tuple[str, Any]]]:
    """``messages`` texts from ``parties`` parties (a fifth of them unknown numbers) over
    ``hour`` virtual seconds, in bursts: each party writes in runs of 1-5 texts seconds apart,
    and twice 60 % of the parties write within the same minute. Sorted by time."""
    from load import EMERGENCIES, LONG_FIRST, ORDINARY, _parties

    from maestro_dev.local.events import twilio_sid

    people = _parties(parties, 0.2, rng)
    by_party: dict[int, list[tuple[float, str]]] = defaultdict(list)
    for moment, text in BUILDING_EVENTS:
        for party in rng.sample(range(parties), k=parties * 3 // 5):
            by_party[party].append((moment + rng.uniform(0, 60), text))
    in_bursts = sum(len(v) for v in by_party.values())
    left = messages - in_bursts
    if left < parties:
        raise ValueError(f"{parties} parties need at least {in_bursts + parties} messages")
    for index in range(parties):
        share = left // parties + (1 if index < left % parties else 0)
        at = rng.uniform(0, hour / 6)
        written = 0
        while written < share:
            run = min(share - written, rng.choice((1, 2, 3, 3, 4, 5)))
            for k in range(run):
                if written == 0 and people[index][1] is not None and index % 2 == 0:
                    body = LONG_FIRST
                elif rng.random() < 0.03:
                    body = rng.choice(EMERGENCIES)
                else:
                    body = rng.choice(ORDINARY)
                by_party[index].append((at, body))
                written += 1
                at += rng.uniform(3, 25) if k < run - 1 else 0
            at += rng.choice((90.0, 200.0, 400.0, 700.0))
            at = at % hour  # a long talker wraps around: still within the hour
    texts: list[Text] = []
    for index, entries in by_party.items():
        phone = people[index][0]
        for k, (at, body) in enumerate(sorted(entries)):
            texts.append(Text(at, index, phone, body, twilio_sid("SM", f"load {index} {k}")))
    return sorted(texts, key=lambda t: t.at), people


def send_all(
    url: str, token: str, texts: list[Text], senders: int, speed: float, start_at: float
) -> list[Sent]:
    """In the senders' process: each party's texts from one thread, in order, on time."""
    from maestro.adapters.webhook_auth import twilio_signature
    from maestro_dev.local.events import sms_params

    parts = urlsplit(url)
    lanes: list[list[Text]] = [[] for _ in range(senders)]
    for text in texts:
        lanes[text.party % senders].append(text)
    results: list[Sent] = []
    lock = threading.Lock()

    def post(text: Text) -> Sent:
        params = sms_params(text.sid, text.phone, text.body)  # of the embedded stack's account
        body = urlencode(list(params.items()))
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": twilio_signature(token, url + "/twilio/sms", params),
        }
        started = time.perf_counter()
        connection = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=60)
        try:
            connection.request("POST", "/twilio/sms", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            status, error = response.status, ""
        except (OSError, http.client.HTTPException) as exc:
            status, error = 0, type(exc).__name__
        finally:
            connection.close()
        return Sent(text.sid, text.party, status, (time.perf_counter() - started) * 1000, error)

    def lane(queue: list[Text]) -> None:
        for text in queue:
            wait = start_at + text.at / speed - time.time()
            if wait > 0:
                time.sleep(wait)
            sent = post(text)
            with lock:
                results.append(sent)

    threads = [threading.Thread(target=lane, args=(queue,)) for queue in lanes if queue]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def run_http_load(
    *,
    parties: int = 100,
    messages: int = 1000,
    senders: int = 25,
    speed: float = 30.0,
    seed_value: int = 7,
    hour: float = VIRTUAL_HOUR,
    drain_timeout: float = 300.0,
) -> HttpLoadReport:
    from maestro_dev.local.stack import LocalStack
    from maestro_dev.local.world import housed, seed, seed_directory

    rng = random.Random(seed_value)
    texts, people = plan_texts(parties, messages, rng, hour)
    began = time.perf_counter()
    with LocalStack(start=datetime.now(UTC), model=None) as stack:
        seed(stack)
        tenants = housed(*(person for _, person in people if person is not None))
        seed_directory(stack, tenants.model_copy(update={"vendors": LOAD_VENDORS}))
        seeded = {wo.wo_id for wo in _work_orders(stack)}  # the world's: no execution
        sent, sending_done, drained = serve_and_send(stack, texts, senders, speed, drain_timeout)
        read = read_back(stack, people, texts, {s.sid for s in sent if s.status == 200})
        dispatch = carry_dispatch(stack, seeded)
        carried = time.perf_counter()
    latencies = sorted(s.latency_ms for s in sent)
    return HttpLoadReport(
        messages=len(texts),
        accepted=sum(1 for s in sent if s.status == 200),
        stored=read.stored,
        packages=read.packages,
        failed_open=read.failed_open,
        lost=read.lost,
        duplicated=read.duplicated,
        order_violations=read.order_violations,
        package_order_violations=read.package_order_violations,
        claim_order_violations=read.claim_order_violations,
        message_order_violations=read.message_order_violations,
        connection_errors=sum(1 for s in sent if s.status == 0),
        refused=sum(1 for s in sent if s.status not in (0, 200)),
        emergencies=read.emergencies,
        emergencies_escalated=read.emergencies_escalated,
        evidence=read.evidence,
        shame=read.shame,
        webhook_p50_ms=round(statistics.median(latencies), 1),
        webhook_p95_ms=round(latencies[math.ceil(0.95 * len(latencies)) - 1], 1),
        webhook_max_ms=round(latencies[-1], 1),
        wall_seconds=round(carried - began, 1),
        send_seconds=round(sending_done - began, 1),
        drain_seconds=round(drained - sending_done, 1),
        executions=read.executions,
        wo_without_outcome=dispatch.pop("wo_without_outcome"),
        duplicate_offers=dispatch.pop("duplicate_offers"),
        dispatch={**dispatch, "seconds": round(carried - drained, 1)},
        setup={
            "parties": parties,
            "unknown_parties": sum(1 for _, party in people if party is None),
            "senders": senders,
            "speed": speed,
            "virtual_seconds": hour,
            "seed": seed_value,
            "errors": sorted({s.error for s in sent if s.error}),
        },
    )


def _load_vendors() -> tuple[Any, ...]:
    """Three vendors for each trade the load's texts produce (a leak, an outlet, a fridge, a
    fan, a lock, the rest general): the first works business hours only, the other two also
    after hours, so a WO opened at any hour has someone to offer it to."""
    from maestro.domain.directory import Trade, Vendor

    trades = (
        Trade.PLUMBING,
        Trade.ELECTRICAL,
        Trade.APPLIANCE,
        Trade.HVAC,
        Trade.LOCKSMITH,
        Trade.GENERAL,
    )
    return tuple(
        Vendor(
            vendor_id=f"v-load-{trade.value}-{rank}",
            name=f"Load {trade.value.title()} {rank}",
            phone=f"+1773555{t:02d}{rank:02d}",
            trades=(trade,),
            rank=rank,
            after_hours=rank > 1,
        )
        for t, trade in enumerate(trades)
        for rank in (1, 2, 3)
    )


LOAD_VENDORS = _load_vendors()
OFFER_REPLIES = ("1", "2", None)
"""A vendor's answer to an offer, picked by the WO and the vendor: accept, decline, or never."""


def _offer_reply(wo_id: str, vendor_id: str) -> str | None:
    digest = hashlib.sha256(f"{wo_id} {vendor_id}".encode()).digest()
    return OFFER_REPLIES[digest[0] % len(OFFER_REPLIES)]


def _work_orders(stack: Any) -> list[Any]:
    from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore

    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    found = [store.get(item["wo_id"]["S"]) for item in _scan(stack, stack.tables["work_orders"])]
    return [wo for wo in found if wo is not None]


def carry_dispatch(stack: Any, seeded: set[str], rounds: int = 400) -> dict[str, Any]:
    """The load has drained and the server's clock is stopped (its ticker ends with the
    server): the WOs the load opened are carried to their outcomes on the stack's own
    ``advance``. Each round, every vendor with an offer open answers one of them by signed SMS
    (naming the WO: one text per package), as :func:`_offer_reply` picks, and the idle window
    passes; when nobody has an answer left to give, virtual time moves past the earliest open
    wait's deadline and an idle window more (nobody answers a gather question or an approval:
    they time out). Then the figures, read from the dispatch store and the WO store (outcomes)
    and from the loopback Twilio's outbox (offers texted twice)."""
    from maestro.domain.models import WorkOrderStatus
    from maestro_dev.local.events import signed_sms_event, twilio_sid

    phones = {v.vendor_id: v.phone for v in LOAD_VENDORS}  # and any the world seeded
    began = stack.clock.now()
    answered: set[tuple[str, str]] = set()
    final: set[str] = set()  # runs that ended: read no more
    texts = 0
    done_rounds = 0
    for done_rounds in range(1, rounds + 1):  # noqa: B007 (reported below)
        created = [w.wo_id for w in _work_orders(stack) if w.wo_id not in seeded | final]
        runs = [r for r in (stack.dispatch.deps.runs.get(w) for w in created) if r is not None]
        final.update(r.wo_id for r in runs if r.final)
        pending: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for run in sorted(runs, key=lambda r: r.wo_id):
            wait = run.waiting
            if wait is None or wait.kind != "offer" or (run.wo_id, wait.party_id) in answered:
                continue
            reply = _offer_reply(run.wo_id, wait.party_id)
            if reply is not None:
                pending[wait.party_id][reply].append(run.wo_id)
        for vendor_id, by_reply in pending.items():
            # One text per vendor per idle window (one package): its acceptances first, naming
            # each WO; its declines in the next round.
            reply, wo_ids = min(by_reply.items())
            if vendor_id not in phones:
                vendor = stack.directory.vendor(vendor_id)
                if vendor is None:
                    raise RuntimeError(f"an offer is open to {vendor_id}, not in the directory")
                phones[vendor_id] = vendor.phone
            answered.update((wo_id, vendor_id) for wo_id in wo_ids)
            texts += 1
            body = f"{reply} for {' '.join(wo_ids)}"
            sid = twilio_sid("SM", f"load offer reply {vendor_id} {body}")
            response = stack.http(
                signed_sms_event(stack.twilio_token, sid, phones[vendor_id], body)
            )
            if response["statusCode"] != 200:
                raise RuntimeError(f"a vendor's reply was answered {response['statusCode']}")
        if pending:
            stack.advance(stack.idle + 1, patience=CARRY_PATIENCE_SECONDS)
            continue
        deadlines = stack.waiting_work_orders()
        if not deadlines:
            break
        # Past the earliest deadline and any within the idle window after it, in one advance
        # (it stops at each on the way): fewer rounds, each offer still answered within minutes.
        earliest = (min(deadlines.values()) - stack.clock.now()).total_seconds()
        stack.advance(max(earliest, 0) + stack.idle + 1, patience=CARRY_PATIENCE_SECONDS)
    stack.wait_for_executions(allow_paused=True)

    outcomes: Counter[str] = Counter()
    for wo in _work_orders(stack):
        if wo.wo_id in seeded:
            continue
        run = stack.dispatch.deps.runs.get(wo.wo_id)
        accepted = [o.vendor_id for o in run.offers if o.outcome == "accepted"] if run else []
        if run is None:
            outcomes["no_run"] += 1
        elif (
            run.step == "assigned"
            and wo.status is WorkOrderStatus.ASSIGNED
            and accepted == [wo.vendor_id]
        ):
            outcomes["assigned"] += 1
        elif run.step == "no_vendor" and "paged" in run.outcome:
            outcomes["paged"] += 1
        else:
            outcomes[run.step] += 1  # closed, refused_by_pm, or still under way
    offers: Counter[tuple[str, str]] = Counter()
    for message in stack.outbox():  # an offer's text, to whomever it went
        if found := _OFFER.search(message.body):
            offers[(message.to, found.group(1))] += 1
    return {
        "wo_created": sum(outcomes.values()),
        "wo_by_outcome": dict(sorted(outcomes.items())),
        "wo_without_outcome": sum(
            n for outcome, n in outcomes.items() if outcome not in ("assigned", "paged", "closed")
        ),
        "wo_closed": outcomes["closed"],
        "offers_texted": sum(offers.values()),
        "duplicate_offers": sum(n - 1 for n in offers.values() if n > 1),
        "vendor_replies": texts,
        "rounds": done_rounds,
        "vendors": len(LOAD_VENDORS),
        "virtual_hours_carried": round((stack.clock.now() - began).total_seconds() / 3600, 1),
    }


_OFFER = re.compile(r"Reply 1 to accept (WO-[0-9A-F]+)")


UNKNOWN_EMERGENCIES = (
    "smoke is pouring out of the laundry room",
    "strong gas smell by the mailboxes",
    "sparks are shooting out of the breaker box",
    "water is gushing from the light fixture in the stairwell",
)
UNKNOWN_ORDINARY = (
    "hey is anyone there",
    "who do I talk to about the parking spots?",
    "this is the new tenant in 12, my key fob doesn't work",
    "hello??",
    "can someone call me back about the lease",
)
UNKNOWN_ESSAY = (
    "URGENT NOTICE TO MANAGEMENT: "
    + "please forward this message to every resident and call the number below at once. " * 7
)


@dataclass
class UnknownSendersReport:
    """What numbers nobody knows cost, read from the surfaces: the model's own record of its
    calls, Twilio's outbox (the loopback), the stores and the ledger."""

    numbers: int
    messages: int
    accepted: int
    stored: int
    packages: int
    failed_open: int
    lost: int
    duplicated: int
    model_calls: int
    pages: int
    emergency_pages: int
    digest_pages: int
    other_pages: int
    texts_to_unknown: int
    texts_to_unknown_not_advice: int
    advice_repeats_within_fold: int
    folded: int
    emergency_numbers: int
    emergencies: int
    emergencies_escalated: int
    shame: int
    executions: dict[str, int]
    wall_seconds: float

    @property
    def ok(self) -> bool:
        """#17's acceptance: no model call, a page per emergency number plus the hour's digest,
        nothing lost or failed open, and nothing but the safety advice texted to the numbers."""
        return (
            self.messages == self.accepted == self.stored
            and self.executions == {"SUCCEEDED": self.packages}
            and (self.failed_open, self.lost, self.duplicated, self.shame) == (0, 0, 0, 0)
            and self.model_calls == 0
            and self.pages <= self.numbers + 1
            and self.emergency_pages == self.emergency_numbers
            and self.digest_pages == 1
            and self.other_pages == 0
            and self.emergencies == self.emergencies_escalated
            and self.texts_to_unknown == self.emergency_numbers
            and self.texts_to_unknown_not_advice == self.advice_repeats_within_fold == 0
        )


def plan_unknown_texts(
    numbers: int, messages: int, rng: random.Random, span: float = 1500.0
) -> list[Text]:
    """``messages`` texts from ``numbers`` numbers nobody knows, within ``span`` virtual seconds
    (one digest hour): a fifth of the numbers report an emergency, one to three times minutes
    apart, a fifth
    send long texts, the rest short ones, each number a run of texts seconds to minutes apart."""
    from maestro_dev.local.events import twilio_sid

    per_number = [
        messages // numbers + (1 if n < messages % numbers else 0) for n in range(numbers)
    ]
    texts: list[Text] = []
    for n, count in enumerate(per_number):
        phone = f"+1415557{n:04d}"
        bodies: list[str] = []
        if n % 5 == 0:
            bodies += [rng.choice(UNKNOWN_EMERGENCIES)] * rng.randint(1, min(3, count))
        while len(bodies) < count:
            bodies.append(UNKNOWN_ESSAY if n % 5 == 1 else rng.choice(UNKNOWN_ORDINARY))
        at = rng.uniform(0, span / 2)
        for k, body in enumerate(bodies):
            texts.append(Text(at, n, phone, body, twilio_sid("SM", f"unknown-load-{n}-{k}")))
            # An emergency's repeats minutes apart (each its own package, folded into the
            # first page); others in bursts too.
            gaps = (300.0, 450.0) if n % 5 == 0 else (4.0, 15.0, 60.0, 200.0)
            at = min(span, at + rng.choice(gaps))
    return sorted(texts, key=lambda t: t.at)


def run_unknown_senders_load(
    *,
    numbers: int = 50,
    messages: int = 200,
    senders: int = 10,
    speed: float = 150.0,
    seed_value: int = 5,
    drain_timeout: float = 300.0,
) -> UnknownSendersReport:
    """#17's acceptance: texts from numbers nobody knows, through `maestro serve` over HTTP,
    with a model plugged in that answers anything and counts every call; drained past the hour,
    so the hour's digest page has gone too."""
    from maestro.domain.safety import safety_floor
    from maestro.lanes.escalate import HELD_BACK, PAGED
    from maestro_dev.local.stack import ON_CALL_PM, LocalStack
    from maestro_dev.local.world import seed
    from maestro_dev.scripted import ScriptedModel

    rng = random.Random(seed_value)
    texts = plan_unknown_texts(numbers, messages, rng)
    people: list[tuple[str, Any]] = [
        (phone, None) for phone in dict.fromkeys(t.phone for t in texts)
    ]
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    model = ScriptedModel(
        responder=lambda r: triage if r.purpose in ("probe", "precheck") else None
    )
    began = time.perf_counter()
    with LocalStack(model=model) as stack:
        seed(stack)
        first_hour = stack.clock.now()

        def digested(stack: Any) -> bool:  # the hour of the texts is over and its page went
            return bool(stack.clock.now() >= first_hour + _HOUR and stack.digest.deps.digest.due(
                stack.clock.now(), 24) == [])  # fmt: skip

        sent, _, drained = serve_and_send(
            stack, texts, senders, speed, drain_timeout, until=digested
        )
        read = read_back(stack, people, texts, {s.sid for s in sent if s.status == 200})
        folded = _folded(stack)
        outbox = stack.outbox()
        unknown = {phone for phone, _ in people}
        page_bodies = [m.body for m in outbox if m.to == ON_CALL_PM]
        to_unknown = [m for m in outbox if m.to in unknown]
        advice = [m for m in to_unknown if m.body.endswith((PAGED, HELD_BACK))]
        repeats = 0
        by_number: dict[str, list[datetime]] = defaultdict(list)
        for message in advice:
            created = stack.twilio.message(message.sid) or {}
            by_number[message.to].append(parsedate_to_datetime(str(created["date_created"])))
        for times in by_number.values():
            times.sort()
            repeats += sum(1 for a, b in pairwise(times) if (b - a).total_seconds() < 1800)
    return UnknownSendersReport(
        numbers=len(people),
        messages=len(texts),
        accepted=sum(1 for s in sent if s.status == 200),
        stored=read.stored,
        packages=read.packages,
        failed_open=read.failed_open,
        lost=read.lost,
        duplicated=read.duplicated,
        model_calls=len(model.calls),
        pages=len(page_bodies),
        emergency_pages=sum(1 for p in page_bodies if p.startswith("[EMERGENCY]")),
        digest_pages=sum(1 for p in page_bodies if p.startswith("[INFO] maestro digest")),
        other_pages=sum(
            1 for p in page_bodies if not p.startswith(("[EMERGENCY]", "[INFO] maestro digest"))
        ),
        texts_to_unknown=len(to_unknown),
        texts_to_unknown_not_advice=len(to_unknown) - len(advice),
        advice_repeats_within_fold=repeats,
        folded=folded,
        emergency_numbers=len({t.phone for t in texts if safety_floor(t.body) is not None}),
        emergencies=read.emergencies,
        emergencies_escalated=read.emergencies_escalated,
        shame=read.shame,
        executions=read.executions,
        wall_seconds=round(drained - began, 1),
    )


def serve_and_send(
    stack: Any,
    texts: list[Text],
    senders: int,
    speed: float,
    drain_timeout: float,
    *,
    until: Any = None,
) -> tuple[list[Sent], float, float]:
    """``maestro serve``'s server on ``stack`` (in this process, its clock at ``speed``), the
    texts sent to it over HTTP from a process of their own, then drained; ``until`` (a function
    of the stack) is waited for too, the clock still running. What was sent, and when sending
    and draining ended (perf counter)."""
    from maestro_dev.local.server import LocalServer

    server = LocalServer(stack, 0, speed)  # `maestro serve --port 0 --speed <speed>`
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            start_at = time.time() + 3.0  # the senders' process is up by then
            sent = pool.submit(
                send_all, server.url, stack.twilio_token, texts, senders, speed, start_at
            ).result()
        sending_done = time.perf_counter()
        _drain(stack, {t.phone for t in texts}, drain_timeout, until)
        drained = time.perf_counter()
    finally:
        server.httpd.shutdown()
        serving.join(timeout=60)
    return sent, sending_done, drained


def _folded(stack: Any) -> int:
    """Actions recorded on the decision log as folded into an earlier emergency page."""
    from maestro.adapters.dynamodb_decisions import DynamoDecisionLog

    log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
    folded = 0
    for execution in stack.executions():
        described = stack.sfn.describe_execution(executionArn=execution["executionArn"])
        package_id = json.loads(described["input"])["package_id"]
        folded += sum(1 for o in log.outcomes_for(package_id) if o.folded_into is not None)
    return folded


def _drain(stack: Any, phones: set[str], timeout: float, until: Any = None) -> None:
    """Until every stored message is in a flush claim, every claim started, no execution runs
    and the watcher has read every claim (the server's clock keeps moving: the last idle
    windows pass at its speed, and its tick polls the watcher's queue)."""
    from maestro.domain.models import conversation_id_for

    deadline = time.monotonic() + timeout
    conversations = [conversation_id_for(phone) for phone in phones]
    while time.monotonic() < deadline:
        metas = [stack.buffer.meta(c) for c in conversations]
        flushed = all(m is None or m.flushed_through == m.seq for m in metas)
        if (
            flushed
            and not any(stack.buffer.unstarted_claims(c) for c in conversations)
            and not stack.running_executions()
            and (until is None or until(stack))
            and _queued(stack, stack.events_url) == 0
        ):
            return
        time.sleep(0.5)
    raise TimeoutError("the load did not drain: messages still unflushed or executions running")


def read_back(
    stack: Any, people: list[tuple[str, Any]], texts: list[Text], answered_200: set[str]
) -> ReadBack:
    """The figures from the stores: every inbound message the messages table holds must be in
    exactly one package (``load.py``'s check over the executions), every message answered 200
    must be stored, each conversation buffered once per message, its claims seq for seq, and
    each party's messages in the order it sent them."""
    from load import _check

    stored = {
        item["message_id"]["S"]: item
        for item in _scan(stack, stack.tables["messages"])
        if item.get("direction", {}).get("S") == "inbound"
    }
    checked = _check(stack, people, dict.fromkeys(stored, ("", "")))
    buffered: Counter[str] = Counter()
    claims: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for item in _scan(stack, stack.tables["conversations"]):
        name = item["item"]["S"]
        if name.startswith("msg#"):
            buffered[item["message"]["M"]["message_id"]["S"]] += 1
        elif name.startswith("flush#"):
            claims[item["conversation_id"]["S"]].append(
                (
                    int(item["flush_number"]["N"]),
                    int(item["after_seq"]["N"]),
                    int(item["through_seq"]["N"]),
                )
            )
    twice = {sid for sid, count in buffered.items() if count > 1}
    rows = stack.ledger_rows()
    verdicts = Counter(row.verdict for row in rows)
    in_a_package_twice = checked.duplicated
    return ReadBack(
        stored=len(stored),
        packages=checked.packages,
        failed_open=checked.failed_open,
        lost=checked.lost + len(answered_200 - set(stored)),
        duplicated=in_a_package_twice + len(twice),
        package_order_violations=checked.order_violations,
        claim_order_violations=sum(_claim_gaps(c) for c in claims.values()),
        message_order_violations=_message_order_violations(stack, texts, set(stored)),
        emergencies=checked.emergencies,
        emergencies_escalated=checked.emergencies_escalated,
        evidence=verdicts["evidence"],
        shame=sum(row.standing_shame for row in rows),  # a late event's resolved row: history
        executions=checked.executions,
    )


def _queued(stack: Any, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = stack.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)
    return sum(int(attributes["Attributes"][name]) for name in names)


def _scan(stack: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in stack.ddb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(page["Items"])
    return items


def _claim_gaps(claims: list[tuple[int, int, int]]) -> int:
    """One conversation's claims (flush number, after seq, through seq): numbered 1, 2, 3…, each
    starting where the one before ended."""
    violations = 0
    expected_after = 0
    for position, (number, after, through) in enumerate(sorted(claims), start=1):
        if number != position or after != expected_after or through <= after:
            violations += 1
        expected_after = through
    return violations


def _message_order_violations(stack: Any, texts: list[Text], stored: set[str]) -> int:
    """Per party: its stored texts must have been given seqs in the order it sent them."""
    violations = 0
    by_party: dict[int, list[Text]] = defaultdict(list)
    for text in texts:
        if text.sid in stored:
            by_party[text.party].append(text)
    for sent in by_party.values():
        seqs = [m.seq for t in sent if (m := stack.buffer.get_message(t.sid)) is not None]
        violations += sum(1 for a, b in pairwise(seqs) if b <= a)
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, default=100)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--senders", type=int, default=25)
    parser.add_argument("--speed", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="leave bench/results.json alone")
    args = parser.parse_args(argv)
    report = run_http_load(
        parties=args.parties,
        messages=args.messages,
        senders=args.senders,
        speed=args.speed,
        seed_value=args.seed,
    )
    figures = asdict(report)
    print(json.dumps(figures, indent=2))
    # #17's acceptance at full size (`make test` runs a smaller one): 200 texts from 50 numbers
    # nobody knows cost no model call and a page per emergency number plus one digest.
    unknown = run_unknown_senders_load(numbers=50, messages=200, senders=10, speed=150.0)
    unknown_figures = {**asdict(unknown), "ok": unknown.ok}
    print(json.dumps(unknown_figures, indent=2))
    if not args.no_write:
        from _results import merge_results

        merge_results({"load": figures, "unknown_senders": unknown_figures})
    return 0 if report.ok and unknown.ok and report.webhook_p95_ms < P95_LIMIT_MS else 1


if __name__ == "__main__":
    sys.exit(main())
