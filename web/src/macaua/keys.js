// A player's keys for one deck (libs/mentalpoker/keys.py): a shuffle key and one card key per
// position, all CSPRNG scalars, published as commitments (k G, c_i G) each with a Schnorr
// proof of knowledge bound to the deck's context. The secrets never leave the page.
import {
  EncodingError,
  VerificationError,
  basePoint,
  equal,
  isZero,
  mulBase,
  pointFromHex,
  randomScalar,
  scalarFromHex,
  sodium,
  toHex,
  utf8,
} from "./group.js";
import { MAX_DECK_SIZE } from "./masking.js";
import { proofFromJson, proofToJson, proveDlogKnown, verifyDlog } from "./proofs.js";

const concat = (a, b) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};
export const shuffleContext = (context) => concat(context, utf8("|shuffle-key"));
export const cardContext = (context, position) => concat(context, utf8(`|card-key|${position}`));

export function generateSecrets(deckSize) {
  if (!(deckSize > 0 && deckSize <= MAX_DECK_SIZE)) throw new Error(`deck size must be in 1..${MAX_DECK_SIZE}`);
  return { shuffleKey: randomScalar(), cardKeys: Array.from({ length: deckSize }, randomScalar) };
}

export const secretsToJson = (s) => ({ shuffle: toHex(s.shuffleKey), cards: s.cardKeys.map(toHex) });
export const secretsFromJson = (d) => ({
  shuffleKey: scalarFromHex(d.shuffle),
  cardKeys: d.cards.map(scalarFromHex),
});

/** The commitments with their proofs, as PublicKeys.to_json writes them. */
export function publicKeys(secrets, context) {
  const g = basePoint();
  const shuffle = mulBase(secrets.shuffleKey);
  const cards = secrets.cardKeys.map(mulBase);
  return {
    shuffle: toHex(shuffle),
    cards: cards.map(toHex),
    shuffle_proof: proofToJson(proveDlogKnown(secrets.shuffleKey, g, shuffle, shuffleContext(context))),
    card_proofs: secrets.cardKeys.map((c, i) => proofToJson(proveDlogKnown(c, g, cards[i], cardContext(context, i)))),
  };
}

export function publicKeysFromJson(data, maxSize = MAX_DECK_SIZE) {
  const keys = data && typeof data === "object" && !Array.isArray(data) ? Object.keys(data).sort() : [];
  if (keys.join() !== "card_proofs,cards,shuffle,shuffle_proof") {
    throw new EncodingError("public keys: expected shuffle, cards, shuffle_proof, card_proofs");
  }
  const { cards, card_proofs: proofs } = data;
  if (!Array.isArray(cards) || !Array.isArray(proofs)) {
    throw new EncodingError("public keys: cards and card_proofs must be lists");
  }
  if (cards.length > maxSize || proofs.length !== cards.length) {
    throw new EncodingError("public keys: bad number of card keys or proofs");
  }
  return {
    shuffle: pointFromHex(data.shuffle),
    cards: cards.map(pointFromHex),
    shuffleProof: proofFromJson(data.shuffle_proof, "dlog proof"),
    cardProofs: proofs.map((p) => proofFromJson(p, "dlog proof")),
  };
}

/** Keys a checked move published before (the state's own), decoded without the subgroup
 * checks: only the points a check reads. */
export const publicKeysFromJsonUnchecked = (data) => ({
  shuffle: sodium.from_hex(data.shuffle),
  cards: data.cards.map((c) => sodium.from_hex(c)),
});

/** Throws VerificationError unless every commitment is well formed and proven. */
export function checkPublicKeys(keys, context, deckSize = null) {
  if (deckSize !== null && keys.cards.length !== deckSize) {
    throw new VerificationError(`public keys: ${keys.cards.length} card keys, expected ${deckSize}`);
  }
  if (keys.cardProofs.length !== keys.cards.length) {
    throw new VerificationError("public keys: one proof per card key is required");
  }
  if (!verifyDlog(keys.shuffle, keys.shuffleProof, shuffleContext(context))) {
    throw new VerificationError("public keys: shuffle key proof does not verify");
  }
  keys.cards.forEach((point, i) => {
    if (!verifyDlog(point, keys.cardProofs[i], cardContext(context, i))) {
      throw new VerificationError(`public keys: card key ${i} proof does not verify`);
    }
  });
  if (new Set([keys.shuffle, ...keys.cards].map(toHex)).size !== keys.cards.length + 1) {
    throw new VerificationError("public keys: keys must be distinct");
  }
}

/** ``key * G == commitment`` for a published (non-zero) key. */
export const keyMatches = (key, commitment) => !isZero(key) && equal(mulBase(key), commitment);
