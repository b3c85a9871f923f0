"""Ports: what maestro needs from the outside world, as Protocols, one module per concern
(stores, conversations, workflows, platform, limits, messaging, evidence, events, brain).

Handlers receive adapters implementing these (DynamoDB, SQS, Step Functions, Twilio…), and
tests pass fakes. Nothing here imports boto3, twilio or anthropic; this package re-exports
nothing: import each port from its module.
"""
