// Macaua's rules as a player's copy of them (libs/games/.../macaua: state, commands, folds,
// flow, audit), for checking every transition the server sends (verify.js). The state is
// plain JSON (a reload keeps it): masked cards and public keys stay as the hex of the moves
// that set them and are decoded when a check reads them.
import { EncodingError, MentalPokerError, VerificationError, scalarFromHex, sodium, toHex } from "./group.js";
import { MACAUA_CARDS, SUITS, cardPoint, decodeCard } from "./cards.js";
import {
  cardFromJsonUnchecked as stateCard,
  cardToJson,
  deckFromJson,
  deckFromJsonUnchecked as stateDeck,
  isOpen,
  openDeckCard,
  partialUnmask,
} from "./masking.js";
import { checkPublicKeys, keyMatches, publicKeysFromJson, publicKeysFromJsonUnchecked as stateKeys } from "./keys.js";
import { checkMaskStep, checkShuffleStep, proofContext } from "./protocol.js";
import { SignatureError, checkMove, stateHash, canonicalText } from "./signing.js";
import { checkPlay, rank, CHALLENGE } from "./rules.js";

export const DECK_SIZE = MACAUA_CARDS.length;
let openCards = null;
/** A card face up, as JSON (computed once libsodium is ready). */
function openJson(code) {
  if (openCards === null) openCards = Object.fromEntries(MACAUA_CARDS.map((c) => [c, cardToJson(openDeckCard(cardPoint(c)))]));
  return openCards[code];
}

export class Rejection extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** A check this copy cannot make (a table whose shuffles are proved by cut-and-choose). */
export class Unverifiable extends Error {}

const bad = (message) => new Rejection("bad_request", message);
const key = (d, i) => `${d}/${i}`;
const deepEqual = (a, b) => canonicalOrNull(a) === canonicalOrNull(b) && canonicalOrNull(a) !== null;
function canonicalOrNull(value) {
  try {
    return canonicalText(value);
  } catch {
    return null;
  }
}
export { deepEqual };

// -- the config and the start ---------------------------------------------------------------
const CONFIG_FIELDS = ["hand_size", "shuffle_proof", "shuffle_rounds", "max_turns", "move_timeout", "audit_timeout"];
const FLOATS = new Set(["move_timeout", "audit_timeout"]);
const AUDIT_TIMEOUT = 60;

/** The config as the setup brings it (MacauaConfig's JSON), checked for its shape. */
/** The fewest cut-and-choose rounds a player's check accepts (MIN_SHUFFLE_ROUNDS in
 * libs/games/.../macaua/config.py): the proof's challenge is a hash of the shuffler's own
 * commitments, so fewer rounds are forged by trying again. */
export const MIN_SHUFFLE_ROUNDS = 64;

export function readConfig(data) {
  if (!data || typeof data !== "object" || Object.keys(data).some((k) => !CONFIG_FIELDS.includes(k))) {
    throw new Error("bad config");
  }
  const int = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  const num = (v, lo, hi) => typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;
  const config = {
    hand_size: data.hand_size ?? 5,
    shuffle_proof: data.shuffle_proof ?? "rounds",
    shuffle_rounds: data.shuffle_rounds ?? 64,
    max_turns: data.max_turns ?? 2000,
    move_timeout: data.move_timeout ?? null,
    audit_timeout: data.audit_timeout ?? AUDIT_TIMEOUT,
  };
  if (
    !int(config.hand_size, 1, 8) || !["argument", "rounds"].includes(config.shuffle_proof) ||
    !int(config.shuffle_rounds, 0, 256) || !int(config.max_turns, 1, 100000) ||
    !(config.move_timeout === null || num(config.move_timeout, 0.1, 86400)) || !num(config.audit_timeout, 1, 3600)
  ) {
    throw new Error("bad config");
  }
  return config;
}

// pydantic's JSON of a float: a whole number keeps its ".0"
const pyFloat = (x) => (Number.isInteger(x) ? `${x}.0` : String(x));

/** hashed_config: the config's JSON as the genesis hash takes it (the fields that came later
 * are left out at the values of the games stored before them). */
