// A Macaua seat in this page: the player's keys (its Ed25519 seat key and every deck's
// secrets, made here from the browser's CSPRNG) and its own checked copy of the game. Both
// stay in this tab's sessionStorage, so a reload keeps the seat; only the seat's verify key
// (at the join), published card keys (in moves) and signatures ever leave the page.
import { MacauaPlayer, TransitionVerifier, UnverifiableTransition, askedOf, ready } from "./macaua/index.js";

const KEPT = 64; // the last verdicts kept, to acknowledge a resend again
// seats one tab keeps: each holds every deck of its game, and a game that never ends (a
// table left waiting, a table without a move timeout) would otherwise keep its seat forever
export const SEATS_KEPT = 8;

const storageKey = (root, player, game) => `cardroom.macaua.${root}.${player}.${game}`;
// this tab's seats of one player, least recently taken or opened first
const orderKey = (root, player) => `cardroom.macaua-seats.${root}.${player}`;

/** Games whose seat is in play in this tab (taken here, or open on the table page): never
 * dropped to make room. */
const inPlay = new Set();

function readOrder(root, player) {
  try {
    const order = JSON.parse(sessionStorage.getItem(orderKey(root, player)) || "[]");
    return Array.isArray(order) ? order : [];
  } catch {
    return [];
  }
}

function writeOrder(root, player, order) {
  try {
    sessionStorage.setItem(orderKey(root, player), JSON.stringify(order));
  } catch {
    // the order is a hint: seats missing from it count as the oldest
  }
}

/** The games of every seat this tab keeps for ``player``, oldest first (seats stored without
 * an order come first). */
export function keptSeats(root, player) {
  const prefix = storageKey(root, player, "");
  const present = new Set();
  for (let i = 0; i < sessionStorage.length; i++) {
    const key = sessionStorage.key(i);
    if (key?.startsWith(prefix)) present.add(key.slice(prefix.length));
  }
  const ordered = readOrder(root, player).filter((g) => present.has(g));
  const listed = new Set(ordered);
  return [...[...present].filter((g) => !listed.has(g)), ...ordered];
}

/** Remove the stored seat at ``game`` (its table is finished or gone). */
export function forgetSeat(root, player, game) {
  sessionStorage.removeItem(storageKey(root, player, game));
  writeOrder(root, player, readOrder(root, player).filter((g) => g !== game));
}

/** ``game``'s seat becomes the most recent; beyond SEATS_KEPT the oldest are removed, never
 * one in play in this tab. */
function touch(root, player, game) {
  const order = [...keptSeats(root, player).filter((g) => g !== game), game];
  let over = order.length - SEATS_KEPT;
  for (const old of [...order]) {
    if (over <= 0) break;
    if (old === game || inPlay.has(old)) continue;
    sessionStorage.removeItem(storageKey(root, player, old));
    order.splice(order.indexOf(old), 1);
    over -= 1;
  }
  writeOrder(root, player, order);
}

export class MacauaSeat {
  constructor(root, player, game, data = null) {
    this.root = root;
    this.game = game;
    this.player = data ? MacauaPlayer.fromJSON(data.player) : new MacauaPlayer(player);
    this.verifier = data ? TransitionVerifier.fromJSON(this.player, data.verifier) : new TransitionVerifier(this.player, game);
    this.verdicts = data ? data.verdicts : [];
  }

  /** A new seat for a table this page creates or joins (its keys are made now). */
  static async fresh(root, player) {
    await ready;
    return new MacauaSeat(root, player, null);
  }

  /** The seat this tab holds at ``game``, or null; it is in play here until ``release``. */
  static async load(root, player, game) {
    await ready;
    const raw = sessionStorage.getItem(storageKey(root, player, game));
    if (!raw) return null;
    inPlay.add(game);
    touch(root, player, game);
    return new MacauaSeat(root, player, game, JSON.parse(raw));
  }

  /** The seats this tab keeps for ``player``, each with its game (oldest first). */
  static kept(root, player) {
    return keptSeats(root, player);
  }

