// Macaua's card logic on card codes (libs/games/.../macaua/cards.py): ranks, suits, matching.
import { SUITS } from "./cards.js";

export const JOKER = "JOKER";
const JOKERS = new Set(["BJ", "RJ"]);
export const CHALLENGE = { 2: 2, 3: 3, [JOKER]: 5 };

export const rank = (card) => (JOKERS.has(card) ? JOKER : card.slice(0, -1));
export const suit = (card) => (JOKERS.has(card) ? null : card.slice(-1));

/** Whether ``card`` may be placed first on ``top``. */
export function legalFirst(card, top, declared, challenge) {
  const r = rank(card);
  if (challenge > 0) return r in CHALLENGE;
  if (r === "A" || r === JOKER || JOKERS.has(top)) return true;
  if (declared !== null && declared !== undefined) return suit(card) === declared;
  return suit(card) === suit(top) || r === rank(top);
}

/** Why a play is illegal, or null. */
export function checkPlay(cards, top, declared, challenge, newSuit) {
  if (!cards.length) return "a play needs at least one card";
  if (new Set(cards).size !== cards.length) return "a card is given twice";
  if (new Set(cards.map(rank)).size !== 1) return "cards played together must share one rank";
  if (!legalFirst(cards[0], top, declared, challenge)) {
    return challenge > 0
      ? "a challenge is pending: only a 2, 3 or Joker counters it"
      : `${cards[0]} does not match the top of the discard pile`;
  }
  if (rank(cards[0]) === "A") {
    if (!SUITS.includes(newSuit)) return `an Ace declares a suit, one of ${SUITS.join(", ")}`;
  } else if (newSuit !== null && newSuit !== undefined) {
    return "only an Ace declares a suit";
  }
  return null;
}
