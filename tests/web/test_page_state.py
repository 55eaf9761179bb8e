"""What a table page keeps and shows between the views the server sends: the 66 game's
hands after each move, the labels of moves that differ only in their target, and a page whose
localStorage is full.

Some tests send the page a notification of their own (over NATS, as the server's would come)
with a view and actions made by the game's own code: a position that random play seldom
reaches (a 9 or 10 discarded at a 3-seat table, a papas hand above 7 cards) is then shown at
once.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import nats
import pytest
from cardroom_games.papas import commands as papas_commands
from cardroom_games.papas import protocol as papas_protocol
from cardroom_games.papas.cards import WILDCARD_IDS, card_values
from cardroom_games.papas.state import DISCARD_PHASE, PapasState
from cardroom_games.sixtysix import moves as ss_moves
from cardroom_games.sixtysix import protocol as ss_protocol
from cardroom_games.sixtysix.state import EXCHANGE, PEEK_OTHER, SWAP_OTHER, SixtySixState
from cardroom_wire.subjects import Subjects
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from support.browser import People, Person, WebStack
from test_browser import MOVE_WAIT_MS, create_table, me, play, ranked, ranking, root


async def sync_view(nats_url: str, web_stack: WebStack, player: str, game: str) -> dict[str, Any]:
    """The player's whole view as the server has it now (a sync, as a reconnect asks)."""
    # the services answer a player's requests only below its own inbox
    nc = await nats.connect(nats_url, inbox_prefix=Subjects(web_stack.root).inbox(player))
    try:
        reply = await nc.request(
            Subjects(web_stack.root).sync(game, player), json.dumps({"type": "sync"}).encode(), 10
        )
    finally:
        await nc.close()
    answer: dict[str, Any] = json.loads(reply.data)
    assert answer["ok"], answer
    return answer


# every seat's cards as the page draws them ("?" where the player does not know the value)
SHOWN_HANDS = """() => [...document.querySelectorAll('.sixtysix .seats .seat')].map(
    (seat) => [...seat.querySelectorAll('.cards .card .face')].map((c) => c.textContent))"""


async def wait_for_hands(page: Page, hands: list[list[int | None]]) -> None:
    expected = [["?" if v is None else str(v) for v in hand] for hand in hands]
    try:
        await page.wait_for_function(
            f"(want) => JSON.stringify(({SHOWN_HANDS})()) === JSON.stringify(want)",
            arg=expected,
            timeout=MOVE_WAIT_MS,
        )
    except PlaywrightError:
        shown = await page.evaluate(SHOWN_HANDS)
        raise AssertionError(f"the page shows {shown}, the player's view is {expected}") from None


async def first_offered(*people: Person) -> Person:
    """The first of ``people`` whose page offers a move (waits for one)."""
    waits = {
        asyncio.ensure_future(
            p.page.locator("button.action").first.wait_for(timeout=MOVE_WAIT_MS)
        ): p
        for p in people
    }
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        task.result()  # a page that offered nothing in time fails here
    return next(waits[t] for t in waits if t in done)


async def take_a_turn(mover: Person, other: Person, rng: random.Random, first: bool) -> None:
    """A first turn draws and replaces card 1 with the card drawn; a later one opens with any
    move but a stop. Then offered moves are clicked until the turn passes to ``other``."""
    page = mover.page
    if first:
        await page.locator("button.action", has_text="Take card from deck").click()
        await page.locator(
            "button.action:text-is('Pick own card: card 1'), "
            "button.action:text-is('Replace card from deck: card 1')"
        ).first.click(timeout=MOVE_WAIT_MS)
    while await first_offered(mover, other) is mover:
        buttons = page.locator("button.action")
        texts = [t for t in await buttons.all_inner_texts() if t != "Stop round"]
        if not texts:
            continue  # re-rendered between the two looks
        try:
            await buttons.filter(has_text=rng.choice(texts)).first.click(timeout=2_000)
        except PlaywrightError:
            continue  # the next notification replaced the buttons under the click


