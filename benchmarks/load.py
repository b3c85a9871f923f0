"""A load run on the embedded stack: many senders, long first texts, unknown numbers and
emergencies mixed in, every message through the signed webhook, the buffer, the flusher and the
real ASL. What it checks is read back from the stores and the executions, not from returns:

- failed open: packages that ended in fail-open (must be 0);
- emergencies: every message with a safety phrase is in a package that escalated at once, and
  the PM got an [EMERGENCY] page for it;
- lost / duplicated: every accepted message is in exactly one package;
- order: per conversation, packages took the lease in flush order and never overlapped.

Run: .venv/bin/python benchmarks/load.py [--senders 50] [--messages 1000] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from itertools import pairwise

from maestro.adapters.ddb import query_all
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.domain.directory import Person, PersonRole
from maestro.domain.safety import safety_floor
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import housed, seed, seed_directory

LONG_FIRST = (
    "Hi, the water heater in our unit has been making a loud banging noise since last night "
    "and now there is water pooling on the floor around it, the closet floor is soaked and I'm "
    "worried it will spread into the hallway carpet by tonight, can someone come"
)
ORDINARY = (
    "the kitchen sink is leaking",
    "any update?",
    "fine to come in, 2 onward",
    "thanks!",
    "the bedroom outlet doesn't work",
    "tomorrow morning works",
    "the fridge stopped working",
    "ok",
    "is someone coming today?",
    "the bathroom fan is really loud",
    "5 stars",
    "the front door lock is jammed",
)
EMERGENCIES = (
    "I smell gas in the hallway!!",
    "there's smoke coming from the outlet",
    "water is pouring through the ceiling, it's flooding",
    "the carbon monoxide alarm is going off",
)


@dataclass
class LoadReport:
    senders: int
    messages_sent: int
    messages_accepted: int
    packages: int
    executions: dict[str, int]
    failed_open: int
    emergencies: int
    emergencies_escalated: int
    emergency_pages: int
    lost: int
    duplicated: int
    order_violations: int
    digest_pages: int
    digest_pages_within_an_hour: int
    unknown_numbers: int
    wall_seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.failed_open == 0
            and self.emergencies == self.emergencies_escalated
            and self.lost == 0
            and self.duplicated == 0
            and self.order_violations == 0
            and self.digest_pages_within_an_hour == 0
            and set(self.executions) == {"SUCCEEDED"}
        )


def _parties(
    count: int, unknown_share: float, rng: random.Random
) -> list[tuple[str, Person | None]]:
    """Each sender's phone and, unless unknown, the tenant the directory holds for it."""
    senders: list[tuple[str, Person | None]] = []
    for n in range(count):
        phone = f"+1415556{n:04d}"
        if rng.random() < unknown_share:
            senders.append((phone, None))
        else:
            senders.append(
                (
                    phone,
                    Person(
                        person_id=f"tenant-{n:03d}",
                        role=PersonRole.TENANT,
                        name=f"Tenant {n}",
                        phones=(phone,),
                        unit_id=f"{n % 9 + 1}{'ABCD'[n % 4]}",
                    ),
                )
            )
    return senders


def run_load(
    *, senders: int = 50, messages: int = 1000, seed_value: int = 7, unknown_share: float = 0.2
) -> LoadReport:
    rng = random.Random(seed_value)
    started = time.perf_counter()
    people = _parties(senders, unknown_share, rng)
    # Each sender's texts, in order, with gaps: a burst (same package) or a pause (a new one).
    plan: list[tuple[float, str, str]] = []
    per_sender = messages // senders
    for index, (phone, party) in enumerate(people):
        at = rng.uniform(0, 600)
        for k in range(per_sender + (1 if index < messages % senders else 0)):
            if k == 0 and party is not None and index % 2 == 0:
                text = LONG_FIRST
            elif rng.random() < 0.06:
                text = rng.choice(EMERGENCIES)
            else:
                text = rng.choice(ORDINARY)
            plan.append((at, phone, text))
            at += rng.choice((20.0, 45.0, 400.0, 900.0, 3600.0))
    plan.sort(key=lambda p: p[0])

    with LocalStack() as stack:
        seed(stack)
        seed_directory(stack, housed(*(person for _, person in people if person is not None)))
        start = stack.clock.now().timestamp()
        accepted: dict[str, tuple[str, str]] = {}  # sid → (phone, text)
        for n, (at, phone, text) in enumerate(plan):
            wait = start + at - stack.clock.now().timestamp()
            if wait > 0:
                stack.advance(wait)
            sid = twilio_sid("SM", f"load {n}")
            response = stack.http(signed_sms_event(stack.twilio_token, sid, phone, text))
            if response["statusCode"] == 200:
                accepted[sid] = (phone, text)
        stack.advance(stack.max_wait + stack.idle + 1)
        stack.wait_for_executions(timeout=120)
        report = _check(stack, people, accepted)
    report.messages_sent = len(plan)
    report.wall_seconds = time.perf_counter() - started
    return report


