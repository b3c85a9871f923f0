"""The directory import's pure core: CSV rows → a directory or every error; the plan (#18)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from maestro.domain.directory import Directory, PersonRole, Trade
from maestro.domain.directory_import import (
    CsvTable,
    check_directory,
    directory_tables,
    plan_import,
    validate_tables,
)
from maestro_dev.directory.files import read_folder, write_folder
from maestro_dev.directory.synthetic import synthetic_directory
from maestro_dev.eval_harness.scenario import WORLD_PROPERTY, PartySpec, World

GOOD = {
    "properties.csv": """property_id,name,address,timezone
oak,Oak Terrace,1 Oak Rd,America/Denver
pine,Pine Lofts,2 Pine Rd,Europe/Madrid
""",
    "units.csv": """unit_id,property_id,label
oak-101,oak,101
pine-7,pine,7
""",
    "people.csv": """person_id,role,name,phones,unit_id,property_ids,language,sms_consent
t-ines,tenant,Ines,+13035550111;+13035550112,oak-101,,es,yes
t-bo,tenant,Bo,+13035550113,pine-7,,,
pm-kai,pm,Kai,+13035550190,,oak;pine,,no
""",
    "vendors.csv": """vendor_id,name,phone,trades,property_ids,rank,after_hours
v-sol,Sol Electric,+13035550150,electrical;hvac,oak,2,yes
v-any,Any Handy,+13035550151,general,*,,
""",
    "on_call.csv": """property_id,person_id,starts_at,ends_at
oak,pm-kai,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
*,pm-kai,2026-12-01T20:00:00-07:00,2026-12-02T08:00:00-07:00
""",
}


def _tables(files: dict[str, str]) -> dict[str, CsvTable]:
    out = {}
    for name, text in files.items():
        reader = csv.DictReader(io.StringIO(text))
        out[name] = CsvTable(header=tuple(reader.fieldnames or ()), rows=tuple(reader))
    return out


def _with(**changes: str) -> dict[str, CsvTable]:
    return _tables({**GOOD, **{f"{k}.csv": v for k, v in changes.items()}})


def test_a_good_folder_is_a_directory() -> None:
    validated = validate_tables(_tables(GOOD))
    assert validated.errors == ()
    directory = validated.directory
    assert directory is not None
    ines = next(p for p in directory.people if p.person_id == "t-ines")
    assert (ines.phones, ines.language, ines.sms_consent) == (
        ("+13035550111", "+13035550112"),
        "es",
        True,
    )
    bo = next(p for p in directory.people if p.person_id == "t-bo")
    assert bo.language is None  # blank: taken from their message
    kai = next(p for p in directory.people if p.person_id == "pm-kai")
    assert (kai.role, kai.property_ids, kai.sms_consent) == (PersonRole.PM, ("oak", "pine"), False)
    sol = next(v for v in directory.vendors if v.vendor_id == "v-sol")
    assert (sol.trades, sol.rank, sol.after_hours) == ((Trade.ELECTRICAL, Trade.HVAC), 2, True)
    handy = next(v for v in directory.vendors if v.vendor_id == "v-any")
    assert (handy.property_ids, handy.rank, handy.after_hours) == (("*",), 1, False)
    assert len(directory.on_call) == 2


def test_every_error_is_listed_with_its_file_row_and_column() -> None:
    """One error of each kind, all in one folder: each is reported where it is, none hides
    another, and no directory comes out."""
    validated = validate_tables(
        _with(
            properties="""property_id,name,address,timezone
oak,Oak Terrace,1 Oak Rd,America/Denver
pine,Pine Lofts,2 Pine Rd,Mars/Olympus
oak,Oak again,,UTC
""",
            units="""unit_id,property_id,label
oak-101,oak,101
pine-7,pine,7
elm-1,elm,1
""",
            people="""person_id,role,name,phones,unit_id,property_ids,language,sms_consent
