"""`maestro directory import|export|show` on a running `maestro serve` and on a "deployed"
stack (moto): a bad folder writes nothing, a good one applies once, re-imports as a no-op,
round-trips through export, and binds its tenants' texts (#18)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from embedded import new_executions, run_cli, serving, to_phone

from maestro.domain.directory import ALL_PROPERTIES, Directory, OnCall, PersonRole
from maestro.domain.models import PartyRole
from maestro.ingest.webhooks import MAX_REQUEST_BYTES
from maestro.stack_outputs import (
    OUTPUT_DIRECTORY_TABLE,
    OUTPUT_GATES_TABLE,
    OUTPUT_PARTIES_TABLE,
    OUTPUT_STATE_MACHINE,
)
from maestro_dev.directory.files import read_folder, write_folder
from maestro_dev.directory.synthetic import synthetic_directory
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.operator_access import TOKEN_HEADER
from maestro_dev.local.server import LocalServer
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import MARIA

if TYPE_CHECKING:
    from conftest import AwsEnv

pytestmark = pytest.mark.integration


def _small() -> Directory:
    return synthetic_directory(properties=2, tenants=30, vendors=8, pms=3, shifts_per_property=4)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalServer]:
    with serving(
        monkeypatch, tmp_path, speed=0.0, step=False
    ) as srv:  # time stands still: a test moves it
        yield srv


_cli = run_cli


def _export(server: LocalServer, folder: Path) -> dict[str, str]:
    code, said = _cli("directory", "export", str(folder), "--url", server.url)
    assert code == 0, said
    return {path.name: path.read_text() for path in sorted(folder.glob("*.csv"))}


BAD = {
    "properties.csv": """property_id,name,address,timezone,manager_email
oak,Oak Terrace,1 Oak Rd,America/Denver,a@b.c
pine,Pine Lofts,2 Pine Rd,Mars/Olympus,
oak,Oak again,,UTC,
""",
    "units.csv": """unit_id,property_id,label
oak-101,oak,101
elm-1,elm,1
""",
    "people.csv": """person_id,role,name,phones,unit_id,property_ids,language,sms_consent
t-ines,tenant,Ines,+13035550111,oak-101,,es,yes
t-bo,tenant,Bo,303-555-0113,oak-101,,,
t-cy,tenant,Cy,+13035550114,oak-999,,,
t-di,tenant,Di,+13035550111,oak-101,,,
pm-kai,pm,Kai,+13035550190,,oak,,
""",
    "vendors.csv": """vendor_id,name,phone,trades,property_ids,rank,after_hours
v-sol,Sol Electric,+13035550150,electrical;carpentry,oak,2,yes
v-any,Any Handy,+13035550190,general,*,,
""",
    "on_call.csv": """property_id,person_id,starts_at,ends_at
