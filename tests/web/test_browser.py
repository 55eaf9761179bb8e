"""Whole games in a real browser: the lobby, a table page per game, a reload mid-game, a
spectator, a closed tab. Each test saves screenshots of its table pages in build/screenshots/.

A browser player picks one of the moves its page offers (a random one, so a game does not
replay one path); the tests wait on what the page shows (Playwright's selectors), never on
the clock.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from cardroom_engine import registry
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from support.browser import People, Person

MOVE_WAIT_MS = 20_000  # a move of the other seats (bots, the house) arrives well within this


async def create_table(
    person: Person,
    game_type: str,
    *,
    seats: int,
    bots: int,
    options: dict[str, str] | None = None,
    away_after: float | None = None,
    turn_timeout: float | None = None,
) -> str:
    page = person.page
    await page.select_option("#game-type", game_type)
    # the bot kinds offered are the game's own, the heuristic chosen first
    kinds = await page.locator("#bot-kind option").evaluate_all("os => os.map(o => o.value)")
    assert kinds == sorted(registry.get(game_type).bots)
    assert await page.locator("#bot-kind").input_value() == "heuristic"
    await page.fill("#seats", str(seats))
    await page.fill("#bots", str(bots))
    if options:
        await page.click("details summary")
        for name, value in options.items():
            field = page.locator(f"[name={name}]")
            if await field.evaluate("node => node.tagName") == "SELECT":
                await field.select_option(value)
            else:
                await field.fill(value)
    if away_after is not None:
        await page.fill("#ack-timeout", str(away_after))
    if turn_timeout is not None:
        await page.fill("#turn-timeout", str(turn_timeout))
    await page.click("#create")
    table = page.locator(".table-page")
    await table.wait_for()
    game = await table.get_attribute("data-game")
    assert game
    return game


async def play(
    person: Person,
    *,
    moves: int | None = None,
    wait_ms: int = MOVE_WAIT_MS,
    prefer: str | None = None,
) -> int:
    """Make moves until the game is over (or ``moves`` were made); return how many. A page
    that offers nothing for ``wait_ms`` is photographed (``<n>-stuck.png``) before failing.
    ``prefer``: a selector of the moves taken whenever the page offers one (Macaua's plays
    before a draw: a game that draws at random lasts long)."""
    page = person.page
    made = 0
    rng = random.Random()
    while moves is None or made < moves:
        try:
            await page.wait_for_selector("button.action, .game-over", timeout=wait_ms)
        except PlaywrightError:
            await person.shot(f"stuck-{id(person)}")
            raise
        if await page.locator(".game-over").count():
            break
        buttons = page.locator("button.action")
        if prefer and await page.locator(prefer).count():
            buttons = page.locator(prefer)
        count = await buttons.count()
        if not count:
            continue  # re-rendered between the two looks
        try:
            await buttons.nth(rng.randrange(count)).click(timeout=2_000)
        except PlaywrightError:
            continue  # the next notification replaced the buttons under the click
        made += 1
    return made


async def log_lines(page: Page) -> list[str]:
    return await page.locator(".log li").all_inner_texts()


def ranked(places: list[str]) -> int:
    """How many players a ranking lists: one line a place, players tied for a place on its
    line joined by " = "."""
    return sum(len(place.split(" = ")) for place in places)


async def ranking(page: Page) -> list[str]:
    await page.locator(".ranking").wait_for(timeout=MOVE_WAIT_MS)
    return await page.locator(".ranking li").all_inner_texts()


async def test_take5_with_bots_a_reload_and_a_spectator(people: People) -> None:
    alice = await people()
    await alice.sign_in("Alice")
    game = await create_table(alice, "take5", seats=3, bots=2)
    assert await play(alice, moves=3) == 3
    await alice.shot("take5-table")
    before = await log_lines(alice.page)
    assert any("You are dealt 10 cards" in line for line in before)

    # a reload: same player (from localStorage), the log kept, the table synced from the server
    await alice.page.reload()
    await alice.page.locator(".take5 .rows").wait_for()
    assert (await log_lines(alice.page))[: len(before)] == before
    assert await alice.page.locator("#connection").inner_text() == "Alice · connected"

    # a spectator on a phone-sized screen: the lobby lists the table, Watch shows the board
    # and never a hand
    carol = await people(phone=True)
    await carol.sign_in("Carol")
    row = carol.page.locator(f'.table-row[data-game="{game}"]')
    await row.locator("button.watch").wait_for()
    await carol.shot("lobby-phone")
    await row.locator("button.watch").click()
    await carol.page.locator(".take5 .rows").wait_for(timeout=MOVE_WAIT_MS)
    assert await carol.page.locator(".take5 .hand").count() == 0
    assert await carol.page.locator("button.action").count() == 0
    # no card of Alice's hand is drawn anywhere on the spectator's page (every take5 card is
    # unique, and the table waits for Alice's next card meanwhile)
    hand = set(await alice.page.locator(".take5 .hand .card .face").all_inner_texts())
    shown = set(await carol.page.locator(".card .face").all_inner_texts())
    assert len(hand) >= 5
    assert not hand & shown, hand & shown
    await carol.shot("take5-spectator-phone")

    await play(alice)
    places = await ranking(alice.page)
    assert ranked(places) == 3, places
    assert any("Alice (you)" in place for place in places)
    lines = await log_lines(alice.page)
    assert lines[-1] == "Game over."
    # a taken row says its bulls once: "takes a row of 3 bulls: 50 (3 bulls)."
    taken = [line for line in lines if " takes a row" in line]
    assert taken, lines
    assert all(re.search(r" takes a row of \d+ bulls?: ", line) for line in taken), taken
    await alice.shot("take5-over")
    await carol.page.locator(".ranking").wait_for(timeout=MOVE_WAIT_MS)
    await carol.shot("take5-spectator-over")


async def turn_seconds_left(page: Page) -> int:
    """The seconds the turn banner's countdown shows ("N s left")."""
    text = await page.locator(".turn-banner .countdown").inner_text(timeout=MOVE_WAIT_MS)
    found = re.fullmatch(r"(\d+) s left", text)
    assert found, text
    return int(found.group(1))