function hashedConfig(config) {
  const parts = [];
  for (const field of CONFIG_FIELDS) {
    const value = config[field];
    if (field === "audit_timeout" && value === AUDIT_TIMEOUT) continue;
    if (field === "shuffle_proof" && value === "rounds") continue;
    const text = value === null ? "null" : FLOATS.has(field) ? pyFloat(value) : JSON.stringify(value);
    parts.push(`${JSON.stringify(field)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

export function setup(config, seats, table, verifyKeys) {
  return {
    config,
    seats: [...seats],
    table,
    binding: "",
    seq: 0,
    hash: "0".repeat(64),
    verify_keys: { ...verifyKeys },
    phase: "setup",
    decks: [],
    waiting: [],
    pending: null,
    hands: {},
    fresh: [],
    discard: [],
    turn: 0,
    declared: null,
    challenge: 0,
    drawer: null,
    to_draw: 0,
    assigned: [],
    need: {},
    turns: 0,
    winner: null,
    result: null,
    audit_keys: {},
    audit: null,
    stalled: null,
    withheld: [],
    rejected: null,
  };
}

function standardDeal(players, handSize) {
  const hands = Array.from({ length: players }, (_, p) =>
    Array.from({ length: handSize }, (_, k) => DECK_SIZE - 1 - p * handSize - k),
  );
  const top = DECK_SIZE - 1 - players * handSize;
  return { hands, top, fresh: Array.from({ length: top }, (_, k) => top - 1 - k) };
}
export const dealLayout = (state) => standardDeal(state.seats.length, state.config.hand_size);
const deckNo = (state) => state.decks.length - 1;
const current = (state) => state.seats[state.turn];

export function mayMove(state, player) {
  if (state.phase === "audit") return state.waiting.includes(player);
  return state.waiting.length > 0 && state.waiting[0] === player;
}

export function auditPositions(state, player) {
  const out = [];
  state.decks.forEach((deck, d) => deck.masking.forEach((m, i) => m.includes(player) && out.push([d, i])));
  return out;
}

/** The move the rules ask of ``player`` in this checked copy that its program makes by
 * itself (keys, shuffle, mask, the card keys of a deal or a draw, the audit's), with the
 * deck and the positions this copy names: a program builds from this, never from the
 * server's listing, which could name any card's position (a card in the player's own hand,
 * the next fresh card) and have its key published. Null when it asks none (a play or a draw
 * is the person's choice). */
export function askedOf(state, player) {
  if (!state || !mayMove(state, player)) return null;
  const deck = deckNo(state);
  switch (state.phase) {
    case "keys":
    case "mask":
      return { kind: state.phase, deck };
    case "shuffle":
      return { kind: "shuffle", deck, proof: state.config.shuffle_proof };
    case "deal":
    case "draw":
      return { kind: "reveal", deck, positions: (state.need[player] || []).map(([d, i]) => [d, i]) };
    case "audit":
      return { kind: "audit", deck, positions: auditPositions(state, player) };
    default:
      return null;
  }
}

// -- decide: a move's checks ----------------------------------------------------------------
const MOVE_FIELDS = {
  keys: ["kind", "deck", "keys", "verify_key"],
  shuffle: ["kind", "deck", "cards", "keyed", "key_proofs", "digest", "rounds", "openings"],
  shuffle_proof: ["kind", "offset", "openings"],
  mask: ["kind", "deck", "cards", "proof"],
  reveal: ["kind", "deck", "keys"],
  play: ["kind", "cards", "suit"],
  draw: ["kind"],
  audit: ["kind", "keys"],
};
const ARGUMENT_SHUFFLE_FIELDS = ["kind", "deck", "cards", "keyed", "key_proofs", "argument"];
const MOVE_PHASES = {
  keys: ["keys"],
  shuffle: ["shuffle"],
  shuffle_proof: ["shuffle"],
  mask: ["mask"],
  reveal: ["deal", "draw"],
  play: ["play"],
  draw: ["play"],
  audit: ["audit"],
};
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function integer(value, what) {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw bad(`${what}: an integer is required`);
  return value;
}

function withinDepth(value, depth) {
  let level = [value];
  for (let k = 0; k <= depth; k++) {
    const inner = [];
    for (const item of level) {
      if (Array.isArray(item)) inner.push(...item);
      else if (isObject(item)) inner.push(...Object.values(item));
    }
    if (!inner.length) return true;
    level = inner;
  }
  return false;
}

function positions(data, what) {
  if (!Array.isArray(data) || data.length > 256) throw bad(`${what}: a list is required`);
  if (data.some((x) => !isObject(x))) throw bad(`${what}: a list of objects is required`);
  return data;
}

function deckArg(state, move) {
  const deck = integer(move.deck, "move.deck");
  if (deck !== deckNo(state)) throw bad(`move.deck must be ${deckNo(state)}`);
  return deck;
}

/** Published card keys of ``actor``, each checked against its commitment: {"d/i": scalar}. */
function published(state, actor, items, fields = ["deck", "position", "key"]) {
  const out = new Map();
  for (const item of items) {
    if (Object.keys(item).some((k) => !fields.includes(k))) throw bad(`a published key has the fields ${fields}`);
    const d = integer(item.deck, "deck");
    const i = integer(item.position, "position");
    if (!(d >= 0 && d < state.decks.length && i >= 0 && i < state.decks[d].cards.length)) {
      throw bad(`no position ${i} in deck ${d}`);
    }
    if (out.has(key(d, i))) throw bad("a position is given twice");
    const scalar = scalarFromHex(item.key);
    if (!keyMatches(scalar, sodium.from_hex(state.decks[d].keys[actor].cards[i]))) {
      throw new Rejection("bad_key", `your key for position ${i} of deck ${d} does not match your commitment`);
    }
    out.set(key(d, i), scalar);
  }
  return out;
}

const sameSet = (map, list) => map.size === list.length && list.every(([d, i]) => map.has(key(d, i)));
const byPosition = (a, b) => a[0] - b[0] || a[1] - b[1];
const unpos = (k) => k.split("/").map(Number);

function verification(check) {
  try {
    check();
  } catch (exc) {
    if (exc instanceof VerificationError) throw new Rejection("bad_proof", exc.message);
    throw exc;
  }
}

const MOVES = {
  keys(state, actor, signed) {
    const move = signed.move;
    const deck = deckArg(state, move);
    const others = Object.entries(state.verify_keys).filter(([p]) => p !== actor).map(([, k]) => k);
    if (deck === 0 && others.includes(move.verify_key)) throw new Rejection("bad_signature", "that verify key belongs to another player");
    const keys = publicKeysFromJson(move.keys);
    verification(() => checkPublicKeys(keys, proofContext(state.binding, deck, actor), state.decks[deck].cards.length));
    return [{ type: "macaua.keys", player: actor, signed }];
  },
  shuffle(state, actor, signed) {
    const move = signed.move;
    const deck = deckArg(state, move);
    if (state.config.shuffle_proof !== "argument") throw new Unverifiable("this copy checks shuffles proved by the argument only");
    const n = state.decks[deck].cards.length;
    const cards = deckFromJson(move.cards);
    if (cards.length !== n) throw bad(`move.cards: the deck has ${n} cards`);
    const last = state.decks[state.decks.length - 1];
    const keys = stateKeys(last.keys[actor]);
    verification(() =>
      checkShuffleStep(stateDeck(last.masked), cards, keys, move, proofContext(state.binding, deck, actor)),
    );
    return [{ type: "macaua.shuffle", player: actor, signed }];
  },
  shuffle_proof() {
    throw new Unverifiable("this copy checks shuffles proved by the argument only");
  },
  mask(state, actor, signed) {
    const move = signed.move;
    const d = deckArg(state, move);
    const deck = state.decks[d];
    const cards = deckFromJson(move.cards);
    if (!isObject(move.proof) || Object.keys(move.proof).sort().join() !== "remask_proofs,swap_proofs,swapped") {
      throw bad("mask step proof: expected swapped, swap_proofs, remask_proofs");
    }
    const keys = stateKeys(deck.keys[actor]);
    verification(() => checkMaskStep(stateDeck(deck.masked), cards, keys, move.proof, proofContext(state.binding, d, actor)));
    return [{ type: "macaua.mask", player: actor, signed }];
  },
  reveal(state, actor, signed) {
    deckArg(state, signed.move);
    const keys = published(state, actor, positions(signed.move.keys, "keys"));
    if (!sameSet(keys, state.need[actor] || [])) throw bad("publish exactly the card keys asked for");
    const opened = [];
    for (const [d, i] of [...keys.keys()].map(unpos).sort(byPosition)) {
      const card = stateCard(state.decks[d].masked[i]);
      if (!state.decks[d].masking[i].includes(actor) || isOpen(card)) throw bad("that key was already published");
      opened.push([d, i, cardToJson(partialUnmask(card, keys.get(key(d, i))))]);
    }
    const events = [{ type: "macaua.reveal", player: actor, signed, opened }];
    if (state.phase === "deal" && state.waiting.length === 1 && state.waiting[0] === actor) {
      const after = evolve(state, events[0]);
      const top = stateCard(after.decks[0].masked[dealLayout(after).top]);
      if (decodeCard(top.msg) === null || !isOpen(top)) events.push({ type: "macaua.aborted", reason: "the face-up card is no card" });
    }
    return events;
  },
  play(state, actor, signed) {
    const move = signed.move;
    const items = positions(move.cards, "cards");
    const claims = items.map((item) => item.card);
    if (!claims.every((c) => typeof c === "string")) throw bad("every played card names its card");
    const hand = new Set((state.hands[actor] || []).map(([d, i]) => key(d, i)));
    const order = items.map((item) => [integer(item.deck, "deck"), integer(item.position, "position")]);
    if (!order.length) throw bad("a play needs at least one card");
    if (order.some(([d, i]) => !hand.has(key(d, i)))) throw new Rejection("not_your_card", "that card is not in your hand");
    const keys = published(state, actor, items, ["deck", "position", "key", "card"]);
    const played = [];
    order.forEach(([d, i], n) => {
      const masking = state.decks[d].masking[i];
      if (masking.length !== 1 || masking[0] !== actor) throw new Rejection("not_your_card", "that card is not yours alone to open");
      const opened = partialUnmask(stateCard(state.decks[d].masked[i]), keys.get(key(d, i)));
      if (!isOpen(opened) || decodeCard(opened.msg) !== claims[n]) {
        throw new Rejection("card_mismatch", "the key you published does not open that card");
      }
      played.push([d, i, claims[n], toHex(keys.get(key(d, i)))]);
    });
    const suitArg = move.suit;
    const newSuit = typeof suitArg === "string" ? suitArg : null;
    if (suitArg !== null && suitArg !== undefined && !SUITS.includes(newSuit)) throw bad(`suit must be one of ${SUITS.join(", ")}`);
    const why = checkPlay(claims, state.discard[state.discard.length - 1], state.declared, state.challenge, newSuit);
    if (why !== null) throw new Rejection("illegal_move", why);
    return [{ type: "macaua.played", player: actor, signed, cards: played, suit: newSuit }];
  },
  draw(state, actor, signed) {
    return [{ type: "macaua.draw", player: actor, signed, count: Math.max(state.challenge, 1) }];
  },
  audit(state, actor, signed) {
    const keys = published(state, actor, positions(signed.move.keys, "keys"));
    if (!sameSet(keys, auditPositions(state, actor))) throw bad("publish your key of every position that still has it");
    const events = [{ type: "macaua.audit", player: actor, signed }];
    if (state.waiting.length === 1 && state.waiting[0] === actor) {
      events.push({ type: "macaua.audited", ...auditDecks(evolve(state, events[0])) });
    }
    return events;
  },
};

const SIGNED_FIELDS = "game_id,move,prev_hash,seq,signature,signer";

/** The events of ``actor``'s signed move, or a Rejection (as commands.decide). */
export function decide(state, actor, command) {
  if (!isObject(command) || command.type !== "move") throw new Rejection("unknown_command", "macaua knows one command: a signed 'move'");
  if (!withinDepth(command, 8)) throw bad("a move nests at most 8 levels");
  const { type: _type, ...signed } = command;
  if (Object.keys(signed).sort().join() !== SIGNED_FIELDS) throw bad("signed move: expected its six fields");
  if (signed.game_id !== state.binding) throw new Rejection("wrong_game", "the move is signed for another game");
  const seq = integer(signed.seq, "seq");
  if (seq <= state.seq) throw new Rejection("replayed_move", `move ${seq} was already made (now at ${state.seq})`);
  if (seq !== state.seq + 1) throw new Rejection("bad_sequence", `the next move is number ${state.seq + 1}`);
  if (signed.prev_hash !== state.hash) throw new Rejection("stale_state", "the move is not signed over the current state");
  const move = signed.move;
  const kind = isObject(move) ? move.kind : undefined;
  if (typeof kind !== "string" || !Object.hasOwn(MOVES, kind)) throw bad(`move.kind must be one of ${Object.keys(MOVES).sort()}`);
  if (!MOVE_PHASES[kind].includes(state.phase) || !mayMove(state, actor)) {
    throw new Rejection("not_your_turn", `a '${kind}' move is not yours to make now`);
  }
  const fields = kind === "shuffle" && state.config.shuffle_proof === "argument" ? ARGUMENT_SHUFFLE_FIELDS : MOVE_FIELDS[kind];
  const unexpected = Object.keys(move).filter((k) => !fields.includes(k));
  if (unexpected.length) throw bad("move: unexpected field");
  let seatKey = state.verify_keys[actor];
  if (seatKey === undefined) {
    seatKey = kind === "keys" ? move.verify_key : undefined;
    if (typeof seatKey !== "string") throw new Rejection("bad_signature", "the first move must publish your verify key");
  }
  if (signed.signer !== seatKey || (Object.hasOwn(move, "verify_key") && move.verify_key !== seatKey)) {
    throw new Rejection("bad_signature", "the signer must be your verify key");
  }
  try {
    checkMove(signed, seatKey, { gameId: state.binding, seq, prevHash: state.hash });
  } catch (exc) {
    if (exc instanceof SignatureError) throw new Rejection("bad_signature", exc.message);
    if (exc instanceof TypeError) throw new Rejection("bad_signature", `signed move: ${exc.message}`);
    throw exc;
  }
  try {
    return MOVES[kind](state, actor, signed);
  } catch (exc) {
    if (exc instanceof EncodingError) throw bad(exc.message);
    throw exc;
  }
}

// -- the audit ------------------------------------------------------------------------------
function countDiff(want, got) {
  const left = new Map();
  for (const c of want) left.set(c, (left.get(c) || 0) + 1);
  for (const c of got) left.set(c, (left.get(c) || 0) - 1);
  const out = [];
  for (const [c, n] of left) for (let k = 0; k < n; k++) out.push(c);
  return out.sort();
}
const pySorted = (xs) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export function auditDecks(state, withheld = []) {
  const missingKeys = new Set(withheld);
  const reports = [];
  let ok = true;
  let tampered = false;
  state.decks.forEach((deck, d) => {
    const found = [];
    let sealed = 0;
    deck.masked.forEach((json, i) => {
      const masking = deck.masking.length ? deck.masking[i] : [];
      if (masking.some((p) => missingKeys.has(p))) {
        sealed += 1;
        return;
      }
      let currentCard = stateCard(json);
      try {
        for (const player of pySorted(masking)) {
          const hex = (state.audit_keys[player] || {})[key(d, i)];
          if (hex === undefined) throw new MentalPokerError("no key");
          currentCard = partialUnmask(currentCard, scalarFromHex(hex));
        }
      } catch (exc) {
        if (!(exc instanceof MentalPokerError)) throw exc;
        found.push(null);
        return;
      }
      found.push(isOpen(currentCard) ? decodeCard(currentCard.msg) : null);
    });
    const got = found.filter((c) => c !== null);
    const missing = countDiff(deck.cards, got);
    const extra = countDiff(got, deck.cards);
    const unreadable = found.filter((c) => c === null).length;
    const deckTampered = extra.length > 0 || unreadable > 0;
    const deckOk = !missing.length && !deckTampered;
    ok = ok && deckOk;
    tampered = tampered || deckTampered;
    const report = { deck: d, ok: deckOk, missing: pySorted(missing), extra: pySorted(extra), unreadable };
    if (missingKeys.size) report.sealed = sealed;
    reports.push(report);
  });
  const audit = { ok, decks: reports };
  if (missingKeys.size) {
    audit.tampered = tampered;
    audit.revealed = state.seats.filter((p) => Object.hasOwn(state.audit_keys, p));
    audit.withheld = state.seats.filter((p) => missingKeys.has(p));
    audit.at_fault = state.seats.filter((p) => missingKeys.has(p));
  }
  return audit;
}

// -- the server's own steps (flow.py) -------------------------------------------------------
export function followUp(state) {
  if (state.phase !== "draw" || state.waiting.length || state.drawer === null || state.to_draw <= 0) return [];
  if (state.fresh.length) {
    return [{ type: "macaua.draw_assigned", player: state.drawer, deck: deckNo(state), positions: state.fresh.slice(0, state.to_draw) }];
  }
  if (state.discard.length > 1) return [{ type: "macaua.reshuffled", deck: deckNo(state) + 1, cards: state.discard.slice(0, -1) }];
  return [{ type: "macaua.draw_ended", player: state.drawer, short: state.to_draw }];
}

/** Every step a deadline could bring now (the audit's, or a stalled move's). */
export function timeouts(state) {
  if (!state.waiting.length || state.phase === "over") return [];
  if (state.phase === "audit") return [{ type: "macaua.audit_withheld", ...auditDecks(state, state.waiting) }];
  if (state.config.move_timeout === null) return [];
  return [{ type: "macaua.aborted", reason: "stalled", player: state.waiting[0] }];
}

// -- evolve (folds.py) ----------------------------------------------------------------------
function advance(state, then, changes) {
  if (state.waiting.length > 1) return { ...state, ...changes, waiting: state.waiting.slice(1) };
  return { ...state, ...changes, phase: then, waiting: [...state.seats] };
}

function endTurn(state, changes) {
  const turns = state.turns + 1;
  if (turns >= state.config.max_turns) {
    return { ...state, ...changes, turns, result: "turn_limit", phase: "audit", waiting: [...state.seats] };
  }
  const turn = (state.turn + 1) % state.seats.length;
  return { ...state, ...changes, turns, turn, phase: "play", waiting: [state.seats[turn]] };
}

function setCards(decks, changes) {
  const out = decks.map((deck) => deck);
  for (const [d, i, card, masking] of changes) {
    if (out[d] === decks[d]) out[d] = { ...decks[d], masked: [...decks[d].masked], masking: [...decks[d].masking] };
    out[d].masked[i] = card;
    out[d].masking[i] = masking;
  }
  return out;
}

const replaceLast = (decks, deck) => [...decks.slice(0, -1), deck];
const playChallenge = (codes) => codes.reduce((n, c) => n + (CHALLENGE[rank(c)] || 0), 0);

const FOLDS = {
  "macaua.started"(state, event) {
    const binding = event.binding;
    const genesis = stateHash({ binding, seats: state.seats, config: hashedConfig(state.config) });
    return {
      ...state,
      hash: genesis,
      binding,
      phase: "keys",
      decks: [{ cards: [...MACAUA_CARDS], masked: MACAUA_CARDS.map((c) => openJson(c)), keys: {}, masking: [] }],
      waiting: [...state.seats],
      hands: Object.fromEntries(state.seats.map((p) => [p, []])),
    };
  },
  "macaua.keys"(state, event) {
    const move = event.signed.move;
    const deck = state.decks[state.decks.length - 1];
    const verify = { ...state.verify_keys };
    if ("verify_key" in move && !(event.player in verify)) verify[event.player] = move.verify_key;
    const decks = replaceLast(state.decks, { ...deck, keys: { ...deck.keys, [event.player]: move.keys } });
    return advance(state, "shuffle", { decks, verify_keys: verify });
  },
  "macaua.shuffle"(state, event) {
    const move = event.signed.move;
    if (!("argument" in move)) throw new Unverifiable("a shuffle proved by cut-and-choose");
    return advance(state, "mask", { decks: replaceLast(state.decks, { ...state.decks[state.decks.length - 1], masked: move.cards }) });
  },
  "macaua.mask"(state, event) {
    const cards = event.signed.move.cards;
    let deck = state.decks[state.decks.length - 1];
    if (state.waiting.length > 1) {
      return { ...state, decks: replaceLast(state.decks, { ...deck, masked: cards }), waiting: state.waiting.slice(1) };
    }
    deck = { ...deck, masked: cards, masking: deck.cards.map(() => [...state.seats]) };
    const decks = replaceLast(state.decks, deck);
    if (deckNo(state) === 0) {
      const layout = dealLayout(state);
      const hands = Object.fromEntries(state.seats.map((p, s) => [p, layout.hands[s].map((i) => [0, i])]));
      const need = Object.fromEntries(
        state.seats.map((p) => [
          p,
          [...Object.entries(hands).filter(([q]) => q !== p).flatMap(([, h]) => h), [0, layout.top]].sort(byPosition),
        ]),
      );
      return { ...state, decks, phase: "deal", hands, need, fresh: layout.fresh, waiting: [...state.seats] };
    }
    const fresh = Array.from({ length: deck.cards.length }, (_, k) => deck.cards.length - 1 - k);
    return { ...state, decks, phase: "draw", fresh, waiting: [] };
  },
  "macaua.reveal"(state, event) {
    const player = event.player;
    const decks = setCards(
      state.decks,
      event.opened.map(([d, i, card]) => [d, i, card, state.decks[d].masking[i].filter((p) => p !== player)]),
    );
    const need = Object.fromEntries(Object.entries(state.need).filter(([p]) => p !== player));
    const waiting = state.waiting.slice(1);
    if (waiting.length) return { ...state, decks, need, waiting };
    if (state.phase === "deal") {
      const top = stateCard(decks[0].masked[dealLayout(state).top]);
      const card = isOpen(top) ? decodeCard(top.msg) : null;
      return { ...state, decks, need, phase: "play", discard: [card || "??"], waiting: [current(state)] };
    }
    const hands = { ...state.hands, [state.drawer]: [...state.hands[state.drawer], ...state.assigned] };
    const left = state.to_draw - state.assigned.length;
    const drawn = { decks, need, hands, to_draw: left, assigned: [] };
    if (left > 0) return { ...state, ...drawn, waiting: [] };
    return endTurn(state, { ...drawn, drawer: null });
  },
  "macaua.played"(state, event) {
    const player = event.player;
    const decks = setCards(state.decks, event.cards.map(([d, i, card]) => [d, i, openJson(card), []]));
    const codes = event.cards.map(([, , card]) => card);
    const played = new Set(event.cards.map(([d, i]) => key(d, i)));
    const hand = state.hands[player].filter(([d, i]) => !played.has(key(d, i)));
    const changes = {
      decks,
      hands: { ...state.hands, [player]: hand },
      discard: [...state.discard, ...codes],
      declared: rank(codes[0]) === "A" ? event.suit : null,
      challenge: state.challenge + playChallenge(codes),
    };
    if (!hand.length) return { ...state, ...changes, winner: player, result: "won", phase: "audit", waiting: [...state.seats] };
    return endTurn(state, changes);
  },
  "macaua.draw"(state, event) {
    return { ...state, phase: "draw", drawer: event.player, to_draw: event.count, challenge: 0, waiting: [] };
  },
  "macaua.draw_assigned"(state, event) {
    const assigned = event.positions.map((i) => [event.deck, i]);
    const seat = state.seats.indexOf(event.player);
    const others = state.seats.map((_, k) => state.seats[(seat + k) % state.seats.length]).slice(1);
    return {
      ...state,
      fresh: state.fresh.slice(assigned.length),
      assigned,
      need: Object.fromEntries(others.map((p) => [p, assigned])),
      waiting: others,
    };
  },
  "macaua.reshuffled"(state, event) {
    const cards = [...event.cards];
    return {
      ...state,
      phase: "keys",
      decks: [...state.decks, { cards, masked: cards.map((c) => openJson(c)), keys: {}, masking: [] }],
      discard: state.discard.slice(-1),
      waiting: [...state.seats],
    };
  },
  "macaua.draw_ended"(state) {
    return endTurn(state, { drawer: null, to_draw: 0 });
  },
  "macaua.audit"(state, event) {
    const keys = Object.fromEntries(event.signed.move.keys.map((k) => [key(k.deck, k.position), k.key]));
    return {
      ...state,
      audit_keys: { ...state.audit_keys, [event.player]: keys },
      waiting: state.waiting.filter((p) => p !== event.player),
    };
  },
  "macaua.audited"(state, event) {
    const { type: _t, ...audit } = event;
    return { ...state, audit, phase: "over", waiting: [], result: audit.ok ? state.result : "void" };
  },
  "macaua.audit_withheld"(state, event) {
    const { type: _t, ...audit } = event;
    return { ...state, audit, withheld: [...event.withheld], phase: "over", waiting: [], result: audit.tampered ? "void" : "forfeited" };
  },
  "macaua.rejected"(state, event) {
    const { type: _t, ...rejected } = event;
    return { ...state, phase: "over", waiting: [], result: "rejected", rejected };
  },
  "macaua.aborted"(state, event) {
    const stalled = event.player ?? null;
    return { ...state, phase: "over", waiting: [], result: stalled ? "aborted" : "void", stalled };
  },
};

/** The state after an accepted event (a signed move also moves the hash chain on). */
export function evolve(state, event) {
  const fold = Object.hasOwn(FOLDS, event.type) ? FOLDS[event.type] : null;
  if (fold === null) throw new Error(`unknown macaua event ${event.type}`);
  const after = fold(state, event);
  if ("signed" in event) {
    return { ...after, seq: state.seq + 1, hash: stateHash({ prev: event.signed.prev_hash, move: event.signed }) };
  }
  return after;
}