oak,pm-kai,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
oak,pm-kai,2026-12-01T19:00:00-07:00,2026-12-02T08:00:00-07:00
oak,pm-kai,2026-12-02T08:00:00,2026-12-02T20:00:00-07:00
""",
}
BAD_ROWS = {
    ("properties.csv", 3, "timezone"),
    ("properties.csv", 4, "property_id"),
    ("units.csv", 3, "property_id"),
    ("people.csv", 3, "phones"),
    ("people.csv", 4, "unit_id"),
    ("people.csv", 5, "phones"),
    ("vendors.csv", 2, "trades"),
    ("vendors.csv", 3, "phone"),
    ("on_call.csv", 3, "starts_at"),
    ("on_call.csv", 4, "starts_at"),
}


def test_a_folder_with_one_error_of_each_kind_writes_nothing(
    server: LocalServer, tmp_path: Path
) -> None:
    before = _export(server, tmp_path / "before")
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, text in BAD.items():
        (bad / name).write_text(text)
    code, said = _cli("directory", "import", str(bad), "--url", server.url)
    assert code == 1
    errors = [line for line in said.splitlines() if line.startswith("error: ")]
    for file, row, column in BAD_ROWS:
        assert any(f"{file} row {row}, column {column}:" in line for line in errors), (
            f"{file} row {row} {column} not listed in:\n{said}"
        )
    assert len(errors) == len(BAD_ROWS)
    assert "warning: properties.csv row 1, column manager_email: unknown column" in said
    assert f"{len(BAD_ROWS)} errors: nothing was written" in said
    assert _export(server, tmp_path / "after") == before
    assert server.stack.parties.by_phone("+13035550111") is None

    # A missing column is an error too, and still nothing is written.
    (bad / "units.csv").write_text("unit_id,label\noak-101,101\n")
    code, said = _cli("directory", "import", str(bad), "--url", server.url)
    assert code == 1
    assert "error: units.csv row 1, column property_id: missing column" in said
    assert _export(server, tmp_path / "after-2") == before


def test_import_applies_once_reimports_as_no_change_and_round_trips(
    server: LocalServer, tmp_path: Path
) -> None:
    directory = _small()
    folder = tmp_path / "pms-export"
    write_folder(directory, folder)
    tenant = next(p for p in directory.people if p.role is PersonRole.TENANT)

    code, said = _cli("directory", "import", str(folder), "--dry-run", "--url", server.url)
    assert code == 0, said
    assert "dry run, nothing written: would make" in said
    assert server.stack.parties.by_phone(tenant.phones[0]) is None
    assert server.stack.directory.person(tenant.person_id) is None

    code, said = _cli("directory", "import", str(folder), "--url", server.url)
    assert code == 0, said
    entities = sum(
        len(getattr(directory, kind))
        for kind in ("properties", "units", "people", "vendors", "on_call")
    )
    assert f"{entities} changes: {entities} added, 0 changed" in said
    bound = server.stack.parties.by_phone(tenant.phones[0])
    assert bound is not None
    assert (bound.party_id, bound.role) == (tenant.person_id, PartyRole.TENANT)
    assert server.stack.directory.person(tenant.person_id) == tenant

    code, said = _cli("directory", "import", str(folder), "--url", server.url)
    assert code == 0, said
    assert "0 changes: the directory already holds these files" in said

    # Export → import: the exported folder is the stored directory (the world's and the
    # import's), and importing it changes nothing.
    exported = tmp_path / "exported"
    _export(server, exported)
    read_back = read_folder(exported)
    assert read_back.errors == ()
    assert read_back.directory is not None
    stored = server.stack.directory.snapshot()
    assert read_back.directory == stored
    assert set(directory.people) <= set(stored.people)
    code, said = _cli("directory", "import", str(exported), "--url", server.url)
    assert code == 0, said
    assert said.splitlines()[-1].startswith("0 changes")

    code, said = _cli("directory", "show", tenant.phones[0], "--url", server.url)
    assert code == 0, said
    assert said.startswith("person ")
    assert json.loads(said.split(" ", 1)[1])["person_id"] == tenant.person_id
    code, said = _cli("directory", "show", "+19999999999", "--url", server.url)
    assert code == 1


def test_absent_rows_are_kept_unless_pruned_and_a_dropped_phone_is_unbound(
    server: LocalServer, tmp_path: Path
) -> None:
    directory = _small()
    folder = tmp_path / "pms-export"
    write_folder(directory, folder)
    assert _cli("directory", "import", str(folder), "--url", server.url)[0] == 0
    two_phones = next(p for p in directory.people if len(p.phones) == 2)
    leaving = next(p for p in directory.people if len(p.phones) == 1 and p.role == "tenant")
    people = tuple(
        p.model_copy(update={"phones": p.phones[:1]}) if p == two_phones else p
        for p in directory.people
        if p != leaving
    )
    write_folder(directory.model_copy(update={"people": people}), folder)

    code, said = _cli("directory", "import", str(folder), "--url", server.url)
    assert code == 0, said
    assert f"change people.csv {two_phones.person_id}" in said.replace("  ", " ")
    assert server.stack.parties.by_phone(two_phones.phones[1]) is None  # no one's any more
    assert server.stack.parties.by_phone(two_phones.phones[0]) is not None
    assert server.stack.parties.by_phone(leaving.phones[0]) is not None  # kept: no --prune
    assert server.stack.parties.by_phone(MARIA.phone) is not None  # the world's Maria, kept

    code, said = _cli(
        "directory", "import", str(folder), "--prune", "--dry-run", "--url", server.url
    )
    assert code == 0, said
    assert "--prune: would remove" in said
    assert f"people.csv {leaving.person_id}" in said
    assert server.stack.parties.by_phone(leaving.phones[0]) is not None

    # The same prune with a change in it: what goes is still listed before what changes.
    renamed = directory.vendors[0].model_copy(update={"name": "Renamed Vendor"})
    vendors = (renamed, *directory.vendors[1:])
    write_folder(directory.model_copy(update={"people": people, "vendors": vendors}), folder)
    code, said = _cli("directory", "import", str(folder), "--prune", "--url", server.url)
    assert f"change vendors.csv {renamed.vendor_id}" in said.replace("  ", " ")
    assert code == 0, said
    lines = said.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("--prune: removed"))
    assert lines[header + 1].startswith("absent ")  # what goes is listed first
    assert any(leaving.person_id in line for line in lines[header + 1 :] if "absent" in line)
    assert server.stack.parties.by_phone(leaving.phones[0]) is None
    assert server.stack.directory.person(leaving.person_id) is None
    assert server.stack.parties.by_phone(MARIA.phone) is None  # not in the files: pruned too
    assert server.stack.directory.snapshot().people == tuple(
        sorted(people, key=lambda p: p.person_id)
    )


def _text(stack: LocalStack, phone: str, words: str) -> None:
    event = signed_sms_event(stack.twilio_token, twilio_sid("SM", words), phone, words)
    assert stack.http(event)["statusCode"] == 200


def _digests(stack: LocalStack) -> list[str]:
    return [m.body for m in stack.outbox() if m.body.startswith("[INFO] maestro digest")]


def test_after_an_import_a_tenants_text_binds_and_their_gas_report_pages_their_on_call_pm(
    server: LocalServer, tmp_path: Path
) -> None:
    """Issue #18's "After the import ...", through `maestro directory import` on `maestro serve`:
    before it, a tenant's number is a stranger (the unknown-number path: no brain, a digest
    line); after it, their text is theirs (the brain reads it, no page, no digest line), and a gas
    report from them pages the PM on call for their property at that hour, not the property's
    default PM, not the all-properties on-call PM, not the account's fallback number."""
    stack = server.stack
    now = stack.clock.now()
    # Property prop-00's 12-hour shifts alternate pm-000 (also its default PM: of its own PMs,
    # the lowest id) and pm-002; starting 13 hours ago, pm-002's shift is the one under way.
    # pm-001 (of prop-01) holds an all-properties shift now too: a property's own comes first.
    synthetic = synthetic_directory(
        properties=2, tenants=12, vendors=4, pms=3, start=now - timedelta(hours=13)
    )
    everywhere = OnCall(
        property_id=ALL_PROPERTIES,
        person_id="pm-001",
        starts_at=now - timedelta(hours=2),
        ends_at=now + timedelta(hours=4),
    )
    directory = synthetic.model_copy(update={"on_call": (*synthetic.on_call, everywhere)})
    folder = tmp_path / "pms-export"
    write_folder(directory, folder)
    people = {p.person_id: p for p in directory.people}
    tenant = people["tenant-00002"]
    phone = tenant.phones[0]
    unit = next(u for u in directory.units if u.unit_id == tenant.unit_id)
    assert unit.property_id == "prop-00"
    assert tenant.sms_consent
    on_call, default, everyone, fallback = (
        people["pm-002"].phones[0],
        people["pm-000"].phones[0],
        people["pm-001"].phones[0],
        ON_CALL_PM,
    )

    _text(stack, phone, "the dryer in my unit squeals every time it spins")
    (before,) = new_executions(stack, stack.idle + 1)
    assert "unknown sender" in json.loads(before["output"])["brain"]["skipped"]
    stack.advance(3600)  # the hour's digest goes out: it has the stranger's line
    (digest,) = _digests(stack)
    assert "1 number not in the directory" in digest
    assert phone in digest

    code, said = _cli("directory", "import", str(folder), "--url", server.url)
    assert code == 0, said
    bound = stack.parties.by_phone(phone)
    assert bound is not None
    assert (bound.party_id, bound.role) == (tenant.person_id, PartyRole.TENANT)

    _text(stack, phone, "also the dryer door latch came off in my hand")
    (after,) = new_executions(stack, stack.idle + 1)
    assert after["status"] == "SUCCEEDED"
    brain = json.loads(after["output"]).get("brain") or {}
    assert "unknown sender" not in str(brain.get("skipped") or "")
    assert brain.get("samples")
    stack.advance(3600)
    assert _digests(stack) == [digest]  # no new line: the number is someone now
    assert [m.body for m in stack.outbox() if m.to != phone and phone in m.body] == [digest]

    _text(stack, phone, "smells like rotten eggs by the stove, the gas is hissing")
    stack.advance(60)  # the safety floor expedites it
    (page,) = to_phone(stack, on_call)
    assert page.startswith("[EMERGENCY]")
    assert phone in page
    assert to_phone(stack, default) == []
    assert to_phone(stack, everyone) == []
    assert [body for body in to_phone(stack, fallback) if body.startswith("[EMERGENCY]")] == []


