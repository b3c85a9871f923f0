"""maestro's CDK app, one construct per concern (see README "Deploy"); ``app.py`` composes them."""
