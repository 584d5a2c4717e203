"""The Microsoft Teams channel: Bot Connector activities in, Adaptive Cards out (``spec`` is its entry)."""
