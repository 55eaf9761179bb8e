"""The flood guard's decisions: which connection floods, who is banned, for how long; and the
callout refusing a banned player or guest. (The guard on a real nats-server:
tests/deploy/test_deploy_flood_guard.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_natsauth import AuthCalloutResponder, Bans, FloodWatch, issue_player_token, nkeyjwt
from cardroom_natsauth.guard import Connection, ban_key, connections_of
from natsauth.natsauth_support import ISSUER_SEED, NOW, ROOT, SECRET, SERVER_SEED, request_claims


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def conn(
    user: str, in_msgs: int, seen: float, cid: int = 1, host: str = "10.0.0.1", start: float = 0.0
) -> Connection:
    return Connection(
        server="NSERVER", cid=cid, user=user, host=host, in_msgs=in_msgs, start=start, seen=seen
    )


def test_a_connection_is_judged_by_its_rate_between_two_readings() -> None:
    watch = FloodWatch(limit=1000, window=0.5)
    # connected 100 s ago at a client's pace
    assert watch.observe([conn("alice", 50_000, seen=100.0)]) == []
    # 499 in half a second: 998 a second, under the limit
    assert watch.observe([conn("alice", 50_499, seen=100.5)]) == []
    # 501 in half a second: over it
    flooding = conn("alice", 51_000, seen=101.0)
    assert watch.observe([flooding]) == [flooding]


def test_a_new_connection_is_judged_from_its_start_once_it_sent_a_windows_worth() -> None:
    watch = FloodWatch(limit=1000, window=0.5)
    # a burst of 400 in 10 ms at connect is not a flood; 600 in 0.3 s is
    assert watch.observe([conn("alice", 400, seen=10.01, start=10.0, cid=1)]) == []
    fast = conn("bob", 600, seen=10.3, start=10.0, cid=2)
    assert watch.observe([fast]) == [fast]


def test_static_users_are_never_judged_and_gone_connections_are_forgotten() -> None:
    watch = FloodWatch(limit=10, window=1.0)
    watch.observe([conn("service", 0, 0.0, cid=1), conn("bob", 0, 0.0, cid=2)])
    assert watch.observe([conn("service", 10**9, 1.0, cid=1)]) == []
    # bob's connection 2 vanished; a new connection 2 that started at 1.5 is judged anew
    assert watch.observe([conn("bob", 5, 2.0, cid=2, start=1.5)]) == []
    flooding = conn("bob", 5 + 11, 3.0, cid=2, start=1.5)
    assert watch.observe([flooding]) == [flooding]


def test_each_connection_has_its_own_rate() -> None:
    watch = FloodWatch(limit=100, window=1.0)
    watch.observe(
        [conn("alice", 0, 0.0, cid=1), conn("alice", 0, 0.0, cid=2), conn("bob", 0, 0.0, cid=3)]
    )
    flooding = watch.observe(
        [
            conn("alice", 99, 1.0, cid=1),
            conn("alice", 500, 1.0, cid=2),
            conn("bob", 100, 1.0, cid=3),
        ]
    )
    assert flooding == [conn("alice", 500, 1.0, cid=2)]


@pytest.mark.parametrize(("limit", "window"), [(0, 1), (-1, 1), (float("nan"), 1), (1, 0)])
def test_a_limit_and_window_must_be_positive(limit: float, window: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        FloodWatch(limit=limit, window=window)


def test_bans_expire_and_a_longer_one_is_kept() -> None:
    clock = Clock()
    bans = Bans(clock)
    bans.ban("player:alice", 60)
    clock.now += 10
    bans.ban("player:alice", 5)  # a shorter ban does not shorten the one in force
    assert bans.remaining("player:alice") == pytest.approx(50)
    assert bans.remaining("player:bob") == 0
    clock.now += 50
    assert bans.remaining("player:alice") == 0
    assert len(bans) == 0


def test_players_are_banned_by_id_and_guests_by_address() -> None:
    assert ban_key("alice", "10.0.0.1") == "player:alice"
    assert ban_key("guest", "10.0.0.1") == "host:10.0.0.1"


def test_connz_answers_are_read_and_others_refused() -> None:
    answer = {
        "server": {"id": "NSERVER"},
        "data": {
            "now": "2026-11-26T22:14:52.500000000Z",
            "total": 2,
            "connections": [
                {
                    "cid": 7,
                    "authorized_user": "alice",
                    "ip": "10.0.0.1",
                    "in_msgs": 12,
                    "start": "2026-11-26T22:14:52.250000001Z",
                },
                "not a connection",
            ],
        },
    }
    server, total, [alice] = connections_of(answer)
    assert (server, total) == ("NSERVER", 2)
    assert (alice.cid, alice.user, alice.host, alice.in_msgs) == (7, "alice", "10.0.0.1", 12)
    assert alice.seen - alice.start == pytest.approx(0.25)
    with pytest.raises(ValueError, match="not a CONNZ answer"):
        connections_of({"error": {"code": 403, "description": "no"}})


def test_the_callout_refuses_a_banned_player_and_a_banned_address() -> None:
    bans = Bans()
    responder = AuthCalloutResponder(
        issuer_seed=ISSUER_SEED, token_secret=SECRET, root=ROOT, bans=bans, clock=lambda: NOW
    )

    def answer(connect: dict[str, object], host: str = "10.0.0.1") -> dict[str, Any]:
        claims = request_claims(connect, host=host)
        reply = responder.authorize(nkeyjwt.encode(claims, SERVER_SEED, now=NOW).encode())
        assert reply is not None
        nats: dict[str, Any] = nkeyjwt.decode(reply)["nats"]
        return nats

    def token(player: str) -> dict[str, object]:
        return {"auth_token": issue_player_token(SECRET, ROOT, player, ttl=600, now=NOW)}

    guest = {"user": "guest", "pass": "n" * 22}
    assert "jwt" in answer(token("alice"))
    assert "jwt" in answer(guest)
    bans.ban("player:alice", 60)
    bans.ban("host:10.0.0.9", 60)
    refused = answer(token("alice"))
    assert "flooding" in refused["error"]
    assert "jwt" not in refused
    assert "jwt" in answer(token("bob"))
    assert "flooding" in answer(guest, host="10.0.0.9")["error"]
    assert "jwt" in answer(guest, host="10.0.0.1")
