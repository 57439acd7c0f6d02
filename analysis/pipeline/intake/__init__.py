"""Intake: staged uploads and their parse lifecycle (parse jobs and items, admission caps, sweeps)."""
