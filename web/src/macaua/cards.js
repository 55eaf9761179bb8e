// Card points (libs/mentalpoker/cards.py): Elligator 2 of SHA-512 over a domain tag and the
// card's code; the open deck is suit by suit (S, H, D, C), Ace to King, then the jokers.
import { hashToPoint, toHex, utf8 } from "./group.js";

export const CARD_DOMAIN = utf8("cardroom/mentalpoker/card-point/v1");
export const SUITS = ["S", "H", "D", "C"];
export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const MACAUA_CARDS = [...SUITS.flatMap((s) => RANKS.map((r) => r + s)), "BJ", "RJ"];

let codec = null;

function table() {
  if (codec === null) {
    const points = new Map();
    const byPoint = new Map();
    for (const card of MACAUA_CARDS) {
      const point = hashToPoint(CARD_DOMAIN, utf8(card));
      points.set(card, point);
      byPoint.set(toHex(point), card);
    }
    codec = { points, byPoint };
  }
  return codec;
}

export function cardPoint(card) {
  const point = table().points.get(card);
  if (!point) throw new Error(`unknown card ${card}`);
  return point;
}

/** The card code of a point, or null when it is no card (still masked). */
export const decodeCard = (point) => table().byPoint.get(toHex(point)) ?? null;
