"""Ingestion: signed webhooks → the conversation buffer → the debounce queue → packages."""
