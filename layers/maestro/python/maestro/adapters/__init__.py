"""Adapters: the only modules that import boto3, twilio or anthropic."""
