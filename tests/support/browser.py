"""A person at a browser, for the web tests (tests/web)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cardroom_gateway.web import STATIC
from playwright.async_api import BrowserContext, Page

if TYPE_CHECKING:
    from cardroom_runtime.host import Host

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
"""Where the web tests save their screenshots (build/ is ignored by git)."""


def chromium() -> str:
    """Debian's chromium (Playwright's own download is not used: it needs its CDN)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no chromium on PATH: apt-get install chromium (.ci/run does it)")


async def ensure_built() -> None:
    """`make test` builds the page first (make web); a bare pytest may not have."""
    if not (STATIC / "app.js").is_file():
        build = await asyncio.create_subprocess_exec("bash", str(ROOT / "web" / "build.sh"))
        assert await build.wait() == 0, "make web failed"


@dataclass
class WebStack:
    """Every service in this process, the web edge at ``url``, under subject root ``root``."""

    url: str
    root: str
    host: Host


class Person:
    """One browser profile (its own localStorage: its own player), with the page's errors."""

    def __init__(self, context: BrowserContext, page: Page, url: str) -> None:
        self.context = context
        self.page = page
        self.url = url
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    async def sign_in(self, name: str) -> None:
        await self.page.goto(self.url)
        await self.page.fill("#name", name)
        await self.page.click("text=Enter the lobby")
        await self.page.wait_for_selector("#create")

    async def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path


People = Callable[..., Awaitable[Person]]
