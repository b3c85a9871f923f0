"""The import folder on disk: CSV files in, CSV files out (the pure rules are in
:mod:`maestro.domain.directory_import`)."""

from __future__ import annotations

import csv
from pathlib import Path

from maestro.domain.directory import Directory
from maestro.domain.directory_import import CsvTable, Problem, Validated, directory_tables
from maestro.domain.directory_import import validate_tables as validate

__all__ = ["read_folder", "write_folder"]


def _read(path: Path) -> CsvTable:
    # utf-8-sig: a spreadsheet's export often starts with a byte-order mark.
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = tuple((name or "").strip() for name in reader.fieldnames or ())
        rows = tuple(
            {
                (key or "").strip(): value or ""
                for key, value in zip(header, raw.values(), strict=False)
            }
            for raw in reader
        )
    return CsvTable(header=header, rows=rows)


def read_folder(folder: Path) -> Validated:
    """Every ``*.csv`` of ``folder``, validated as one directory."""
    if not folder.is_dir():
        problem = Problem(severity="error", file=str(folder), message="not a folder")
        return Validated(directory=None, errors=(problem,))
    tables: dict[str, CsvTable] = {}
    unreadable: list[Problem] = []
    for path in sorted(folder.glob("*.csv")):
        try:
            tables[path.name] = _read(path)
        except (OSError, UnicodeDecodeError, csv.Error) as error:
            unreadable.append(Problem(severity="error", file=path.name, message=str(error)))
    validated = validate(tables)
    if not unreadable:
        return validated
    return Validated(
        directory=None,
        errors=(*unreadable, *validated.errors),
        warnings=validated.warnings,
    )


def write_folder(directory: Directory, folder: Path) -> list[Path]:
    """The directory as the import files in ``folder`` (created if need be)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in directory_tables(directory).items():
        path = folder / name
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(table.header))
            writer.writeheader()
            writer.writerows(table.rows)
        written.append(path)
    return written
