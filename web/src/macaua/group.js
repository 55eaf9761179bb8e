// The prime-order group of Ed25519 through libsodium (libsodium-wrappers-sumo), as
// libs/mentalpoker/group.py has it: a point or a scalar is its 32-byte encoding (Uint8Array),
// the identity is handled here because libsodium refuses it (an open card is (O, M, O)),
// and hashes are SHA-512 over length-prefixed parts, reduced modulo ℓ or mapped by Elligator 2.
import sodium from "libsodium-wrappers-sumo";

export const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

export class MentalPokerError extends Error {}
export class EncodingError extends MentalPokerError {}
export class VerificationError extends MentalPokerError {}

/** Resolves once libsodium's WebAssembly is loaded: call before anything else here. */
export const ready = sodium.ready.then(() => sodium);

const IDENTITY = new Uint8Array(32);
IDENTITY[0] = 1;
const ZERO = new Uint8Array(32);
const HEX = /^[0-9a-f]*$/;
export const utf8 = (text) => new TextEncoder().encode(text);

export function equal(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const toHex = (bytes) => sodium.to_hex(bytes);

export function fromHex(text, nbytes, what) {
  if (typeof text !== "string") throw new EncodingError(`${what}: expected a hex string`);
  if (text.length !== 2 * nbytes || !HEX.test(text)) {
    throw new EncodingError(`${what}: expected ${2 * nbytes} lowercase hex digits`);
  }
  return sodium.from_hex(text);
}

export function toInt(scalar) {
  let n = 0n;
  for (let i = 31; i >= 0; i--) n = (n << 8n) | BigInt(scalar[i]);
  return n;
}

export function fromInt(n) {
  let v = ((n % GROUP_ORDER) + GROUP_ORDER) % GROUP_ORDER;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

// -- scalars (canonical: < ℓ) ---------------------------------------------------------------
export function scalarFromHex(text) {
  const raw = fromHex(text, 32, "scalar");
  if (toInt(raw) >= GROUP_ORDER) throw new EncodingError("scalar: not canonical (>= group order)");
  return raw;
}

export const isZero = (s) => equal(s, ZERO);
export const reduce = (wide) => sodium.crypto_core_ed25519_scalar_reduce(wide);
export const sAdd = (a, b) => sodium.crypto_core_ed25519_scalar_add(a, b);
export const sSub = (a, b) => sodium.crypto_core_ed25519_scalar_sub(a, b);
export const sMul = (a, b) => sodium.crypto_core_ed25519_scalar_mul(a, b);
export const sNeg = (a) => sodium.crypto_core_ed25519_scalar_negate(a);

/** A uniformly random non-zero scalar: 64 CSPRNG bytes reduced modulo ℓ. */
export function randomScalar() {
  for (;;) {
    const s = reduce(sodium.randombytes_buf(64));
    if (!isZero(s)) return s;
  }
}

/** A uniform integer in [0, n) from the CSPRNG (Fisher-Yates draws). */
export const randbelow = (n) => sodium.randombytes_uniform(n);

// -- points (the prime-order subgroup, or the identity) -------------------------------------
export function pointFromHex(text) {
  const raw = fromHex(text, 32, "point");
  if (!equal(raw, IDENTITY) && !sodium.crypto_core_ed25519_is_valid_point(raw)) {
    throw new EncodingError("point: not a canonical point of the prime-order subgroup");
  }
  return raw;
}

export const identity = () => IDENTITY;
export const isIdentity = (p) => equal(p, IDENTITY);

export function add(p, q) {
  if (equal(q, IDENTITY)) return p;
  if (equal(p, IDENTITY)) return q;
  return sodium.crypto_core_ed25519_add(p, q);
}

export function sub(p, q) {
  if (equal(q, IDENTITY)) return p;
  return sodium.crypto_core_ed25519_sub(p, q);
}

export const neg = (p) => sub(IDENTITY, p);

/** ``s * P`` (``0 * P = s * O = O``). */
export function mul(s, p) {
  if (isZero(s) || equal(p, IDENTITY)) return IDENTITY;
  return sodium.crypto_scalarmult_ed25519_noclamp(s, p);
}

/** ``s * G``. */
export function mulBase(s) {
  if (isZero(s)) return IDENTITY;
  return sodium.crypto_scalarmult_ed25519_base_noclamp(s);
}

let base = null;
export function basePoint() {
  if (base === null) base = mulBase(fromInt(1n));
  return base;
}

// -- hashes ---------------------------------------------------------------------------------
/** Bytes for a hash, as Python's hashlib object is fed: ``frame`` adds an 8-byte length. */
export class Transcript {
  constructor() {
    this.parts = [];
    this.size = 0;
  }
  update(bytes) {
    this.parts.push(bytes);
    this.size += bytes.length;
    return this;
  }
  frame(bytes) {
    const len = new Uint8Array(8);
    new DataView(len.buffer).setBigUint64(0, BigInt(bytes.length), true);
    return this.update(len).update(bytes);
  }
  bytes() {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
  sha512() {
    return sodium.crypto_hash_sha512(this.bytes());
  }
}

export function framedSha512(...parts) {
  const t = new Transcript();
  for (const part of parts) t.frame(part);
  return t;
}

export function le32(n) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, true);
  return out;
}

export const hashToScalar = (domain, ...parts) => reduce(framedSha512(domain, ...parts).sha512());

/** A point nobody knows the discrete log of: Elligator 2 of the framed SHA-512. */
export function hashToPoint(domain, ...parts) {
  return sodium.crypto_core_ed25519_from_uniform(framedSha512(domain, ...parts).sha512().slice(0, 32));
}

export const sha256 = (bytes) => sodium.crypto_hash_sha256(bytes);
export const sha512 = (bytes) => sodium.crypto_hash_sha512(bytes);
export { sodium };