@pytest.mark.parametrize("protocol", ["v2", "v1"])
async def test_sixtysix_hands_stay_true_after_each_move(
    people: People, web_stack: WebStack, nats_url: str, protocol: str
) -> None:
    """After each player's move (card 1 replaced by the card drawn first, then random moves:
    replacements, claims, powers on another's card) its page shows every hand as the
    player's own view has it while the other seat plays: the page gets no view until it must
    act again, so it folds each message into the hands."""
    alice, bob = await people(), await people()
    await alice.sign_in("Alice")
    await bob.sign_in("Bob")
    game = await create_table(alice, "sixtysix", seats=2, bots=0, options={"protocol": protocol})
    await bob.page.locator(f'.table-row[data-game="{game}"] button.join').click()
    ids = {alice: await me(alice), bob: await me(bob)}
    rng = random.Random()
    moved: set[Person] = set()
    for _ in range(8):
        mover = await first_offered(alice, bob)
        other = bob if mover is alice else alice
        await take_a_turn(mover, other, rng, first=mover not in moved)
        moved.add(mover)
        # the other seat holds the turn and does not move: the player's view stands still
        view = (await sync_view(nats_url, web_stack, ids[mover], game))["view"]["state"]
        assert not view["actions"]
        await wait_for_hands(mover.page, view["hands"])
    await alice.shot(f"sixtysix-{protocol}-hands")


async def send_notification(
    nats_url: str, web_stack: WebStack, player: str, game: str, note: dict[str, Any]
) -> None:
    """Publish ``note`` to the player's page as the server publishes its notifications."""
    nc = await nats.connect(nats_url)
    try:
        body = {"type": "notification", "game": game, "player": player, "ack": False, **note}
        await nc.publish(Subjects(web_stack.root).player(player, game), json.dumps(body).encode())
        await nc.flush()
    finally:
        await nc.close()


async def show_position(
    person: Person,
    nats_url: str,
    web_stack: WebStack,
    game_type: str,
    seats: list[str],
    view: dict[str, Any],
    actions: list[dict[str, Any]],
    config: dict[str, Any],
) -> list[str]:
    """Open a table of ``seats`` (the page's player first; waiting in the lobby: its game
    never starts), then show the page a start that carries ``view`` and ``actions``; return
    the labels of its moves."""
    game = await create_table(person, game_type, seats=len(seats), bots=0, options=None)
    player = seats[0]
    started = {"type": "GameStarted", "game": game, "game_type": game_type, "seats": seats}
    table_view = {"game": game, "game_type": game_type, "status": "playing", "seats": seats}
    note = {
        "seq": 1,
        "version": 1,
        "message": {**started, "config": config},
        "view": {**table_view, "config": config, "state": view},
        "actions": actions,
    }
    await send_notification(nats_url, web_stack, player, game, note)
    buttons = person.page.locator(".choices button.action")
    await buttons.first.wait_for(timeout=MOVE_WAIT_MS)
    return await buttons.all_inner_texts()


OTHERS = ["pbob0000001", "pcarol00001"]  # the page names them by their ids: distinct names


def sixtysix_position(player: str, protocol: str, phase: str) -> SixtySixState:
    """Seat 0 (the page's player) holds a power over the two other seats' cards."""
    return SixtySixState(
        protocol=protocol,
        seats=(player, *OTHERS),
        totals=(0, 0, 0),
        round=1,
        turn=4,
        phase=phase,
        hands=((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12)),
        known=((1, 1, 0, 0), (2, 2, 0, 0), (4, 4, 0, 0)),
        deck_size=30,
        discard=9,
    )


@pytest.mark.parametrize(
    ("protocol", "phase"),
    [("v2", PEEK_OTHER), ("v2", SWAP_OTHER), ("v1", PEEK_OTHER), ("v1", EXCHANGE)],
)
async def test_sixtysix_powers_name_the_player_and_the_cards(
    people: People, web_stack: WebStack, nats_url: str, protocol: str, phase: str
) -> None:
    """A power on another's card at a 3-seat table: each button names whose card (by the name
    the page shows for that seat) and which, and a v1 exchange both cards."""
    alice = await people()
    await alice.sign_in("Alice")
    player = await me(alice)
    state = sixtysix_position(player, protocol, phase)
    actions = ss_moves.legal(state)
    labels = await show_position(
        alice,
        nats_url,
        web_stack,
        "sixtysix",
        list(state.seats),
        ss_protocol.view(state, player),
        actions,
        {"protocol": protocol},
    )
    names = await alice.page.locator(".sixtysix .seat .chip .who").all_inner_texts()
    assert len(set(names)) == 3, names
    assert len(labels) == len(actions), labels
    assert len(set(labels)) == len(labels), labels
    for action, label in zip(actions, labels, strict=True):
        target = int(action.get("anotherPlayerIndex", action.get("playerIndex", -1)))
        card = action.get("anotherPlayerCardIndex", action["cardIndex"])
        assert f"{names[target]}'s card {card + 1}" in label, (action, label)
        if action["type"] == "ExchangeCards":
            assert f"your card {action['cardIndex'] + 1}" in label, (action, label)


