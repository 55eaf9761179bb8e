"""The web edge as another site, a confused client or a framing page sees it: the NATS bridge
(and the embedded nats-server's WebSocket listener) take a browser only from the page's own
origin, a path it cannot parse is the client's error, every answer carries the page's
Content-Security-Policy and refuses framing, and only GET and HEAD are answered."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cardroom_gateway import Web, WebSettings
from cardroom_runtime.embedded import EmbeddedNats
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from playwright.async_api import Browser, ConsoleMessage
from support.browser import Person, WebStack, ensure_built
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from cardroom.services import SERVICES, ServiceName


async def raw(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as it is; the answer's status, headers (lower-case names) and body
    (the edge closes the connection after an HTTP answer)."""
    where = urlsplit(url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    try:
        writer.write(request)
        await writer.drain()
        out = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1.1 "), out[:200]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), headers, body


def get(path: bytes, *headers: bytes, method: bytes = b"GET") -> bytes:
    return b"\r\n".join([method + b" " + path + b" HTTP/1.1", b"Host: a", *headers, b"", b""])


def netloc(stack: WebStack) -> str:
    return urlsplit(stack.url).netloc


def bridge(stack: WebStack) -> str:
    return stack.url.replace("http://", "ws://") + "nats"


# -- 1. the bridge takes a browser only from the page's own origin ---------------------------


async def test_the_bridge_takes_the_page_s_own_origin_and_clients_that_are_no_browser(
    web_stack: WebStack,
) -> None:
    for headers in [
        {},  # no Origin: not a browser (a page cannot leave it out)
        {"Origin": f"http://{netloc(web_stack)}"},
        {"Origin": f"https://{netloc(web_stack)}"},  # behind a proxy that ends TLS
        {"Origin": f"HTTP://{netloc(web_stack).upper()}"},
    ]:
        async with ws_connect(bridge(web_stack), additional_headers=headers) as ws:
            info = await asyncio.wait_for(ws.recv(), 5)
            assert isinstance(info, bytes)
            assert info.startswith(b"INFO "), headers


@pytest.mark.parametrize(
    "origins",
    [
        ["http://evil.example"],
        ["null"],  # a sandboxed frame, a file
        ["http://127.0.0.1:1"],  # another port of the same machine: another site
        ["http://{netloc}.evil.example"],
        ["http://{netloc}/"],
        ["ws://{netloc}"],
        ["http://{netloc}", "http://evil.example"],  # two: which one is the page's?
    ],
)
async def test_the_bridge_refuses_a_page_of_another_origin(
    web_stack: WebStack, origins: list[str]
) -> None:
    headers = [("Origin", o.format(netloc=netloc(web_stack))) for o in origins]
    with pytest.raises(InvalidStatus) as refused:
        async with ws_connect(bridge(web_stack), additional_headers=headers):
            pass
    assert refused.value.response.status_code == 403
    assert json.loads(refused.value.response.body)["error"]["code"] == "forbidden_origin"


EVIL = """<!doctype html><title>another site</title><script>
window.got = [];
window.ended = false;
const ws = new WebSocket(%(ws)s);
ws.onmessage = (e) => window.got.push(String(e.data));
ws.onclose = () => { window.ended = true; };
</script><iframe src=%(page)s></iframe>"""


@pytest.fixture
async def other_site(web_stack: WebStack) -> AsyncIterator[str]:
    """A page of another site (another address of this machine) that opens the web edge's
    bridge and frames its page."""
    body = (
        EVIL % {"ws": json.dumps(bridge(web_stack)), "page": json.dumps(web_stack.url)}
    ).encode()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.2", 0)
    try:
        yield f"http://127.0.0.2:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()


async def test_another_site_in_a_visitor_s_browser_neither_reaches_nats_nor_frames_the_page(
    web_stack: WebStack, browser: Browser, other_site: str
) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        framing: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def console(message: ConsoleMessage) -> None:
            if "frame-ancestors" in message.text and not framing.done():
                framing.set_result(message.text)

        page.on("console", console)
        await page.goto(other_site)
        await page.wait_for_function("window.ended", timeout=10_000)
        assert await page.evaluate("window.got") == []  # not even the server's INFO
        # the page refuses to be framed by it (clickjacking)
        assert "'none'" in await asyncio.wait_for(framing, 10)
    finally:
        await context.close()


async def test_the_embedded_nats_server_takes_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make run``'s nats-server asks for no credentials: its WebSocket listener takes no
    browser's handshake at all (any ``Origin``, the page's own included: the page goes
    through the web edge's bridge), only clients that are no browser."""
    server = EmbeddedNats(tmp_path / "nats")
    await server.start(port=None)
    try:
        assert server.ws_url is not None
        async with ws_connect(server.ws_url) as ws:
            assert (await asyncio.wait_for(ws.recv(), 5))[:5] == b"INFO "
        for origin in ["http://127.0.0.1:8765", "http://localhost:8765", "http://evil.example"]:
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(server.ws_url, additional_headers={"Origin": origin}):
                    pass
            assert refused.value.response.status_code == 403, origin
    finally:
        await asyncio.to_thread(server.stop)


async def test_a_page_plays_through_the_bridge_beside_an_embedded_nats_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    browser: Browser,
    fresh_database: Callable[..., Awaitable[str]],
    subject_root: str,
) -> None:
    """As ``make run`` has it (an embedded nats-server, the web edge on a port chosen at
    start): the page speaks NATS through the edge's bridge, under the page's policy."""
    await ensure_built()
    load_games()
    monkeypatch.delenv("CARDROOM_NATS_WS_URL", raising=False)
    monkeypatch.setattr(Web, "settings_override", WebSettings(port=0))
    server = EmbeddedNats(tmp_path / "nats")
    nats_url = await server.start(port=None)
    host = Host(
        SERVICES[ServiceName.all],
        nats_url=nats_url,
        database_url=await fresh_database(migrated=True),
        subject_root=f"{subject_root}emb",
    )
    context = None
    try:
        await host.start()
        web = next(s for s in host.services if isinstance(s, Web))
        context = await browser.new_context()
        alice = Person(context, await context.new_page(), web.url)
        opened: list[str] = []
        alice.page.on("websocket", lambda ws: opened.append(ws.url))
        violations = csp_violations(alice)
        await alice.sign_in("Alice")
        page = alice.page
        await page.select_option("#game-type", "take5")
        await page.fill("#seats", "3")
        await page.fill("#bots", "2")
        await page.click("#create")
        await page.locator("button.action").first.wait_for(timeout=30_000)
        bridge = web.url.replace("http://", "ws://", 1) + "nats"
        assert opened
        assert all(url == bridge for url in opened), opened
        assert not violations, violations
        assert not alice.errors, alice.errors
    finally:
        if context is not None:
            await context.close()
        await host.stop()
        await asyncio.to_thread(server.stop)


