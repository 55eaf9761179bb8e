"""A whole cardroom with its web edge, and a real Chromium driven by Playwright.

The page is the one ``make run`` serves (built by ``make web``; built here when missing), the
browser is Debian's ``chromium`` (``.ci/run`` installs it), the services run in this process
on the run's servers. Screenshots go to ``build/screenshots/`` (ignored by git).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
from cardroom_gateway import Web
from cardroom_runtime import migrate
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_runtime.postgres import create_database, drop_database
from playwright.async_api import Browser, ConsoleMessage, async_playwright
from support.browser import People, Person, WebStack, chromium, ensure_built

from cardroom.services import SERVICES, ServiceName

_counter = itertools.count()


@pytest.fixture(scope="module")
async def web_stack(
    nats_url: str, database_admin_url: str, subject_root: str
) -> AsyncIterator[WebStack]:
    await ensure_built()
    load_games()
    name = f"{subject_root}_web{next(_counter)}"
    database_url = await create_database(database_admin_url, name)
    await migrate.upgrade_async(database_url)
    root = f"{subject_root}w{next(_counter)}"
    host = Host(
        SERVICES[ServiceName.all], nats_url=nats_url, database_url=database_url, subject_root=root
    )
    await host.start()
    web = next(s for s in host.services if isinstance(s, Web))
    assert web.url is not None, "the web edge did not listen"
    try:
        yield WebStack(web.url, root, host)
    finally:
        await host.stop()
        await drop_database(database_admin_url, name)


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(
            executable_path=chromium(), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def people(browser: Browser, web_stack: WebStack) -> AsyncIterator[People]:
    """``await people(phone=False)``: a new person with a browser profile of their own."""
    made: list[Person] = []
    violations: list[str] = []  # the page's Content-Security-Policy forbids nothing it does

    async def make(phone: bool = False) -> Person:
        viewport = {"width": 390, "height": 844} if phone else {"width": 1200, "height": 900}
        context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        person = Person(context, await context.new_page(), web_stack.url)
        person.page.on("console", lambda m: _policy_violation(m, violations))
        made.append(person)
        return person

    try:
        yield make
    finally:
        for person in made:
            await person.context.close()
    # the pages must not have thrown anywhere along the way
    errors = [e for p in made for e in p.errors]
    assert not errors, errors
    assert not violations, violations


def _policy_violation(message: ConsoleMessage, found: list[str]) -> None:
    if "Content Security Policy" in message.text:
        found.append(message.text)
