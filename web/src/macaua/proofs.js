// Schnorr and Chaum-Pedersen proofs, compact (e, z), Fiat-Shamir over SHA-512 reduced
// modulo ℓ, each bound to a context (libs/mentalpoker/proofs.py).
import {
  EncodingError,
  basePoint,
  equal,
  hashToScalar,
  isIdentity,
  mul,
  randomScalar,
  sAdd,
  sMul,
  scalarFromHex,
  sub,
  toHex,
  utf8,
} from "./group.js";

const DLOG_DOMAIN = utf8("cardroom/mentalpoker/schnorr-dlog/v1");
const DLEQ_DOMAIN = utf8("cardroom/mentalpoker/chaum-pedersen-dleq/v1");

export const proofToJson = (p) => ({ e: toHex(p.e), z: toHex(p.z) });

export function proofFromJson(data, what = "proof") {
  const keys = data && typeof data === "object" && !Array.isArray(data) ? Object.keys(data).sort() : [];
  if (keys.join() !== "e,z") throw new EncodingError(`${what}: expected an object with keys e and z`);
  return { e: scalarFromHex(data.e), z: scalarFromHex(data.z) };
}

/** Knowledge of ``secret`` with ``pub = secret * base``. */
export function proveDlogKnown(secret, base, pub, context) {
  const w = randomScalar();
  const t = mul(w, base);
  const e = hashToScalar(DLOG_DOMAIN, context, base, pub, t);
  return { e, z: sAdd(w, sMul(e, secret)) };
}

export function verifyDlog(pub, proof, context, base = basePoint()) {
  if (isIdentity(base) || isIdentity(pub)) return false;
  const t = sub(mul(proof.z, base), mul(proof.e, pub));
  return equal(hashToScalar(DLOG_DOMAIN, context, base, pub, t), proof.e);
}

/** ``a = secret * base1`` and ``c = secret * base2`` for one secret. */
export function proveDleqKnown(secret, base1, a, base2, c, context) {
  const w = randomScalar();
  const t1 = mul(w, base1);
  const t2 = mul(w, base2);
  const e = hashToScalar(DLEQ_DOMAIN, context, base1, a, base2, c, t1, t2);
  return { e, z: sAdd(w, sMul(e, secret)) };
}

export function verifyDleq(base1, pub1, base2, pub2, proof, context) {
  if (isIdentity(base1)) return false;
  const t1 = sub(mul(proof.z, base1), mul(proof.e, pub1));
  const t2 = sub(mul(proof.z, base2), mul(proof.e, pub2));
  return equal(hashToScalar(DLEQ_DOMAIN, context, base1, pub1, base2, pub2, t1, t2), proof.e);
}
