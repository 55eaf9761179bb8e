"""The prime-order group: Ed25519's main subgroup through libsodium (PyNaCl's build of it).

Notation is additive: ``P + Q`` adds points, ``s * P`` multiplies a
point by a scalar, ``G`` is the standard base point and
``ℓ = 2^252 + 27742317777372353535851937790883648493`` is the group order.

Every :class:`Point` is either the identity or a canonical encoding of a point in the
prime-order subgroup (libsodium's ``crypto_core_ed25519_is_valid_point`` rejects small-order
and mixed-order points, so the cofactor of Curve25519 can never leak a bit). Every
:class:`Scalar` is canonical (``< ℓ``), so encodings are unique and cannot be malleated.

libsodium refuses the identity as an input to scalar multiplication and refuses a zero
scalar; the wrappers here handle both cases explicitly (``0 * P = s * O = O``), because the
masking scheme needs the identity: an open card is ``(O, M, O)``.

Calls go straight to libsodium through PyNaCl's cffi module (``nacl._sodium``), not through
``nacl.bindings``, whose per-call checks and conversions cost about 4 µs a call (a fifth of
a point addition). Each call writes into a buffer of its own, so every function here is
thread-safe, and cffi releases the GIL during each libsodium call: proofs made or checked in
a thread pool (``asyncio.to_thread``) run in parallel on several cores and leave an event
loop free.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from nacl._sodium import ffi as _ffi
from nacl._sodium import lib as _lib_untyped

__all__ = [
    "GROUP_ORDER",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "EncodingError",
    "MentalPokerError",
    "PackedPoints",
    "Point",
    "Scalar",
    "VerificationError",
    "base_point",
    "hash_to_scalar",
    "identity",
    "mul_base",
    "random_scalar",
]

GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
SCALAR_BYTES = 32
POINT_BYTES = 32

_IDENTITY_BYTES = b"\x01" + bytes(31)
_ZERO_BYTES = bytes(32)
_BASE_BYTES = bytes.fromhex("5866666666666666666666666666666666666666666666666666666666666666")
_HEX_DIGITS = frozenset("0123456789abcdef")

_lib: Any = _lib_untyped
_buf: Callable[[str], Any] = _ffi.new
# ffi.buffer(out) is a cffi buffer; its [:] copies the 32 bytes out as bytes
_unpack: Callable[[Any], bytes] = _ffi.buffer
_scalarmult_noclamp = _lib.crypto_scalarmult_ed25519_noclamp
_scalarmult_base_noclamp = _lib.crypto_scalarmult_ed25519_base_noclamp
_core_add = _lib.crypto_core_ed25519_add
_core_sub = _lib.crypto_core_ed25519_sub
_is_valid_point = _lib.crypto_core_ed25519_is_valid_point
_core_from_uniform = _lib.crypto_core_ed25519_from_uniform
_scalar_reduce = _lib.crypto_core_ed25519_scalar_reduce
_scalar_add = _lib.crypto_core_ed25519_scalar_add
_scalar_sub = _lib.crypto_core_ed25519_scalar_sub
_scalar_mul = _lib.crypto_core_ed25519_scalar_mul
_scalar_negate = _lib.crypto_core_ed25519_scalar_negate
_scalar_invert = _lib.crypto_core_ed25519_scalar_invert
_OUT = "unsigned char[32]"


class MentalPokerError(ValueError):
    """Base class of every error this library raises on bad input."""


class EncodingError(MentalPokerError):
    """A value could not be decoded: wrong length, not hex, not canonical, not in the group."""


class VerificationError(MentalPokerError):
    """A published value, proof, step or signature does not verify."""


def _from_hex(text: object, nbytes: int, what: str) -> bytes:
    if not isinstance(text, str):
        raise EncodingError(f"{what}: expected a hex string, got {type(text).__name__}")
    if len(text) != 2 * nbytes or not set(text) <= _HEX_DIGITS:
        raise EncodingError(f"{what}: expected {2 * nbytes} lowercase hex digits")
    return bytes.fromhex(text)


@dataclass(frozen=True, slots=True)
class Scalar:
    """An integer modulo ℓ, stored as 32 little-endian bytes (canonical: value < ℓ).

    The repr never shows the value: scalars are often secret keys.
    """

    value: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes) or len(self.value) != SCALAR_BYTES:
            raise EncodingError("scalar: expected 32 bytes")
        if int.from_bytes(self.value, "little") >= GROUP_ORDER:
            raise EncodingError("scalar: not canonical (>= group order)")

    def __repr__(self) -> str:
        return "Scalar(<hidden>)"

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_int(cls, n: int) -> Scalar:
        return _scalar_unchecked((n % GROUP_ORDER).to_bytes(SCALAR_BYTES, "little"))

    @classmethod
    def from_hex(cls, text: object) -> Scalar:
        return cls(_from_hex(text, SCALAR_BYTES, "scalar"))

    @classmethod
    def from_hex_unchecked(cls, text: str) -> Scalar:
        """Decode hex that :meth:`from_hex` accepted before (e.g. a move read back from the
        accepted moves of a game), without checking it again. Never for untrusted input."""
        return _scalar_from_hex_unchecked(text)

    @classmethod
    def reduce(cls, wide: bytes) -> Scalar:
        """Reduce 64 bytes (e.g. a SHA-512 digest) modulo ℓ."""
        if len(wide) != 64:
            raise EncodingError("scalar reduce: expected 64 bytes")
        out = _buf(_OUT)
        _scalar_reduce(out, wide)
        return _scalar_unchecked(_unpack(out)[:])

    # -- encoding -----------------------------------------------------------------------
    def hex(self) -> str:
        return self.value.hex()

    def to_int(self) -> int:
        return int.from_bytes(self.value, "little")

    @property
    def is_zero(self) -> bool:
        return self.value == _ZERO_BYTES

    # -- arithmetic mod ℓ ---------------------------------------------------------------
    def __add__(self, other: Scalar) -> Scalar:
        out = _buf(_OUT)
        _scalar_add(out, self.value, other.value)
        return _scalar_unchecked(_unpack(out)[:])

    def __sub__(self, other: Scalar) -> Scalar:
        out = _buf(_OUT)
        _scalar_sub(out, self.value, other.value)
        return _scalar_unchecked(_unpack(out)[:])

    def __neg__(self) -> Scalar:
        out = _buf(_OUT)
        _scalar_negate(out, self.value)
        return _scalar_unchecked(_unpack(out)[:])

    @overload
    def __mul__(self, other: Scalar) -> Scalar: ...
    @overload
    def __mul__(self, other: Point) -> Point: ...
    def __mul__(self, other: Scalar | Point) -> Scalar | Point:
        if isinstance(other, Scalar):
            out = _buf(_OUT)
            _scalar_mul(out, self.value, other.value)
            return _scalar_unchecked(_unpack(out)[:])
        if isinstance(other, Point):
            if other.value == _BASE_BYTES:
                return _point_unchecked(_scalarmult_base(self.value))
            return _point_unchecked(_scalarmult(self.value, other.value))
        return NotImplemented

    def invert(self) -> Scalar:
        if self.is_zero:
            raise MentalPokerError("scalar: zero has no inverse")
        out = _buf(_OUT)
        if _scalar_invert(out, self.value) != 0:
            raise MentalPokerError("scalar: zero has no inverse")
        return _scalar_unchecked(_unpack(out)[:])


@dataclass(frozen=True, slots=True)
class Point:
    """A point of the prime-order subgroup (or the identity), as its 32-byte encoding."""

    value: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes) or len(self.value) != POINT_BYTES:
            raise EncodingError("point: expected 32 bytes")
        if self.value != _IDENTITY_BYTES and _is_valid_point(self.value) != 1:
            raise EncodingError("point: not a canonical point of the prime-order subgroup")

    def __repr__(self) -> str:
        return f"Point({self.value.hex()[:16]}…)"

    @classmethod
    def from_hex(cls, text: object) -> Point:
        return cls(_from_hex(text, POINT_BYTES, "point"))

    @classmethod
    def from_hex_unchecked(cls, text: str) -> Point:
        """Decode hex that :meth:`from_hex` accepted before (e.g. a move read back from the
        accepted moves of a game), without the costly subgroup check. Never for untrusted
        input: it is what keeps small-order points out."""
        return _point_from_hex_unchecked(text)

    def hex(self) -> str:
        return self.value.hex()

    @property
    def is_identity(self) -> bool:
        return self.value == _IDENTITY_BYTES

    def __add__(self, other: Point) -> Point:
        return _point_unchecked(_add(self.value, other.value))

    def __sub__(self, other: Point) -> Point:
        return _point_unchecked(_sub(self.value, other.value))

    def __neg__(self) -> Point:
        return _point_unchecked(_sub(_IDENTITY_BYTES, self.value))


# The slots' own setters: what object.__setattr__ ends up calling (past the frozen
# dataclass's refusal), without looking the attribute up first. Every group operation and
# every unchecked decoding makes its result through these.
_new = object.__new__
_fromhex = bytes.fromhex
_set_scalar: Callable[[Scalar, bytes], None] = Scalar.__dict__["value"].__set__
_set_point: Callable[[Point, bytes], None] = Point.__dict__["value"].__set__


def _scalar_unchecked(value: bytes) -> Scalar:
    """Wrap bytes that libsodium returned (already canonical) without re-checking them."""
    s = _new(Scalar)
    _set_scalar(s, value)
    return s


def _point_unchecked(value: bytes) -> Point:
    """Wrap bytes that libsodium returned (already in the subgroup) without re-checking."""
    p = _new(Point)
    _set_point(p, value)
    return p


def _encoding_at(data: bytes, i: int) -> bytes:
    """The ``i``-th point's 32 bytes in points packed one after another."""
    return data[i * POINT_BYTES : (i + 1) * POINT_BYTES]