t-ines,tenant,Ines,+13035550111;+13035550112,oak-101,,es,yes
t-bo,tenant,Bo,303-555-0113,pine-7,,,
t-cy,tenant,Cy,+13035550114,oak-999,,,
t-di,tenant,Di,+13035550111,pine-7,,,
pm-kai,pm,Kai,+13035550190,,oak;birch,,
t-ed,tenant,Ed,+13035550115,pine-7,,,maybe
""",
            vendors="""vendor_id,name,phone,trades,property_ids,rank,after_hours
v-sol,Sol Electric,+13035550150,electrical;plumbin,oak,2,yes
v-any,Any Handy,+13035550190,general,*,,
""",
            on_call="""property_id,person_id,starts_at,ends_at
oak,pm-kai,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
oak,pm-kai,2026-12-01T19:00:00-07:00,2026-12-02T08:00:00-07:00
pine,pm-kai,2026-12-01T08:00:00,2026-12-01T20:00:00-07:00
""",
        )
    )
    assert validated.directory is None
    found = {(p.file, p.row, p.column): p.message for p in validated.errors}
    expected = {
        ("properties.csv", 3, "timezone"): "unknown time zone",
        ("properties.csv", 4, "property_id"): "duplicate id 'oak'",
        ("units.csv", 4, "property_id"): "unknown property 'elm'",
        ("people.csv", 3, "phones"): "E.164",
        ("people.csv", 4, "unit_id"): "unknown unit 'oak-999'",
        ("people.csv", 5, "phones"): "also person t-ines's",
        ("people.csv", 6, "property_ids"): "unknown property 'birch'",
        ("people.csv", 7, "sms_consent"): "expected yes or no",
        ("vendors.csv", 2, "trades"): "unknown trade 'plumbin'",
        ("vendors.csv", 3, "phone"): "also person pm-kai's",
        ("on_call.csv", 3, "starts_at"): "overlaps the oak shift on row 2",
        ("on_call.csv", 4, "starts_at"): "no UTC offset",
    }
    for where, words in expected.items():
        assert where in found, f"{where} not reported; got {sorted(found)}"
        assert words in found[where]
    assert len(validated.errors) == len(expected)


def test_a_missing_column_is_an_error_and_its_rows_are_not_read() -> None:
    validated = validate_tables(
        _with(
            units="""unit_id,label
oak-101,101
"""
        )
    )
    assert validated.directory is None
    where = [(p.file, p.row, p.column, p.message) for p in validated.errors]
    assert ("units.csv", 1, "property_id", "missing column") in where


def test_an_unknown_column_is_a_warning_and_is_ignored() -> None:
    validated = validate_tables(
        _with(
            units="""unit_id,property_id,label,floor
oak-101,oak,101,1
pine-7,pine,7,3
"""
        )
    )
    assert validated.errors == ()
    assert validated.directory is not None
    (warning,) = [w for w in validated.warnings if w.column == "floor"]
    assert (warning.file, warning.row, warning.message) == (
        "units.csv",
        1,
        "unknown column, ignored",
    )


def test_on_call_for_an_unknown_person_or_a_tenant_is_an_error() -> None:
    validated = validate_tables(
        _with(
            on_call="""property_id,person_id,starts_at,ends_at
oak,pm-nobody,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
elm,t-ines,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
"""
        )
    )
    found = {(p.row, p.column): p.message for p in validated.errors}
    assert "unknown person" in found[(2, "person_id")]
    assert "not a pm" in found[(3, "person_id")]
    assert "unknown property" in found[(3, "property_id")]


def test_back_to_back_shifts_do_not_overlap() -> None:
    validated = validate_tables(
        _with(
            on_call="""property_id,person_id,starts_at,ends_at
