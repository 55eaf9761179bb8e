"""Run analytics on its own: ``python -m cardroom_analytics``.

The same service as ``cardroom serve analytics``, without the rest of cardroom installed
beside it: it needs only the ``CARDROOM_*`` settings (see :mod:`cardroom_runtime.settings`).
It migrates the database first unless it is current (the services' own role may not),
then prints ``cardroom: ready`` once it consumes.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from cardroom_runtime import logs, migrate
from cardroom_runtime.discovery import discover, ensure_database
from cardroom_runtime.host import Host
from cardroom_runtime.settings import Settings

from .service import Analytics


async def run() -> None:
    settings = Settings.from_env()
    services = await discover(settings)
    try:
        database_url = settings.database_url or await ensure_database(
            services.database_admin_url, "cardroom"
        )
        await migrate.ensure_migrated(database_url)  # as `cardroom serve` does
        host = Host(
            [Analytics],
            nats_url=services.nats_url,
            database_url=database_url,
            subject_root=settings.subject_root,
            client_name="cardroom-analytics",
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await host.start()
        logs.announce_ready()
        try:
            await stop.wait()
        finally:
            await host.stop()
    finally:
        await services.aclose()


def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("faststream", "nats", "sqlalchemy"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    asyncio.run(run())


if __name__ == "__main__":
    main()
