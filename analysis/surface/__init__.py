"""The read side and request limits: views, reports, metrics, accounts and tokens."""