async def test_a_reload_mid_turn_shows_the_time_the_turn_has_left(people: People) -> None:
    """take5's own turn clock (its turn_timeout, 30 s): the page reloaded a while into
    Alice's turn counts from what the server says is left, not from the full time again."""
    alice = await people()
    await alice.sign_in("Alice")
    await create_table(alice, "take5", seats=3, bots=2, options={"turn_timeout": "30"})
    await alice.page.locator(".your-turn").wait_for(timeout=MOVE_WAIT_MS)
    # the turn's clock runs down a few seconds (the page's own count while it stays open)
    await alice.page.wait_for_function(
        """() => {
            const node = document.querySelector(".turn-banner .countdown");
            const left = node && /^(\\d+) s left$/.exec(node.textContent);
            return left && Number(left[1]) <= 24;
        }""",
        timeout=MOVE_WAIT_MS,
    )
    before = await turn_seconds_left(alice.page)
    await alice.page.reload()
    await alice.page.locator(".your-turn").wait_for(timeout=MOVE_WAIT_MS)
    after = await turn_seconds_left(alice.page)
    await alice.shot("take5-reloaded-mid-turn")
    assert 0 < after <= before, (before, after)
    assert after < 30


async def alone_with_bots(
    people: People, game_type: str, *, seats: int, options: dict[str, str], shots: str
) -> Person:
    """Alice plays a whole game of ``game_type`` against bots; screenshots mid-game and at
    the end, a ranking of every seat."""
    alice = await people()
    await alice.sign_in("Alice")
    await create_table(alice, game_type, seats=seats, bots=seats - 1, options=options)
    await play(alice, moves=2)
    await alice.page.locator(f".{game_type} .players, .{game_type} .seats").first.wait_for()
    await alice.shot(f"{shots}-table")
    await play(alice)
    places = await ranking(alice.page)
    assert ranked(places) == seats, places
    await alice.shot(f"{shots}-over")
    return alice


async def test_sixtysix_second_generation_with_a_bot_added_at_the_table(people: People) -> None:
    alice = await people()
    await alice.sign_in("Alice")
    await create_table(alice, "sixtysix", seats=2, bots=0, options={"protocol": "v2"})
    # the table page offers the game's own bot kinds beside "Add a bot", its heuristic first;
    # the kind chosen survives the board's redrawing and is the one seated
    board = alice.page.locator(".lobby-board")
    await board.locator(".add-bot-kind").wait_for()
    kinds = await board.locator(".add-bot-kind option").evaluate_all("os => os.map(o => o.value)")
    assert kinds == sorted(registry.get("sixtysix").bots)
    assert await board.locator(".add-bot-kind").input_value() == "heuristic"
    await board.locator(".add-bot-kind").select_option("random")
    await board.locator("button.add-bot").click()
    await play(alice, moves=2)
    status = await alice.page.locator(".sixtysix .status").inner_text()
    assert "second protocol generation" in status
    await alice.shot("sixtysix-v2-table")
    await play(alice)
    places = await ranking(alice.page)
    assert ranked(places) == 2, places
    assert any("random bot" in place for place in places), places
    await alice.shot("sixtysix-v2-over")