async def test_papas_discard_buttons_name_their_cards(
    people: People, web_stack: WebStack, nats_url: str
) -> None:
    """A hand above 7 cards at the end of a turn: one "Discard" button per face, each naming
    its card (two wildcards of different values by their values too)."""
    alice = await people()
    await alice.sign_in("Alice")
    player = await me(alice)
    wildcards = WILDCARD_IDS[:2]
    hand = (0, 16, *wildcards, 40, 41, 60, 70, 80)  # 9 cards, 8 faces (40 and 41: one face)
    state = PapasState(
        seats=(player, OTHERS[0]),
        threshold=8,
        reaction_seconds=5.0,
        values=card_values([1, 2, 3]),
        phase=DISCARD_PHASE,
        hands=(hand, (1, 2)),
        potatoes=(0, 0),
        deck=(3, 4, 5),
    )
    actions = papas_commands.actions(state, player)
    view = papas_protocol.view(state, player)
    labels = await show_position(
        alice, nats_url, web_stack, "papas", list(state.seats), view, actions, {}
    )
    assert [a["type"] for a in actions] == ["DiscardCard"] * 8
    assert len(labels) == len(actions), labels
    assert len(set(labels)) == len(labels), labels
    faces = {card["id"]: card for card in view["hand"]}
    for action, label in zip(actions, labels, strict=True):
        name = faces[action["card"]]["name"].replace("_", " ").capitalize()
        assert label.startswith(f"Discard {name}"), (action, label)


# Fill the origin's localStorage to the brim: others' keys in large pieces, then logs of
# earlier games (as the page keeps them) down to small ones. Returns both lists of keys.
FILL = """([logs, other]) => {
    const fill = (prefix, size) => {
        const made = [];
        for (;;) {
            const key = `${prefix}${made.length}.${size}`;
            try { localStorage.setItem(key, 'x'.repeat(size)); } catch { return made; }
            made.push(key);
        }
    };
    const others = fill(other, 100000);
    const kept = [];
    for (let size = 20000; size >= 50; size = Math.floor(size / 2)) kept.push(...fill(logs, size));
    return [kept, others];
}"""


async def test_a_full_local_storage_stops_neither_the_table_nor_the_notifications(
    people: People,
) -> None:
    """With localStorage full, the page still opens the table it creates (the bots' names are
    a convenience), shows and acknowledges every notification to the game's end, and keeps
    this table's log by removing earlier games' logs (never another key)."""
    alice = await people()
    await alice.sign_in("Alice")
    player = await me(alice)
    prefix = f"cardroom.log.{await root(alice)}.{player}."
    old_logs, others = await alice.page.evaluate(FILL, [f"{prefix}earlier", "cardroom.test."])
    assert old_logs
    assert others
    game = await create_table(alice, "take5", seats=2, bots=1)
    await play(alice)
    assert ranked(await ranking(alice.page)) == 2
    stored = await alice.page.evaluate("() => ({...localStorage})")
    assert json.loads(stored[f"{prefix}{game}"])[-1] == "Game over."
    assert any(key not in stored for key in old_logs)  # room was made from earlier logs
    assert all(key in stored for key in others)


async def test_macaua_from_the_page_has_a_move_timeout_and_another_tab_says_where_the_keys_are(
    people: People, web_stack: WebStack, nats_url: str
) -> None:
    """Nobody can make a Macaua seat's moves but the tab holding its keys: a table made from
    the page gives up on a closed tab after a while (its move timeout, filled in), and the
    same seat opened in another tab says where its keys are instead of waiting for others."""
    alice = await people()
    await alice.sign_in("Alice")
    await alice.page.select_option("#game-type", "macaua")
    await alice.page.click("details summary")
    assert await alice.page.locator("[name=move_timeout]").input_value() == "120"
    game = await create_table(alice, "macaua", seats=2, bots=1)
    await alice.page.locator(".macaua .hand .card").first.wait_for(timeout=MOVE_WAIT_MS)
    view = (await sync_view(nats_url, web_stack, await me(alice), game))["view"]
    assert view["config"]["move_timeout"] == 120

    tab = await alice.context.new_page()  # a tab of its own: none of the seat's keys
    await tab.goto(f"{alice.url}#/table/{game}")
    banner = tab.locator(".turn-banner .orphan")
    await banner.wait_for(timeout=MOVE_WAIT_MS)
    assert "another browser tab" in await banner.inner_text()
    assert await tab.locator(".waiting-turn").count() == 0


