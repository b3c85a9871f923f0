"""Read-verify: the watcher (every domain event checked against the surface it names) and the
sweeper (every recorded effect must have had its event)."""
