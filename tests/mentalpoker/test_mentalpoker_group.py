"""Points and scalars: canonical encodings, arithmetic, identity handling."""

from __future__ import annotations

import pytest
from cardroom_mentalpoker import (
    GROUP_ORDER,
    EncodingError,
    MentalPokerError,
    Point,
    Scalar,
    base_point,
    hash_to_scalar,
    identity,
    mul_base,
    random_scalar,
)
from nacl import bindings

# an 8-torsion point (small order): valid curve point, not in the prime-order subgroup
SMALL_ORDER = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def test_scalar_arithmetic_matches_integers() -> None:
    a, b = random_scalar(), random_scalar()
    ia, ib = a.to_int(), b.to_int()
    assert (a + b).to_int() == (ia + ib) % GROUP_ORDER
    assert (a - b).to_int() == (ia - ib) % GROUP_ORDER
    assert (a * b).to_int() == (ia * ib) % GROUP_ORDER
    assert (-a).to_int() == (-ia) % GROUP_ORDER
    assert (a * a.invert()).to_int() == 1


def test_scalar_encoding_is_canonical() -> None:
    s = random_scalar()
    assert Scalar.from_hex(s.hex()) == s
    with pytest.raises(EncodingError):
        Scalar(GROUP_ORDER.to_bytes(32, "little"))
    with pytest.raises(EncodingError):
        Scalar.from_hex(s.hex().upper())
    with pytest.raises(EncodingError):
        Scalar.from_hex(s.hex()[:-2])
    with pytest.raises(EncodingError):
        Scalar.from_hex(12)
    with pytest.raises(MentalPokerError):
        Scalar.from_int(0).invert()


def test_scalar_repr_hides_value() -> None:
    s = random_scalar()
    assert s.hex() not in repr(s)


def test_point_validation_rejects_small_order_and_garbage() -> None:
    p = mul_base(random_scalar())
    assert Point.from_hex(p.hex()) == p
    assert Point(identity().value).is_identity
    with pytest.raises(EncodingError):
        Point(SMALL_ORDER)
    with pytest.raises(EncodingError):
        Point(b"\xff" * 32)
    with pytest.raises(EncodingError):
        Point(b"\x00" * 31)


def test_point_arithmetic_and_identity() -> None:
    a, b = random_scalar(), random_scalar()
    g = base_point()
    assert bindings.crypto_core_ed25519_is_valid_point(g.value)
    assert a * g == mul_base(a)
    assert mul_base(a) + mul_base(b) == mul_base(a + b)
    assert mul_base(a) - mul_base(b) == mul_base(a - b)
    assert -mul_base(a) == mul_base(-a)
    assert (mul_base(a) - mul_base(a)).is_identity
    assert Scalar.from_int(0) * g == identity()
    assert a * identity() == identity()
    assert identity() + mul_base(a) == mul_base(a)
    assert Scalar.from_int(GROUP_ORDER - 1) * g == -g


def test_hash_to_scalar_is_domain_separated() -> None:
    assert hash_to_scalar(b"d1", b"x") == hash_to_scalar(b"d1", b"x")
    assert hash_to_scalar(b"d1", b"x") != hash_to_scalar(b"d2", b"x")
    # length prefixes: moving bytes between parts changes the result
    assert hash_to_scalar(b"d", b"ab", b"c") != hash_to_scalar(b"d", b"a", b"bc")


def test_random_scalar_never_zero() -> None:
    draws = iter([bytes(64), bytes(64), b"\x05" + bytes(63)])
    assert random_scalar(lambda n: next(draws)).to_int() == 5