def test_import_and_export_on_a_deployed_stack(aws: AwsEnv, tmp_path: Path) -> None:
    aws.client("cloudformation").create_stack(
        StackName="maestro-dev",
        TemplateBody=json.dumps(
            {
                "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {
                    OUTPUT_STATE_MACHINE: {"Value": "arn:aws:states:us-east-1:1:stateMachine:x"},
                    OUTPUT_GATES_TABLE: {"Value": aws.table_names["gates"]},
                    OUTPUT_DIRECTORY_TABLE: {"Value": aws.table_names["directory"]},
                    OUTPUT_PARTIES_TABLE: {"Value": aws.table_names["parties"]},
                },
            }
        ),
    )
    directory = _small()
    folder = tmp_path / "pms-export"
    write_folder(directory, folder)
    code, said = _cli("directory", "import", str(folder), "--env", "dev")
    assert code == 0, said
    code, said = _cli("directory", "import", str(folder), "--env", "dev")
    assert said.splitlines()[-1].startswith("0 changes"), said
    code, said = _cli("directory", "export", str(tmp_path / "out"), "--env", "dev")
    assert code == 0, said
    read_back = read_folder(tmp_path / "out").directory
    assert isinstance(read_back, Directory)
    assert set(read_back.people) == set(directory.people)
    assert set(read_back.on_call) == set(directory.on_call)