oak,pm-kai,2026-12-01T08:00:00-07:00,2026-12-01T20:00:00-07:00
oak,pm-kai,2026-12-01T20:00:00-07:00,2026-12-02T08:00:00-07:00
"""
        )
    )
    assert validated.errors == ()


def test_export_then_import_gives_the_same_directory() -> None:
    directory = synthetic_directory(properties=3, tenants=40, vendors=12, pms=4)
    tables = directory_tables(directory)
    as_text = {}
    for name, table in tables.items():
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(table.header))
        writer.writeheader()
        writer.writerows(table.rows)
        as_text[name] = buffer.getvalue()
    validated = validate_tables(_tables(as_text))
    assert validated.errors == ()
    assert validated.directory == directory
    assert check_directory(directory) == []


def _good() -> Directory:
    directory = validate_tables(_tables(GOOD)).directory
    assert directory is not None
    return directory


def test_the_same_directory_again_plans_no_change() -> None:
    directory = _good()
    stored = {p.phone: p for p in directory.parties()}
    plan = plan_import(directory, directory, stored)
    assert (plan.changes, plan.added, plan.changed, plan.absent) == (0, (), (), ())
    assert plan.unchanged == 11
    assert (plan.party_puts, plan.party_deletes) == ((), ())
    assert plan.summary().startswith("0 changes")


def test_a_first_import_adds_everything_and_every_phone() -> None:
    plan = plan_import(_good(), Directory(), {})
    assert plan.changes == 11
    assert {p.phone for p in plan.party_puts} == {p.phone for p in _good().parties()}


def test_a_changed_phone_replaces_its_row_and_absent_rows_stay_unless_pruned() -> None:
    before = _good()
    after = validate_tables(
        _with(
            people="""person_id,role,name,phones,unit_id,property_ids,language,sms_consent
t-ines,tenant,Ines,+13035550111,oak-101,,es,yes
pm-kai,pm,Kai,+13035550190,,oak;pine,,no
"""
        )
    ).directory
    assert after is not None
    stored = {p.phone: p for p in before.parties()}
    kept = plan_import(after, before, stored)
    assert [c.id for c in kept.changed] == ["t-ines"]
    assert [c.id for c in kept.absent] == ["t-bo"]
    assert kept.party_deletes == ("+13035550112",)  # Ines's dropped phone; Bo's is kept
    assert kept.changes == 1
    pruned = plan_import(after, before, stored, prune=True)
    assert pruned.party_deletes == ("+13035550112", "+13035550113")
    assert pruned.changes == 2
    assert "absent " in pruned.lines()[-1]
    assert "t-bo" in pruned.lines()[-1]


def test_a_world_is_a_directory_of_one_property() -> None:
    world = World(
        parties=(
            PartySpec(id="tenant-ro", role="tenant", phone="+15125550101", name="Ro", unit="Apt 4"),
            PartySpec(id="vendor-ed", role="vendor", phone="+15125550102"),
            PartySpec(id="pm-flo", role="pm", phone="+15125550103", name="Flo"),
        )
    )
    directory = world.directory()
    assert check_directory(directory) == []
    (unit,) = directory.units
    assert (unit.label, unit.property_id) == ("Apt 4", WORLD_PROPERTY.property_id)
    (vendor,) = directory.vendors
    assert (vendor.trades, vendor.property_ids, vendor.name) == (
        (Trade.GENERAL,),
        ("*",),
        "vendor-ed",
    )
    parties = {p.party_id: p for p in world.domain_parties()}
    assert parties["tenant-ro"].unit == "Apt 4"
    assert parties["pm-flo"].property_ids == (WORLD_PROPERTY.property_id,)


def test_a_phone_kept_from_an_absent_person_is_a_conflict_unless_pruned() -> None:
    """Bo is absent from the new files (kept: no --prune) and the new tenant Eve has his phone:
    applying would bind one phone to two people, so the plan names the clash."""
    before = _good()
    after = validate_tables(
        _with(
            people="""person_id,role,name,phones,unit_id,property_ids,language,sms_consent
t-ines,tenant,Ines,+13035550111;+13035550112,oak-101,,es,yes
t-eve,tenant,Eve,+13035550113,pine-7,,,
pm-kai,pm,Kai,+13035550190,,oak;pine,,no
""",
            on_call="""property_id,person_id,starts_at,ends_at