async def test_a_take5_card_played_is_marked_until_every_seat_has_played(
    people: People, web_stack: WebStack
) -> None:
    """take5's cards are shown together once every seat has played: until then the page
    marks the card its player sent (it stays in the hand, and nothing else says so)."""
    alice, bob = await people(), await people()
    await alice.sign_in("Alice")
    await bob.sign_in("Bob")
    game = await create_table(alice, "take5", seats=2, bots=0)
    await bob.page.locator(f'.table-row[data-game="{game}"] button.join').click()
    card = alice.page.locator(".take5 .hand button.action").first
    await card.wait_for(timeout=MOVE_WAIT_MS)
    face = (await card.locator(".face").inner_text()).strip()
    await card.click()
    # Bob has not played: Alice's card is marked, and the page says what it waits for
    await alice.page.locator(".take5 .hand .card.sent").wait_for(timeout=MOVE_WAIT_MS)
    assert (await alice.page.locator(".take5 .hand .card.sent .face").inner_text()) == face
    assert await alice.page.locator(".take5 .status.sent").inner_text() == (
        f"You played {face}: waiting for the others."
    )
    # Bob plays: both cards are shown on the table, and the mark goes with the card
    await bob.page.locator(".take5 .hand button.action").first.click(timeout=MOVE_WAIT_MS)
    await alice.page.locator(".take5 .hand .card.sent").wait_for(
        state="detached", timeout=MOVE_WAIT_MS
    )


async def test_a_halt_in_this_seats_name_that_its_page_signed_through_blames_the_server(
    people: People, web_stack: WebStack, nats_url: str
) -> None:
    """A Macaua table halted in Alice's name while her page signed every transition (the
    page is sent such a halt, as a lying server would send it): her copy refuses it
    (``false_halt``) and the page says the server halted the table in her name though her
    page signed everything, never that she rejected a transition."""
    alice = await people()
    await alice.sign_in("Alice")
    player = await me(alice)
    game = await create_table(alice, "macaua", seats=2, bots=1)
    # her turn to play: the table waits for her, so nothing else reaches the page meanwhile
    await alice.page.locator(".your-turn").wait_for(timeout=MOVE_WAIT_MS)
    await alice.page.locator(".macaua button.action").first.wait_for(timeout=MOVE_WAIT_MS)
    synced = await sync_view(nats_url, web_stack, player, game)
    version = synced["version"]
    halted = {
        "player": player,
        "version": version,
        "blame": player,
        "claim": None,
        "code": "bad_signature",
        "reason": "the acknowledgement's signature does not verify",
        "evidence": {},
    }
    message = {
        "type": "MacauaUpdate",
        "event": "rejected",
        "seq": 999,
        "phase": "over",
        "waiting": [],
        "player": player,
        "transition": {"type": "macaua.rejected", **halted},
        "rejected": halted,
    }
    note = {"seq": synced["last_seq"] + 1, "version": version + 1, "message": message}
    await send_notification(nats_url, web_stack, player, game, note)
    refusal = alice.page.locator(".macaua .error.refusal")
    await refusal.wait_for(timeout=MOVE_WAIT_MS)
    assert "server halted the table in your name" in await refusal.inner_text()
    assert "this page signed every transition" in await refusal.inner_text()
    line = (await alice.page.locator(".log li").all_inner_texts())[-1]
    assert line == (
        "The server halted the table in your name (bad_signature), though this page signed "
        "every transition: the server is at fault. It ranks you last."
    )
    assert "rejected a transition" not in await alice.page.locator(".board").inner_text()


async def test_the_lobby_forgets_a_kept_macaua_seat_whose_table_is_gone(
    people: People,
) -> None:
    """A Macaua seat this tab kept at a table the server no longer knows (a game that never
    ended here, its table gone) is forgotten once the lobby learns so; a seat at a table
    still open stays."""
    alice = await people()
    await alice.sign_in("Alice")
    prefix = f"cardroom.macaua.{await root(alice)}.{await me(alice)}."
    game = await create_table(alice, "macaua", seats=3, bots=0)  # waits for players
    await alice.page.locator(".lobby-board").wait_for()
    gone = f"{prefix}{game[:-4]}zzzz"
    await alice.page.evaluate("key => sessionStorage.setItem(key, '{}')", gone)
    await alice.page.goto(f"{alice.url}#/")
    await alice.page.wait_for_function(
        "key => sessionStorage.getItem(key) === null", arg=gone, timeout=MOVE_WAIT_MS
    )
    kept = await alice.page.evaluate("key => sessionStorage.getItem(key)", f"{prefix}{game}")
    assert kept is not None