def csp_violations(person: Person) -> list[str]:
    """The Content-Security-Policy violations the page reports on its console, as they come."""
    found: list[str] = []
    person.page.on(
        "console",
        lambda m: found.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return found


# -- 2. a path the edge cannot parse is the client's error ----------------------------------


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        (b"//[x", 400, "bad_request"),  # not a URL: "Invalid IPv6 URL"
        (b"/a\x00b.js", 404, None),  # no file has a NUL in its name
        (b"/a\x00b", 200, None),  # a page path: the page (it routes by its fragment)
    ],
)
async def test_a_path_the_edge_cannot_parse_is_the_client_s_error(
    web_stack: WebStack,
    path: bytes,
    status: int,
    code: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        got, _, body = await raw(web_stack.url, get(path))
    assert got == status, body[:200]
    if code is not None:
        assert json.loads(body)["error"]["code"] == code
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# -- 3. the page's policy and no framing ----------------------------------------------------


def directives(policy: str) -> dict[str, str]:
    return {
        name: value.strip()
        for name, _, value in (part.strip().partition(" ") for part in policy.split(";"))
    }


POLICY = {
    "default-src": "'self'",
    "script-src": "'self' 'wasm-unsafe-eval'",
    "img-src": "'self' data:",
    "style-src": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "object-src": "'none'",
}


@pytest.mark.parametrize(
    ("path", "status"),
    [(b"/", 200), (b"/app.js", 200), (b"/config.json", 200), (b"/missing.js", 404)],
)
async def test_every_answer_has_the_page_s_policy_and_refuses_framing(
    web_stack: WebStack, path: bytes, status: int
) -> None:
    where = netloc(web_stack).encode()
    got, headers, _ = await raw(web_stack.url, get(path).replace(b"Host: a", b"Host: " + where))
    assert got == status
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    policy = directives(headers["content-security-policy"])
    # no NATS listener of the server's own: the page speaks through this edge's bridge
    assert policy == {
        **POLICY,
        "connect-src": f"'self' ws://{netloc(web_stack)} wss://{netloc(web_stack)}",
    }


async def test_the_policy_lets_the_page_connect_only_to_the_configured_nats_listeners(
    web_stack: WebStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    web = next(s for s in web_stack.host.services if isinstance(s, Web))
    listeners = "ws://nats-1.example:8080/,wss://nats-2.example,ws://x;script-src *,https://y"
    monkeypatch.setattr(web, "settings", WebSettings(port=0, nats_ws_url=listeners))
    _, headers, _ = await raw(web_stack.url, get(b"/"))
    policy = directives(headers["content-security-policy"])
    # a URL that is no ws:// or wss:// one, or would end the directive, is left out
    assert policy == {
        **POLICY,
        "connect-src": "'self' ws://nats-1.example:8080 wss://nats-2.example",
    }


UPGRADE = (b"Upgrade: websocket", b"Connection: Upgrade", b"Sec-WebSocket-Version: 13",
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")  # fmt: skip


async def _status_line(url: str, request: bytes) -> bytes:
    where = urlsplit(url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.readline(), 10)
    finally:
        writer.close()


async def test_the_bridge_answers_only_to_the_names_of_this_edge(
    web_stack: WebStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a site whose name is made to resolve to this machine sends its own
    name as both Origin and Host, which the origin check alone takes for the page's. The
    bridge answers only a Host that is an address, localhost, or a name configured
    (``CARDROOM_WEB_NAMES``)."""
    port = urlsplit(web_stack.url).port

    def handshake(name: str) -> bytes:
        host = f"{name}:{port}".encode()
        return (
            b"\r\n".join(
                [b"GET /nats HTTP/1.1", b"Host: " + host, b"Origin: http://" + host, *UPGRADE]
            )
            + b"\r\n\r\n"
        )

    status, _, body = await raw(web_stack.url, handshake("rebound.example"))
    assert status == 403
    assert json.loads(body)["error"]["code"] == "forbidden_origin"
    for name in ["localhost", "127.0.0.1"]:
        assert (await _status_line(web_stack.url, handshake(name))).startswith(b"HTTP/1.1 101")
    web = next(s for s in web_stack.host.services if isinstance(s, Web))
    monkeypatch.setattr(web, "settings", WebSettings(port=0, names=("rebound.example",)))
    line = await _status_line(web_stack.url, handshake("rebound.example"))
    assert line.startswith(b"HTTP/1.1 101"), line


async def test_no_bridge_where_browsers_go_to_the_nats_servers_own_listeners(
    web_stack: WebStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``CARDROOM_NATS_WS_URL`` (deploy/'s cluster) the page never needs the bridge:
    ``/nats`` is 404, or every guest would reach NATS from this edge's address, which the auth
    callout may trust (its limits on new guests skipped) and its flood guard would ban for
    everybody at once."""
    web = next(s for s in web_stack.host.services if isinstance(s, Web))
    monkeypatch.setattr(
        web, "settings", WebSettings(port=0, nats_ws_url="ws://nats-1.example:8080")
    )
    for headers in [{}, {"Origin": f"http://{netloc(web_stack)}"}]:
        with pytest.raises(InvalidStatus) as refused:
            async with ws_connect(bridge(web_stack), additional_headers=headers):
                pass
        assert refused.value.response.status_code == 404
        assert json.loads(refused.value.response.body)["error"]["code"] == "not_found"


# -- 4. GET and HEAD only; the API's own 404 ------------------------------------------------


@pytest.mark.parametrize(
    "request_bytes",
    [
        get(b"/api/public", b"Content-Length: 0", method=b"POST"),
        get(b"/", b"Content-Length: 0", method=b"PUT"),
        get(b"/index.html", method=b"DELETE"),
        get(b"/nats", method=b"POST"),
        get(
            b"/api/games",
            b"Origin: http://x",
            b"Access-Control-Request-Method: GET",
            method=b"OPTIONS",
        ),
        get(b"/", method=b"PATCH"),
    ],
)
async def test_a_method_other_than_get_or_head_is_not_allowed(
    web_stack: WebStack, request_bytes: bytes
) -> None:
    status, headers, body = await raw(web_stack.url, request_bytes)
    assert status == 405
    assert headers["allow"] == "GET, HEAD"
    assert json.loads(body)["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", [b"/", b"/api/games", b"/config.json", b"/missing.js"])
async def test_head_answers_the_headers_of_get_without_its_body(
    web_stack: WebStack, path: bytes
) -> None:
    status, headers, body = await raw(web_stack.url, get(path))
    head_status, head_headers, head_body = await raw(web_stack.url, get(path, method=b"HEAD"))
    assert head_body == b""
    assert head_status == status
    assert int(head_headers["content-length"]) == len(body) > 0
    assert head_headers["content-type"] == headers["content-type"]


async def test_head_of_the_bridge_is_not_allowed(web_stack: WebStack) -> None:
    status, headers, body = await raw(web_stack.url, get(b"/nats", method=b"HEAD"))
    assert status == 405
    assert headers["allow"] == "GET"
    assert body == b""


@pytest.mark.parametrize(
    "path", [b"/api", b"/api/", b"/api/nosuch", b"/api/public/", b"/api/games/x"]
)
async def test_an_unknown_api_path_is_a_json_404(web_stack: WebStack, path: bytes) -> None:
    status, headers, body = await raw(web_stack.url, get(path))
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["code"] == "not_found"
