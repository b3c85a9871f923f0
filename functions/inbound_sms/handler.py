"""API Gateway → maestro's inbound webhooks (Twilio SMS, status, transcripts; in-app; kickoff)."""

from maestro.ingest.entry import inbound_handler as handler

__all__ = ["handler"]
