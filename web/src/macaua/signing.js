// Canonical JSON, state hashes and Ed25519 signatures of moves and transitions, byte for byte
// as libs/mentalpoker/signing.py makes them: sorted keys (by code point), no spaces, UTF-8,
// no floats; a Uint8Array is written as lowercase hex.
import { EncodingError, VerificationError, fromHex, sha256, sodium, toHex, utf8 } from "./group.js";

export const MOVE_DOMAIN = "cardroom/mentalpoker/move/v1";
export const TRANSITION_DOMAIN = "cardroom/mentalpoker/transition/v1";
export const GENESIS_HASH = "0".repeat(64);
const HASH = /^[0-9a-f]{64}$/;
const SIGNATURE = /^[0-9a-f]{128}$/;

export class SignatureError extends VerificationError {}

function byCodePoint(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

function write(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError("canonical JSON: only integers are allowed");
    return String(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new TypeError("canonical JSON: text with no UTF-8 form");
    return JSON.stringify(value);
  }
  if (value instanceof Uint8Array) return JSON.stringify(toHex(value));
  if (Array.isArray(value)) return `[${value.map(write).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value).sort(byCodePoint);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${write(value[k])}`).join(",")}}`;
  }
  throw new TypeError(`canonical JSON: cannot encode ${typeof value}`);
}

export const canonicalJson = (value) => utf8(write(value));
export const canonicalText = (value) => write(value);

/** SHA-256 over the canonical encoding, 64 lowercase hex digits. */
export const stateHash = (value) => toHex(sha256(canonicalJson(value)));

export function moveMessage(gameId, seq, prevHash, move) {
  if (typeof gameId !== "string" || !gameId) throw new SignatureError("game id must be a non-empty string");
  if (!Number.isSafeInteger(seq) || seq < 0) throw new SignatureError("sequence number must be a non-negative integer");
  if (typeof prevHash !== "string" || !HASH.test(prevHash)) throw new SignatureError("previous state hash must be 64 lowercase hex digits");
  return canonicalJson({ domain: MOVE_DOMAIN, game_id: gameId, move, prev_hash: prevHash, seq });
}

export function transitionMessage(gameId, version, transition) {
  if (typeof gameId !== "string" || !gameId) throw new SignatureError("game id must be a non-empty string");
  if (!Number.isSafeInteger(version) || version < 1) throw new SignatureError("version must be a positive integer");
  return canonicalJson({ domain: TRANSITION_DOMAIN, game_id: gameId, transition: stateHash(transition), version });
}

// -- the seat's Ed25519 key: a 32-byte seed, as PyNaCl's SigningKey -------------------------
export function signingKey(seedHex = null) {
  const seed = seedHex === null ? sodium.randombytes_buf(32) : fromHex(seedHex, 32, "signing key");
  const pair = sodium.crypto_sign_seed_keypair(seed);
  return { seed: toHex(seed), verifyKey: toHex(pair.publicKey), secret: pair.privateKey };
}

const sign = (key, message) => toHex(sodium.crypto_sign_detached(message, key.secret));

/** A signed move as SignedMove.to_json writes it (the command is ``{type: "move", ...}``). */
export function signMove(key, gameId, seq, prevHash, move) {
  const plain = JSON.parse(canonicalText(move));
  return {
    game_id: gameId,
    seq,
    prev_hash: prevHash,
    move: plain,
    signer: key.verifyKey,
    signature: sign(key, moveMessage(gameId, seq, prevHash, plain)),
  };
}

export const signTransition = (key, gameId, version, transition) =>
  sign(key, transitionMessage(gameId, version, transition));

function verifyDetached(signature, message, verifyKey) {
  if (typeof signature !== "string" || !SIGNATURE.test(signature)) {
    throw new SignatureError("signature must be 128 lowercase hex digits");
  }
  if (typeof verifyKey !== "string" || !HASH.test(verifyKey)) {
    throw new SignatureError("verify key must be 64 lowercase hex digits");
  }
  let ok = false;
  try {
    ok = sodium.crypto_sign_verify_detached(sodium.from_hex(signature), message, sodium.from_hex(verifyKey));
  } catch {
    ok = false;
  }
  if (!ok) throw new SignatureError("bad signature");
}

/** Throws SignatureError unless ``signed`` is a valid signature by ``verifyKey`` (the key on
 * record for the seat), with the envelope's game, sequence and previous hash when given. */
export function checkMove(signed, verifyKey, { gameId, seq, prevHash } = {}) {
  const fields = signed && typeof signed === "object" ? Object.keys(signed).sort().join() : "";
  if (fields !== "game_id,move,prev_hash,seq,signature,signer") {
    throw new EncodingError("signed move: expected keys game_id, move, prev_hash, seq, signature, signer");
  }
  if (gameId !== undefined && signed.game_id !== gameId) throw new SignatureError("signed move: wrong game id");
  if (seq !== undefined && signed.seq !== seq) throw new SignatureError(`signed move: sequence number ${signed.seq}, expected ${seq}`);
  if (prevHash !== undefined && signed.prev_hash !== prevHash) throw new SignatureError("signed move: previous state hash does not match");
  verifyDetached(signed.signature, moveMessage(signed.game_id, signed.seq, signed.prev_hash, signed.move), verifyKey);
}

export function checkTransition(signature, verifyKey, gameId, version, transition) {
  verifyDetached(signature, transitionMessage(gameId, version, transition), verifyKey);
}