async def test_sixtysix_first_generation_two_people_one_closes_the_tab(people: People) -> None:
    alice, bob = await people(), await people()
    await alice.sign_in("Alice")
    await bob.sign_in("Bob")
    game = await create_table(
        alice,
        "sixtysix",
        seats=2,
        bots=0,
        options={"protocol": "v1"},
        away_after=2,
        turn_timeout=2,
    )
    await alice.page.locator(".lobby-board").wait_for()
    # Bob finds the table in his lobby and joins; the full table starts by itself
    await bob.page.locator(f'.table-row[data-game="{game}"] button.join').click()
    await bob.page.locator(".sixtysix").wait_for(timeout=MOVE_WAIT_MS)
    await alice.page.locator(".sixtysix").wait_for(timeout=MOVE_WAIT_MS)
    assert "first protocol generation" in await alice.page.locator(".sixtysix .status").inner_text()

    await asyncio.gather(play(alice, moves=3), play(bob, moves=3))
    await alice.shot("sixtysix-v1-table")
    await bob.shot("sixtysix-v1-table-bob")
    # Bob closes his tab: when his turn times out the house plays it, he does not acknowledge
    # what follows, so he is marked away and the house plays his seat to the end
    await bob.context.close()
    await play(alice)
    assert any("is away" in line for line in await log_lines(alice.page))
    assert ranked(await ranking(alice.page)) == 2
    await alice.shot("sixtysix-v1-over")


NAMES = """nodes => nodes.map((n) => [n.textContent, n.getAttribute("title")])"""
LABEL = re.compile(r"[A-Z][a-z]+ [A-Z][a-z]+")  # another seat's label: two words


async def test_seats_are_named_you_a_bot_by_its_kind_and_others_alike_on_every_page(
    people: People,
) -> None:
    """Alice seats two heuristic bots and Bob joins: Alice's page names the bots by their
    kind and Bob by a short label; Bob's page, which was not told the bots are bots, names
    them and Alice by labels too, the same Carol's lobby shows; every name keeps its id in
    its title."""
    alice, bob, carol = await people(), await people(), await people()
    await alice.sign_in("Alice")
    await bob.sign_in("Bob")
    game = await create_table(alice, "take5", seats=4, bots=2)
    await bob.page.locator(f'.table-row[data-game="{game}"] button.join').click()
    chips = ".take5 .players .chip .who"
    await alice.page.locator(chips).first.wait_for(timeout=MOVE_WAIT_MS)
    await bob.page.locator(chips).first.wait_for(timeout=MOVE_WAIT_MS)
    ids = {alice: await me(alice), bob: await me(bob)}
    seen_by_alice = {t: n for n, t in await alice.page.locator(chips).evaluate_all(NAMES)}
    seen_by_bob = {t: n for n, t in await bob.page.locator(chips).evaluate_all(NAMES)}
    assert len(seen_by_alice) == len(seen_by_bob) == 4  # every chip titled by a seat's id
    assert set(seen_by_alice) == set(seen_by_bob)
    bots = set(seen_by_alice) - set(ids.values())
    assert seen_by_alice[ids[alice]] == "Alice (you)"
    assert sorted(seen_by_alice[b] for b in bots) == ["heuristic bot", "heuristic bot 2"]
    assert LABEL.fullmatch(seen_by_alice[ids[bob]]), seen_by_alice
    assert seen_by_bob[ids[bob]] == "Bob (you)"
    # Bob's page does not know Alice's bots are bots: no guess, a label each
    others = [seen_by_bob[p] for p in (ids[alice], *bots)]
    assert all(LABEL.fullmatch(name) for name in others), seen_by_bob
    assert len(set(others)) == 3
    # a third page names the seats as Bob's does (Alice as her label)
    await carol.sign_in("Carol")
    row = carol.page.locator(f'.table-row[data-game="{game}"] .seats-line .name')
    await row.first.wait_for()
    in_lobby = {title: name for name, title in await row.evaluate_all(NAMES)}
    assert in_lobby[ids[alice]] == seen_by_bob[ids[alice]]
    assert in_lobby[ids[bob]] == seen_by_alice[ids[bob]]
    await alice.shot("names-alice")
    await bob.shot("names-bob")


async def test_papas_with_bots_and_a_reaction_countdown(people: People) -> None:
    alice = await alone_with_bots(
        people,
        "papas",
        seats=3,
        options={"reaction_seconds": "1", "win_threshold": "5"},
        shots="papas",
    )
    log = await log_lines(alice.page)
    assert any("to react" in line for line in log), "no reaction window was told"


