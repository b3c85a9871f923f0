"""maestro's CDK app, one construct per concern (see docs/deploy.md); ``app.py`` composes them."""
