"""The fallback queue → the inbound route: SMS webhooks the primary route could not take."""

from maestro.ingest.fallback_entry import fallback_handler as handler

__all__ = ["handler"]
