"""New guests per address: a burst, then a rate; trusted networks unlimited; memory bounded.

:class:`GuestAdmission` on a clock the test moves, then the responder that asks it: a guest
past its address's limit is refused with the wait in the reason, while a player from the
same address, and a guest from another, are still admitted.
"""

from __future__ import annotations

import pytest
from cardroom_natsauth import AuthCalloutResponder, GuestAdmission, nkeyjwt
from natsauth.natsauth_support import ISSUER_SEED, NOW, ROOT, SECRET, SERVER_SEED, request_claims
from natsauth.test_natsauth_callout import TOKEN, Request, _granted, _handle, _refusal


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _admission(clock: Clock, **options: object) -> GuestAdmission:
    options = {"rate": 6.0, "burst": 3, "trusted": (), **options}
    return GuestAdmission(clock=clock, **options)  # type: ignore[arg-type]


def test_a_burst_then_the_rate() -> None:
    clock = Clock()
    admission = _admission(clock)
    assert [admission.admit("203.0.113.7") for _ in range(3)] == [0.0, 0.0, 0.0]
    # 6 a minute: the next one in 10 s, and asking again does not bring it closer
    assert admission.admit("203.0.113.7") == pytest.approx(10.0)
    clock.now += 4
    assert admission.admit("203.0.113.7") == pytest.approx(6.0)
    clock.now += 6
    assert admission.admit("203.0.113.7") == 0.0
    assert admission.admit("203.0.113.7") == pytest.approx(10.0)
    # another address has its own bucket
    assert admission.admit("198.51.100.1") == 0.0
    # a long pause fills the bucket up to the burst, not beyond
    clock.now += 3600
    assert [admission.admit("203.0.113.7") for _ in range(4)][-1] > 0


def test_an_ipv6_network_is_one_address_and_trusted_networks_are_not_limited() -> None:
    clock = Clock()
    admission = _admission(clock, burst=1, trusted=("10.0.0.0/8", "fd00::/8"))
    assert admission.admit("2001:db8:1:2::1") == 0.0
    # another address of the same /64: the same subscriber
    assert admission.admit("2001:db8:1:2:ffff::9") > 0
    assert admission.admit("2001:db8:1:3::1") == 0.0
    # an IPv4 address written as IPv6 is that IPv4 address
    assert admission.admit("192.0.2.1") == 0.0
    assert admission.admit("::ffff:192.0.2.1") > 0
    for _ in range(10):
        assert admission.admit("10.1.2.3") == 0.0
        assert admission.admit("fd12::1") == 0.0
    # the defaults trust loopback and the private ranges
    default = GuestAdmission(clock=clock, burst=1)
    for host in ("127.0.0.1", "::1", "192.168.1.2", "172.20.0.5", "::ffff:10.0.0.1"):
        assert [default.admit(host) for _ in range(5)] == [0.0] * 5
    assert default.admit("203.0.113.9") == 0.0
    assert default.admit("203.0.113.9") > 0


def test_what_is_not_an_address_is_one_of_its_own_and_memory_is_bounded() -> None:
    clock = Clock()
    admission = _admission(clock, burst=1, max_addresses=100)
    assert admission.admit("not an address") == 0.0
    assert admission.admit("not an address") > 0
    assert admission.admit("") == 0.0
    for i in range(1000):
        admission.admit(f"203.0.{i // 256}.{i % 256}")
    assert len(admission) == 100
    # the address unseen longest was forgotten, and starts full again
    assert admission.admit("203.0.0.0") == 0.0


def test_settings_that_cannot_limit_are_refused() -> None:
    with pytest.raises(ValueError, match="rate"):
        GuestAdmission(rate=0)
    with pytest.raises(ValueError, match="burst"):
        GuestAdmission(burst=0)
    with pytest.raises(ValueError, match="does not appear to be"):
        GuestAdmission(trusted=("not a network",))


def _ask(responder: AuthCalloutResponder, connect: object, host: str) -> bytes:
    claims = request_claims(connect, host=host)
    request = Request(nkeyjwt.encode(claims, SERVER_SEED, now=NOW).encode())
    _handle(responder, request)
    assert len(request.answers) == 1
    return request.answers[0]


def test_the_callout_refuses_a_guest_past_its_addresses_limit() -> None:
    clock = Clock()
    responder = AuthCalloutResponder(
        issuer_seed=ISSUER_SEED,
        token_secret=SECRET,
        root=ROOT,
        admission=_admission(clock, burst=2),
        clock=lambda: NOW,
    )
    guest = {"user": "guest", "pass": "n" * 22}
    for _ in range(2):
        assert _granted(_ask(responder, guest, "203.0.113.7"))["name"] == "guest"
    reason = _refusal(_ask(responder, guest, "203.0.113.7"))
    assert reason == "too many new guests from this address; the next in 10 s"
    # a player from the same address is no guest; a guest from elsewhere has its own limit
    assert _granted(_ask(responder, {"auth_token": TOKEN}, "203.0.113.7"))["name"] == "alice"
    assert _granted(_ask(responder, guest, "198.51.100.1"))["name"] == "guest"
    clock.now += 10
    assert _granted(_ask(responder, guest, "203.0.113.7"))["name"] == "guest"
