"""Migrate at boot: a worker process brings the schema up to date before it consumes.

Two containers booting at once both call :func:`broker.migrate.migrate`; its advisory
lock makes the second wait and then find nothing left to apply.
"""

from __future__ import annotations

import logging

from dramatiq import Middleware

from .migrate import migrate

logger = logging.getLogger(__name__)


class MigrateAtBoot(Middleware):
    def before_worker_boot(self, broker, worker) -> None:
        applied = migrate(broker.url)
        if applied:
            logger.info("schema migrated at boot", extra={"action": "migrated_at_boot", "applied": applied})
