"""Fakes of external services that speak the real wire protocol on loopback."""
