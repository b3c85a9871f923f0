"""SQS probe queue → the prober: the severity probe, an expedite for an emergency."""

from maestro.ingest.prober_entry import prober_handler as handler

__all__ = ["handler"]
