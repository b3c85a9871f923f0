"""A schedule → the sweeper: recorded effects whose event never came (missing_event)."""

from maestro.verify.entry import sweeper_handler as handler

__all__ = ["handler"]