def _check(
    stack: LocalStack, people: list[tuple[str, Person | None]], accepted: dict[str, tuple[str, str]]
) -> LoadReport:
    log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
    executions = stack.executions()
    statuses = Counter(e["status"] for e in executions)
    in_packages: Counter[str] = Counter()
    by_conversation: dict[str, list[tuple[int, str]]] = defaultdict(list)
    failed_open = 0
    emergencies = escalated = 0
    for execution in executions:
        described = stack.sfn.describe_execution(executionArn=execution["executionArn"])
        given = json.loads(described["input"])
        ref = given["package_ref"]
        package_id = given["package_id"]
        by_conversation[given["conversation_id"]].append((given["flush_number"], package_id))
        items = query_all(
            stack.ddb,
            TableName=stack.tables["conversations"],
            KeyConditionExpression="conversation_id = :c AND #i BETWEEN :lo AND :hi",
            ExpressionAttributeNames={"#i": "item"},
            ExpressionAttributeValues={
                ":c": {"S": ref["conversation_id"]},
                ":lo": {"S": f"msg#{ref['after_seq'] + 1:010d}"},
                ":hi": {"S": f"msg#{ref['through_seq']:010d}"},
            },
            ConsistentRead=True,
        )
        bodies = []
        for item in items:
            message = item["message"]["M"]
            in_packages[message["message_id"]["S"]] += 1
            bodies.append(message["body"]["S"])
        decisions = log.for_package(package_id)
        if any(d.fallback and d.stage == "fallback" for d in decisions):
            failed_open += 1
        if any(safety_floor(body) for body in bodies):
            emergencies += 1
            if any(d.lane == "escalate" and d.stage == "precheck" for d in decisions):
                escalated += 1
    lost = sum(1 for sid in accepted if in_packages[sid] == 0)
    duplicated = sum(1 for count in in_packages.values() if count > 1)
    order_violations = _order_violations(stack, by_conversation)
    outbox = stack.outbox()
    pages = [m.body for m in outbox if m.to == ON_CALL_PM]
    # Unknown numbers are lines of the hourly digest, never a page each: one digest an hour.
    digests = sorted(
        parsedate_to_datetime(str((stack.twilio.message(m.sid) or {})["date_created"]))
        for m in outbox
        if m.to == ON_CALL_PM and m.body.startswith("[INFO] maestro digest")
    )
    unknown = [phone for phone, party in people if party is None]
    return LoadReport(
        senders=len(people),
        messages_sent=0,
        messages_accepted=len(accepted),
        packages=len(executions),
        executions=dict(statuses),
        failed_open=failed_open,
        emergencies=emergencies,
        emergencies_escalated=escalated,
        emergency_pages=sum(1 for p in pages if p.startswith("[EMERGENCY]")),
        lost=lost,
        duplicated=duplicated,
        order_violations=order_violations,
        digest_pages=len(digests),
        digest_pages_within_an_hour=sum(
            1 for a, b in pairwise(digests) if (b - a).total_seconds() < 3600
        ),
        unknown_numbers=len(unknown),
        wall_seconds=0.0,
    )


def _order_violations(stack: LocalStack, by_conversation: dict[str, list[tuple[int, str]]]) -> int:
    """Per conversation: the lease taken in flush order, and each package's persist before the
    next package's lease (no overlap)."""
    first_ok: dict[tuple[str, str], int] = {}
    for position, (step, package_id, outcome) in enumerate(stack.invocations):
        if outcome == "ok" and step in ("lease", "persist"):
            first_ok.setdefault((step, package_id), position)
    violations = 0
    for packages in by_conversation.values():
        ordered = [p for _, p in sorted(packages)]
        leases = [first_ok.get(("lease", p)) for p in ordered]
        persists = [first_ok.get(("persist", p)) for p in ordered]
        for n in range(len(ordered) - 1):
            this_done, next_lease = persists[n], leases[n + 1]
            if this_done is None or next_lease is None or next_lease < this_done:
                violations += 1
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    report = run_load(senders=args.senders, messages=args.messages, seed_value=args.seed)
    print(
        f"load: {report.messages_accepted}/{report.messages_sent} messages from "
        f"{report.senders} senders ({report.unknown_numbers} unknown) → {report.packages} "
        f"packages {report.executions}; failed open {report.failed_open}; emergencies "
        f"{report.emergencies_escalated}/{report.emergencies} escalated at once "
        f"({report.emergency_pages} [EMERGENCY] pages); lost {report.lost}; duplicated "
        f"{report.duplicated}; order violations {report.order_violations}; digest pages "
        f"{report.digest_pages} ({report.digest_pages_within_an_hour} within an hour of "
        f"another); {report.wall_seconds:.1f} s wall "
        f"({report.packages / report.wall_seconds:.1f} packages/s)"
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
