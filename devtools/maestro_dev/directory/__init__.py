"""``maestro directory``: load a property manager's directory from CSV files, export it, show
one entry (docs/directory.md)."""
