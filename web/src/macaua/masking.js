// Masked cards (libs/mentalpoker/masking.py): (epk, msg, pk) with pk = x G, epk = r G,
// msg = M + x epk; an open card is (O, M, O).
import {
  EncodingError,
  MentalPokerError,
  VerificationError,
  identity,
  isIdentity,
  mul,
  mulBase,
  pointFromHex,
  sodium,
  sub,
  toHex,
  equal,
} from "./group.js";
import { decodeCard } from "./cards.js";

export const MAX_DECK_SIZE = 256;
const unchecked = (hex) => sodium.from_hex(hex);

export const card = (epk, msg, pk) => ({ epk, msg, pk });
export const isOpen = (c) => isIdentity(c.pk);
export const sameCard = (a, b) => equal(a.epk, b.epk) && equal(a.msg, b.msg) && equal(a.pk, b.pk);

export const cardToJson = (c) => ({ epk: toHex(c.epk), msg: toHex(c.msg), pk: toHex(c.pk) });

export function cardFromJson(data) {
  const keys = data && typeof data === "object" && !Array.isArray(data) ? Object.keys(data).sort() : [];
  if (keys.join() !== "epk,msg,pk") {
    throw new EncodingError("masked card: expected an object with keys epk, msg, pk");
  }
  const c = card(pointFromHex(data.epk), pointFromHex(data.msg), pointFromHex(data.pk));
  if (isIdentity(c.pk) && !isIdentity(c.epk)) {
    throw new EncodingError("masked card: an open card must have epk = identity");
  }
  return c;
}

export const deckToJson = (deck) => deck.map(cardToJson);

/** A card that a checked move set before (the state's own), decoded without the subgroup
 * checks: never for a move's own data. */
export const cardFromJsonUnchecked = (data) => card(unchecked(data.epk), unchecked(data.msg), unchecked(data.pk));
export const deckFromJsonUnchecked = (data) => data.map(cardFromJsonUnchecked);

export function deckFromJson(data, maxSize = MAX_DECK_SIZE) {
  if (!Array.isArray(data)) throw new EncodingError("deck: expected a list of masked cards");
  if (data.length > maxSize) throw new EncodingError(`deck: more than ${maxSize} cards`);
  return data.map(cardFromJson);
}

/** Remove ``key`` from the card's mask; removing the last key gives the open card. */
export function partialUnmask(c, key) {
  if (isOpen(c)) throw new MentalPokerError("partial_unmask: the card is already open");
  const pk = sub(c.pk, mulBase(key));
  const msg = sub(c.msg, mul(key, c.epk));
  return isIdentity(pk) ? card(identity(), msg, identity()) : card(c.epk, msg, pk);
}

/** Privately open a card masked by the caller's own ``key`` alone (a hand card, a draw). */
export function openCard(c, key) {
  if (isOpen(c) || !equal(c.pk, mulBase(key))) {
    throw new VerificationError("open card: the card is not masked by this key alone");
  }
  const found = decodeCard(sub(c.msg, mul(key, c.epk)));
  if (found === null) throw new VerificationError("open card: the unmasked point is no card");
  return found;
}

export const openDeckCard = (point) => card(identity(), point, identity());