async def test_macaua_two_pages_and_a_bot_keys_in_the_page_a_reload_and_a_spectator(
    people: People,
) -> None:
    """Macaua: each seat's Ed25519 key and every deck's secrets are made in its page and kept
    in that tab's sessionStorage; each page makes its own moves of the deal and checks and
    signs every transition (the other page's moves and the bot's). Alice creates the table,
    Bob joins it from his lobby, a bot takes the third seat; they play to the audit, Alice
    reloads mid-game (her seat, its keys and its checked copy of the game survive it), a
    spectator sees no hand. Alice's secret key is in no frame her page sends."""
    alice, bob = await people(), await people()
    sent: list[str] = []  # every frame Alice's page sends to NATS

    def frame_sent(frame: str | bytes) -> None:
        sent.append(frame if isinstance(frame, str) else frame.decode("utf-8", "replace"))

    alice.page.on("websocket", lambda ws: ws.on("framesent", frame_sent))
    await alice.sign_in("Alice")
    await bob.sign_in("Bob")
    game = await create_table(alice, "macaua", seats=3, bots=1)
    await bob.page.locator(f'.table-row[data-game="{game}"] button.join').click()
    hand = alice.page.locator(".macaua .hand .card")
    await hand.first.wait_for(timeout=MOVE_WAIT_MS)
    await bob.page.locator(".macaua .hand .card").first.wait_for(timeout=MOVE_WAIT_MS)
    # Bob plays to the end meanwhile, waiting as long as Alice's reload and a spectator take
    bob_plays = asyncio.create_task(play(bob, wait_ms=4 * MOVE_WAIT_MS, prefer=PLAYS))
    await play(alice, moves=2, prefer=PLAYS)
    await alice.shot("macaua-table")

    # a spectator sees the table and the top card, never a card of a hand
    carol = await people(phone=True)
    await carol.sign_in("Carol")
    await carol.page.goto(f"{carol.url}#/watch/{game}")
    await carol.page.locator(".macaua .discard .card").wait_for(timeout=MOVE_WAIT_MS)
    assert await carol.page.locator(".macaua .hand").count() == 0
    held = set(await alice.page.locator(".macaua .hand .card").evaluate_all(CARDS))
    held |= set(await bob.page.locator(".macaua .hand .card").evaluate_all(CARDS))
    shown = set(await carol.page.locator(".card").evaluate_all(CARDS))
    assert held
    assert not held & shown, held & shown
    await carol.shot("macaua-spectator-phone")

    async def seat() -> dict[str, Any]:
        stored = await alice.page.evaluate(
            "key => sessionStorage.getItem(key)",
            f"cardroom.macaua.{await root(alice)}.{await me(alice)}.{game}",
        )
        assert stored is not None
        kept: dict[str, Any] = json.loads(stored)
        return kept

    seed = (await seat())["player"]["seed"]
    await alice.page.reload()
    await hand.first.wait_for(timeout=MOVE_WAIT_MS)  # opened again with the kept keys
    assert (await seat())["player"]["seed"] == seed
    await asyncio.gather(play(alice, prefer=PLAYS), bob_plays)
    for person in (alice, bob):
        places = await ranking(person.page)
        assert ranked(places) == 3, places
        log = await log_lines(person.page)
        assert any("every deck held exactly its cards" in line for line in log), log[-5:]
        assert await person.page.locator(".macaua .error").count() == 0  # nothing rejected
    await alice.shot("macaua-over")
    # over and audited: each tab forgets its seat (a kept one would fill the tab's storage
    # game after game), and the finished table still shows its result after a reload
    for person in (alice, bob):
        key = f"cardroom.macaua.{await root(person)}.{await me(person)}.{game}"
        assert await person.page.evaluate("key => sessionStorage.getItem(key)", key) is None
    await alice.page.reload()
    assert ranked(await ranking(alice.page)) == 3
    assert any('"verify_key"' in frame for frame in sent)  # its keys move went out
    assert not any(seed in frame for frame in sent)


CARDS = "nodes => nodes.map((n) => n.dataset.card)"
PLAYS = ".macaua button.action:not(.draw)"


async def root(person: Person) -> str:
    config: dict[str, str] = await person.page.evaluate(
        "async () => (await fetch('/config.json')).json()"
    )
    return config["root"]


async def me(person: Person) -> str:
    player: str = await person.page.evaluate(
        "root => JSON.parse(localStorage.getItem(`cardroom.identity.${root}`)).player",
        await root(person),
    )
    return player
