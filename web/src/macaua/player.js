// One Macaua player's side of the mental poker, in the page (as MacauaBot in
// libs/games/.../macaua/bots.py): its Ed25519 seat key and, per deck, its secret shuffle and
// card keys, all from the CSPRNG and kept here; from its own view alone it builds each move
// (keys, shuffle with its argument, mask, the card keys others need, plays, draws, the
// audit), signs it over (binding, seq, previous hash, move), and opens its own cards.
// ``toJSON``/``fromJSON`` keep all of it across a reload (the page's sessionStorage).
import { toHex } from "./group.js";
import { generateSecrets, publicKeys, secretsFromJson, secretsToJson } from "./keys.js";
import { cardFromJson, deckFromJson, deckToJson, openCard } from "./masking.js";
import { maskStep, proofContext, shuffleStep } from "./protocol.js";
import { signMove, signTransition, signingKey } from "./signing.js";
import { legalFirst, rank } from "./rules.js";

export class MacauaPlayer {
  constructor(player, seed = null) {
    this.player = player;
    this.key = signingKey(seed);
    this.secrets = new Map(); // deck -> {shuffleKey, cardKeys}
    this.known = new Map(); // "deck/position" -> card code, or null for a card that opens to none
  }

  /** The verify key (hex) bound to the seat at join: the only part that leaves the page. */
  get verifyKey() {
    return this.key.verifyKey;
  }

  toJSON() {
    return {
      player: this.player,
      seed: this.key.seed,
      secrets: [...this.secrets].map(([deck, s]) => [deck, secretsToJson(s)]),
      known: [...this.known],
    };
  }

  static fromJSON(data) {
    const p = new MacauaPlayer(data.player, data.seed);
    for (const [deck, s] of data.secrets) p.secrets.set(deck, secretsFromJson(s));
    for (const [pos, code] of data.known) p.known.set(pos, code);
    return p;
  }

  context(v, deck) {
    return proofContext(v.binding, deck, this.player);
  }

  /** The signed command of ``move`` over the view's state. */
  sign(v, move) {
    return { type: "move", ...signMove(this.key, v.binding, v.seq + 1, v.hash, move) };
  }

  /** The signature of a transition this player checked. */
  signTransition(binding, version, transition) {
    return signTransition(this.key, binding, version, transition);
  }

  /** The move for a listed action other than play and draw (those are the person's choice). */
  build(v, action) {
    const deck = Number(action.deck ?? v.deck);
    switch (action.kind) {
      case "keys":
        return this.keysMove(v, deck);
      case "shuffle":
        if (action.proof !== "argument") throw new Error("this table proves shuffles by cut-and-choose rounds, which the page does not make");
        return this.shuffleMove(v, deck);
      case "mask": {
        const [cards, proof] = maskStep(deckFromJson(v.cards), this.secrets.get(deck), this.context(v, deck));
        return { kind: "mask", deck, cards: deckToJson(cards), proof };
      }
      case "reveal":
        return { kind: "reveal", deck, keys: action.positions.map(([d, i]) => this.keyItem(d, i)) };
      case "audit":
        return { kind: "audit", keys: action.positions.map(([d, i]) => this.keyItem(d, i)) };
      default:
        throw new Error(`no move is built for ${action.kind}`);
    }
  }

  keysMove(v, deck) {
    let secrets = this.secrets.get(deck);
    if (!secrets) {
      secrets = generateSecrets(Number(v.deck_sizes[deck]));
      this.secrets.set(deck, secrets);
    }
    const move = { kind: "keys", deck, keys: publicKeys(secrets, this.context(v, deck)) };
    if (deck === 0) move.verify_key = this.verifyKey;
    return move;
  }

  shuffleMove(v, deck) {
    const [cards, proof] = shuffleStep(deckFromJson(v.cards), this.secrets.get(deck), this.context(v, deck));
    return { kind: "shuffle", deck, cards: deckToJson(cards), ...proof };
  }

  keyItem(deck, position) {
    return { deck, position, key: toHex(this.secrets.get(deck).cardKeys[position]) };
  }

  /** The hand, each card opened privately once: [{deck, position, card}] (a card that opens
   * to no card, a cheated deck's, is left out: never played). */
  hand(v) {
    const out = [];
    for (const item of v.hand || []) {
      const pos = `${item.deck}/${item.position}`;
      if (!this.known.has(pos)) {
        try {
          this.known.set(pos, openCard(cardFromJson(item.masked), this.secrets.get(item.deck).cardKeys[item.position]));
        } catch {
          this.known.set(pos, null);
        }
      }
      const card = this.known.get(pos);
      if (card !== null) out.push({ deck: item.deck, position: item.position, card });
    }
    return out;
  }

  /** Every legal play: a legal first card, then any subset of its rank (hand order). */
  legalPlays(v) {
    const hand = this.hand(v);
    const plays = [];
    for (const first of hand) {
      if (!legalFirst(first.card, v.top, v.declared, Number(v.challenge))) continue;
      const same = hand.filter((c) => c !== first && rank(c.card) === rank(first.card));
      for (let mask = 0; mask < 1 << same.length; mask++) {
        const play = [first, ...same.filter((_, k) => (mask >> k) & 1)];
        if (new Set(play.map((c) => c.card)).size === play.length) plays.push(play);
      }
    }
    return plays;
  }

  playMove(play, suit = null) {
    return { kind: "play", cards: play.map((c) => ({ ...this.keyItem(c.deck, c.position), card: c.card })), suit };
  }
}
