"""The web page on the deploy configuration: the browser registers as a guest and plays with
its own token over NATS's WebSocket listener, admitted by the auth callout with its own
player's rights only (no bridge, no service credentials in the page).

A real nats-server with deploy/nats/nats.conf and the auth callout (``secure_nats``), the
pipeline services and the web edge connected as the service user, and Chromium.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from cardroom_acktracker import AckTracker
from cardroom_gamemaster import Gamemaster
from cardroom_gateway import Web, WebSettings
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_timers import Timers
from deploy_support import SecureNats
from playwright.async_api import Browser, async_playwright
from support.browser import Person, chromium, ensure_built


@pytest.fixture
async def web_on_deploy(
    monkeypatch: pytest.MonkeyPatch,
    secure_nats: SecureNats,
    fresh_database: Callable[..., Awaitable[str]],
) -> AsyncIterator[str]:
    await ensure_built()
    load_games()
    monkeypatch.setenv("CARDROOM_PLAYER_TOKEN_SECRET", secure_nats.secret("player_token_secret"))
    # browsers go to the server's own WebSocket listener, as deploy/docker-compose.yml says
    monkeypatch.setattr(
        Web, "settings_override", WebSettings(port=0, nats_ws_url=secure_nats.ws_url)
    )
    host = Host(
        [Gamemaster, Relay, Projector, AckTracker, Timers, Web],
        nats_url=secure_nats.local(secure_nats.secret("nats_url")),
        database_url=await fresh_database(migrated=True),
        subject_root=secure_nats.root,
    )
    await host.start()
    web = next(s for s in host.services if isinstance(s, Web))
    try:
        assert web.url is not None
        yield web.url
    finally:
        await host.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


async def test_a_browser_plays_take5_with_its_own_token(
    web_on_deploy: str, browser: Browser, secure_nats: SecureNats
) -> None:
    context = await browser.new_context()
    alice = Person(context, await context.new_page(), web_on_deploy)
    try:
        await alice.sign_in("Alice")
        identity = json.loads(
            await alice.page.evaluate(
                f"localStorage.getItem('cardroom.identity.{secure_nats.root}')"
            )
        )
        # a player id and a token signed by the lobby, nothing else
        assert set(identity) == {"player", "token", "expires", "name"}
        assert identity["token"].startswith(identity["player"] + ".")
        await alice.page.select_option("#game-type", "take5")
        await alice.page.fill("#seats", "2")
        await alice.page.fill("#bots", "1")
        await alice.page.click("#create")
        await alice.page.locator(".take5 .hand").wait_for(timeout=30_000)
        while not await alice.page.locator(".game-over").count():
            await alice.page.wait_for_selector("button.action, .game-over", timeout=30_000)
            buttons = alice.page.locator("button.action")
            if await buttons.count():
                try:
                    await buttons.first.click(timeout=2_000)
                except Exception:
                    continue  # replaced under the click by the next notification
        places = await alice.page.locator(".ranking li").all_inner_texts()
        assert len(places) == 2
        await alice.shot("deploy-take5-over")
        assert not alice.errors, alice.errors
    finally:
        await context.close()