  /** Remove ``game``'s stored seat: the lobby says its table is finished, or gone. */
  static forgetGame(root, player, game) {
    if (!inPlay.has(game)) forgetSeat(root, player, game);
  }

  get verifyKey() {
    return this.player.verifyKey;
  }

  /** Keep the seat under its table's id (once the lobby named it). */
  bind(game) {
    this.game = game;
    this.verifier.gameId = game;
    inPlay.add(game);
    this.save();
    touch(this.root, this.player.player, game);
  }

  /** The table page left this seat's game: from now on the seat may make room for others. */
  release() {
    inPlay.delete(this.game);
  }

  /** Store the seat. A full storage is no reason to stop checking and acknowledging (the
   * table would mark this seat away and rank it last): the seat plays on from memory, and
   * ``unsaved`` says a reload would lose it. */
  save() {
    if (this.forgotten) return;
    const data = { player: this.player.toJSON(), verifier: this.verifier.toJSON(), verdicts: this.verdicts };
    try {
      sessionStorage.setItem(storageKey(this.root, this.player.player, this.game), JSON.stringify(data));
      this.unsaved = false;
    } catch (exc) {
      this.unsaved = true;
      console.warn("this Macaua seat is not stored: the tab's storage is full", exc);
    }
  }

  /** Remove the stored seat (its game is over and audited); this tab's copy stays in memory
   * to answer a resend, but is stored no more. */
  forget() {
    this.forgotten = true;
    forgetSeat(this.root, this.player.player, this.game);
  }

  /** The ack's fields for a notification that carries a transition: its signature, or a
   * rejection; null when this copy cannot check it (then nothing is acknowledged). */
  verify(note) {
    const kept = this.verdicts.find(([version]) => version === note.version);
    if (kept) return kept[1];
    let fields;
    try {
      fields = this.verifier.check(note.version, note.message);
    } catch (exc) {
      if (exc instanceof UnverifiableTransition) return null;
      throw exc;
    }
    this.verdicts = [...this.verdicts, [note.version, fields]].slice(-KEPT);
    this.save();
    return fields;
  }

  get state() {
    return this.verifier.state;
  }

  get rejected() {
    return this.verifier.failed;
  }

  /** The player's view as the moves are built from it: this copy's state. */
  view() {
    const s = this.state;
    const me = this.player.player;
    const last = s.decks[s.decks.length - 1];
    return {
      binding: s.binding,
      seq: s.seq,
      hash: s.hash,
      deck: s.decks.length - 1,
      deck_sizes: s.decks.map((d) => d.cards.length),
      cards: last.masked,
      // a card is opened once the others' keys are off it (a deal or a draw is done)
      hand: (s.hands[me] || [])
        .filter(([deck, position]) => s.decks[deck].masking[position].join() === me)
        .map(([deck, position]) => ({ deck, position, masked: s.decks[deck].masked[position] })),
      top: s.discard[s.discard.length - 1],
      declared: s.declared,
      challenge: s.challenge,
    };
  }

  /** The hand, opened privately: [{deck, position, card}]. */
  hand() {
    return this.state ? this.player.hand(this.view()) : [];
  }

  legalPlays() {
    return this.player.legalPlays(this.view());
  }

  /** The signed command of a move, the seat saved first (a keys move made new secrets). */
  command(move) {
    const command = this.player.sign(this.view(), move);
    this.save();
    return command;
  }

  /** What this seat's checked copy asks of it that the page makes itself (keys, shuffle,
   * mask, card keys, the audit's), or null: never the server's listing (``askedOf``). */
  asked() {
    return this.state && !this.rejected ? askedOf(this.state, this.player.player) : null;
  }

  /** The move ``asked()`` names, built and signed on this copy. */
  automatic(asked) {
    return this.command(this.player.build(this.view(), asked));
  }

  play(cards, suit = null) {
    return this.command(this.player.playMove(cards, suit));
  }

  draw() {
    return this.command({ kind: "draw" });
  }
}