oak,pm-kai,2026-12-01T09:00:00-07:00,2026-12-01T21:00:00-07:00
""",
        )
    ).directory
    assert after is not None
    stored = {p.phone: p for p in before.parties()}
    kept = plan_import(after, before, stored)
    found = {(p.file, p.row, p.column): p.message for p in kept.conflicts}
    assert "person t-bo's" in found[("people.csv", 3, "phones")]
    assert "overlaps the oak shift of pm-kai" in found[("on_call.csv", 2, "starts_at")]
    assert len(found) == 2
    assert plan_import(after, before, stored, prune=True).conflicts == ()


def test_a_world_vendor_keeps_the_trades_it_states() -> None:
    world = World(
        parties=(
            PartySpec(id="vendor-al", role="vendor", phone="+15125550104", trades=(Trade.PEST,)),
        )
    )
    (vendor,) = world.directory().vendors
    assert vendor.trades == (Trade.PEST,)


# -- a property's own dispatch amounts (#19) --------------------------------------------------

AMOUNTS = """property_id,name,address,timezone,approval_over_usd,nte_usd
oak,Oak Terrace,1 Oak Rd,America/Denver,750,"$1,200"
pine,Pine Lofts,2 Pine Rd,Europe/Madrid,,
"""


def test_a_propertys_approval_limit_and_nte_are_read_in_whole_dollars() -> None:
    validated = validate_tables(_with(properties=AMOUNTS))
    assert validated.errors == ()
    assert validated.directory is not None
    by_id = {p.property_id: p for p in validated.directory.properties}
    assert (by_id["oak"].approval_over_usd, by_id["oak"].nte_usd) == (750, 1200)
    # Blank: the account's policy applies.
    assert (by_id["pine"].approval_over_usd, by_id["pine"].nte_usd) == (None, None)


def test_a_file_without_the_amount_columns_keeps_the_accounts_policy() -> None:
    directory = _good()
    assert all(p.approval_over_usd is None and p.nte_usd is None for p in directory.properties)


def test_an_amount_that_is_not_whole_dollars_is_an_error_at_its_row_and_column() -> None:
    validated = validate_tables(
        _with(
            properties="""property_id,name,address,timezone,approval_over_usd,nte_usd
oak,Oak Terrace,1 Oak Rd,America/Denver,499.99,300
pine,Pine Lofts,2 Pine Rd,Europe/Madrid,500,-40
elm,Elm Court,3 Elm Rd,UTC,lots,
"""
        )
    )
    assert validated.directory is None
    found = {(p.file, p.row, p.column): p.message for p in validated.errors}
    assert set(found) == {
        ("properties.csv", 2, "approval_over_usd"),
        ("properties.csv", 3, "nte_usd"),
        ("properties.csv", 4, "approval_over_usd"),
    }
    assert (
        "expected whole US dollars such as 500, got '499.99'"
        in found[("properties.csv", 2, "approval_over_usd")]
    )
    assert "'-40'" in found[("properties.csv", 3, "nte_usd")]


def test_export_then_import_keeps_a_propertys_amounts(tmp_path: Path) -> None:
    directory = _good()
    oak, pine = directory.properties
    priced = directory.model_copy(
        update={
            "properties": (
                oak.model_copy(update={"approval_over_usd": 0, "nte_usd": 2500}),
                pine,
            )
        }
    )
    tables = directory_tables(priced)
    header = tables["properties.csv"].header
    assert header[-2:] == ("approval_over_usd", "nte_usd")
    assert [(r["approval_over_usd"], r["nte_usd"]) for r in tables["properties.csv"].rows] == [
        ("0", "2500"),
        ("", ""),
    ]
    # Through the files on disk, as `maestro directory export` and `import` do.
    write_folder(priced, tmp_path)
    read_back = read_folder(tmp_path)
    assert read_back.errors == ()
    assert read_back.directory == priced
