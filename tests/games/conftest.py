"""Every game test here plays the same games in every run.

The rules and most bots draw from the harness's seeded generators, but Macaua's bots draw
their keys and shuffles from ``secrets``, whatever a harness's seed: a test that depends on
how a deal falls (a deck played out, an audit reached, a commitment let go) could pass on
one run and fail on the next. Here ``secrets`` draws from a generator seeded by the test's
id, for the test's duration only: the same cryptography, its randomness repeatable. (The
signing keys come from libsodium and still differ: they change the signatures and digests,
never how a game goes.)
"""

from __future__ import annotations

import random
import secrets
import zlib

import pytest


@pytest.fixture(autouse=True)
def _repeatable_secrets(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(zlib.crc32(request.node.nodeid.encode()))
    monkeypatch.setattr(secrets, "token_bytes", rng.randbytes)
    monkeypatch.setattr(secrets, "randbelow", rng.randrange)