class PackedPoints(Sequence[Point]):
    """Points accepted before, kept as one bytes object of their encodings (32 bytes each)
    and wrapped when read: a :class:`Point` each costs about 120 bytes against 32, and a
    table keeps every player's 55 commitments for each deck in play. Equal to a tuple of
    the same points."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        if len(data) % POINT_BYTES:
            raise EncodingError("packed points: not a whole number of points")
        self._data = data

    @classmethod
    def from_hex_unchecked(cls, texts: Iterable[str]) -> PackedPoints:
        """The points of hex accepted before (see ``Point.from_hex_unchecked``)."""
        return cls(_fromhex("".join(texts)))

    @property
    def data(self) -> bytes:
        """The points' encodings, 32 bytes each, in order."""
        return self._data

    def __len__(self) -> int:
        return len(self._data) // POINT_BYTES

    @overload
    def __getitem__(self, index: int) -> Point: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Point, ...]: ...
    def __getitem__(self, index: int | slice) -> Point | tuple[Point, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        n = len(self._data) // POINT_BYTES
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("packed points: index out of range")
        return _point_unchecked(_encoding_at(self._data, index))

    def __iter__(self) -> Iterator[Point]:
        data = self._data
        for i in range(len(data) // POINT_BYTES):
            yield _point_unchecked(_encoding_at(data, i))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedPoints):
            return self._data == other._data
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple(self) == other

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PackedPoints({len(self)} points)"


def _scalar_from_hex_unchecked(text: str) -> Scalar:
    """``Scalar.from_hex_unchecked`` in one call: folding decodes thousands of them."""
    s = _new(Scalar)
    _set_scalar(s, _fromhex(text))
    return s


def _point_from_hex_unchecked(text: str) -> Point:
    """``Point.from_hex_unchecked`` in one call: folding decodes thousands of them."""
    p = _new(Point)
    _set_point(p, _fromhex(text))
    return p


def _scalarmult(scalar: bytes, point: bytes) -> bytes:
    if scalar == _ZERO_BYTES or point == _IDENTITY_BYTES:
        return _IDENTITY_BYTES
    # point is in the prime-order subgroup and scalar is non-zero mod ℓ, so the product is
    # never the identity and libsodium does not refuse it.
    out = _buf(_OUT)
    if _scalarmult_noclamp(out, scalar, point) != 0:
        raise MentalPokerError("scalar multiplication refused (point not in the group)")
    return _unpack(out)[:]


def _scalarmult_base(scalar: bytes) -> bytes:
    if scalar == _ZERO_BYTES:
        return _IDENTITY_BYTES
    out = _buf(_OUT)
    if _scalarmult_base_noclamp(out, scalar) != 0:
        raise MentalPokerError("scalar multiplication refused")
    return _unpack(out)[:]


def _add(p: bytes, q: bytes) -> bytes:
    """``P + Q`` of two encodings (the identity costs nothing: an open card has two)."""
    if q == _IDENTITY_BYTES:
        return p
    if p == _IDENTITY_BYTES:
        return q
    out = _buf(_OUT)
    if _core_add(out, p, q) != 0:
        raise MentalPokerError("point addition refused (not a point)")
    return _unpack(out)[:]


def _from_uniform(r: bytes) -> bytes:
    """Elligator 2 of 32 uniform bytes, cofactor cleared: a point nobody knows the log of."""
    if len(r) != 32:
        raise EncodingError("from_uniform: expected 32 bytes")
    out = _buf(_OUT)
    if _core_from_uniform(out, r) != 0:
        raise MentalPokerError("from_uniform refused")
    return _unpack(out)[:]


def _sub(p: bytes, q: bytes) -> bytes:
    """``P - Q`` of two encodings."""
    if q == _IDENTITY_BYTES:
        return p
    out = _buf(_OUT)
    if _core_sub(out, p, q) != 0:
        raise MentalPokerError("point subtraction refused (not a point)")
    return _unpack(out)[:]


_ONE = Scalar.from_int(1)
_G = _point_unchecked(_scalarmult_base(_ONE.value))
_O = _point_unchecked(_IDENTITY_BYTES)


def base_point() -> Point:
    """The standard Ed25519 base point ``G``."""
    return _G


def identity() -> Point:
    """The identity ``O`` of the group."""
    return _O


def mul_base(s: Scalar) -> Point:
    """``s * G``, through libsodium's faster fixed-base multiplication."""
    return _point_unchecked(_scalarmult_base(s.value))


def random_scalar(token_bytes: Callable[[int], bytes] | None = None) -> Scalar:
    """A uniformly random non-zero scalar from the operating system's CSPRNG.

    64 random bytes reduced modulo ℓ (bias below 2^-250). ``token_bytes`` exists for tests.
    """
    draw = token_bytes if token_bytes is not None else secrets.token_bytes
    while True:
        s = Scalar.reduce(draw(64))
        if not s.is_zero:
            return s


def framed_sha512(*parts: bytes) -> hashlib._Hash:
    """SHA-512 over ``parts``, each prefixed by its length (so no two lists of parts hash
    alike); the caller may add more to it."""
    h = hashlib.sha512()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h


def hash_to_scalar(domain: bytes, *parts: bytes) -> Scalar:
    """SHA-512 over the domain tag and length-prefixed parts, reduced modulo ℓ."""
    return Scalar.reduce(framed_sha512(domain, *parts).digest())


def hash_to_point(domain: bytes, *parts: bytes) -> Point:
    """A point nobody knows the discrete log of: Elligator 2 of the framed SHA-512."""
    return _point_unchecked(_from_uniform(framed_sha512(domain, *parts).digest()[:32]))
