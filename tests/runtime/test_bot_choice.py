"""How the services that run bots ask one for its move (``cardroom_runtime.games.bot_choice``):
a bot whose choices are heavy CPU work is asked in a worker thread, and one that will not move
(``NoMove``) makes none."""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cardroom_engine import Message, NoMove
from cardroom_runtime.games import bot_choice


class Heavy:
    heavy_choices: ClassVar[bool] = True

    def __init__(self) -> None:
        self.thread: int | None = None

    def observe(self, message: Message) -> None:
        return None

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        self.thread = threading.get_ident()
        return actions[0]


class Unwilling(Heavy):
    heavy_choices: ClassVar[bool] = False

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        raise NoMove("nothing checked to act on")


async def test_a_heavy_bot_chooses_off_the_event_loop() -> None:
    bot = Heavy()
    choice = await bot_choice(bot, {}, [{"type": "go"}], random.Random(0), who="b in g")
    assert choice == {"type": "go"}
    assert bot.thread is not None
    assert bot.thread != threading.get_ident()


async def test_a_bot_that_will_not_move_makes_no_move() -> None:
    choice = await bot_choice(Unwilling(), {}, [{"type": "go"}], random.Random(0), who="b in g")
    assert choice is None