def test_only_the_operator_may_send_a_directory_larger_than_a_webhook(
    server: LocalServer,
) -> None:
    """The import route reads a whole directory, past the webhook limit, for the run's token
    alone: without it, a body that large is refused as too large before it is held."""
    body = b"{" + b" " * MAX_REQUEST_BYTES + b"}"
    request = urllib.request.Request(
        server.url + "/local/directory/import", data=body, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413
    request.add_header(TOKEN_HEADER, server.token)
    with pytest.raises(urllib.error.HTTPError) as unread:
        urllib.request.urlopen(request, timeout=30)
    assert unread.value.code == 400  # read whole, then refused as no directory
    assert "directory" in unread.value.read().decode()


def test_a_clash_with_a_kept_entry_writes_nothing(server: LocalServer, tmp_path: Path) -> None:
    """The world's Maria is stored and absent from the files; a new tenant with her phone would
    bind one phone to two people: refused, nothing written; with --prune (Maria goes) applied."""
    directory = _small()
    newcomer = next(p for p in directory.people if p.role is PersonRole.TENANT)
    newcomer = newcomer.model_copy(update={"phones": (MARIA.phone,)})
    people = (newcomer, *(p for p in directory.people if p.person_id != newcomer.person_id))
    folder = tmp_path / "pms-export"
    write_folder(directory.model_copy(update={"people": people}), folder)
    before = _export(server, tmp_path / "before")

    code, said = _cli("directory", "import", str(folder), "--url", server.url)
    assert code == 1
    assert f"phone {MARIA.phone} is also person {MARIA.party_id}'s" in said
    assert "nothing was written" in said
    assert _export(server, tmp_path / "after") == before

    code, said = _cli("directory", "import", str(folder), "--prune", "--url", server.url)
    assert code == 0, said
    bound = server.stack.parties.by_phone(MARIA.phone)
    assert bound is not None
    assert bound.party_id == newcomer.person_id
