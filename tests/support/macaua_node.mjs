// The page's Macaua code (web/src/macaua) under node, for the cross-language tests: one JSON
// request a line on stdin, one JSON answer a line on stdout (tests/support/macaua_js.py).
import { createInterface } from "node:readline";
import * as mp from "../../web/src/macaua/index.js";

await mp.ready;
const players = new Map(); // player -> its toJSON(), as the page's sessionStorage keeps it
const verifiers = new Map(); // player -> its verifier's toJSON(), likewise

const openDeck = () => mp.MACAUA_CARDS.map((c) => mp.openDeckCard(mp.cardPoint(c)));
const attempt = (check) => {
  try {
    check();
    return true;
  } catch (exc) {
    if (exc instanceof mp.MentalPokerError) return false;
    throw exc;
  }
};

/** Keys, a shuffle of the open deck with its argument, a mask, every card key, the opened
 * cards, a signed move and a signed transition, by one player alone. */
function make({ binding, player, value }) {
  const me = new mp.MacauaPlayer(player);
  const v = { binding, seq: 0, hash: mp.GENESIS_HASH, deck: 0, deck_sizes: [54], cards: mp.deckToJson(openDeck()) };
  const keys = me.keysMove(v, 0);
  const shuffle = me.shuffleMove(v, 0);
  const mask = me.build({ ...v, cards: shuffle.cards }, { kind: "mask", deck: 0 });
  const reveal = me.build(v, { kind: "reveal", deck: 0, positions: mask.cards.map((_, i) => [0, i]) });
  const opened = me.hand({ hand: mask.cards.map((masked, i) => ({ deck: 0, position: i, masked })) });
  const signed = me.sign(v, keys);
  const transition = { type: "macaua.keys", player, signed };
  return {
    verify_key: me.verifyKey,
    keys,
    shuffle,
    mask,
    reveal,
    opened: opened.map((c) => c.card),
    signed,
    transition,
    transition_signature: me.signTransition(binding, 3, transition),
    canonical: mp.canonicalText(value),
    hash: mp.stateHash(value),
  };
}

/** The page's verdict on each of Python's artifacts (and the tampered ones beside them). */
function check({ binding, player, verify_key, keys, shuffle, mask, card_keys, signed, transition, transition_signature }) {
  const ctx = mp.proofContext(binding, 0, player);
  const pub = mp.publicKeysFromJson(keys.keys);
  const open = openDeck();
  const shuffled = () => mp.deckFromJson(shuffle.cards);
  return {
    keys: attempt(() => mp.checkPublicKeys(pub, ctx, 54)),
    keys_other_context: attempt(() => mp.checkPublicKeys(pub, mp.proofContext(binding, 1, player), 54)),
    shuffle: attempt(() => mp.checkShuffleStep(open, shuffled(), pub, shuffle, ctx)),
    shuffle_swapped: attempt(() => {
      const out = shuffled();
      [out[0], out[1]] = [out[1], out[0]];
      mp.checkShuffleStep(open, out, pub, shuffle, ctx);
    }),
    mask: attempt(() => mp.checkMaskStep(shuffled(), mp.deckFromJson(mask.cards), pub, mask.proof, ctx)),
    mask_tampered: attempt(() => {
      const out = mp.deckFromJson(mask.cards);
      out[5] = out[6];
      mp.checkMaskStep(shuffled(), out, pub, mask.proof, ctx);
    }),
    reveal_keys_match: mp
      .deckFromJson(mask.cards)
      .map((_, i) => mp.keyMatches(mp.scalarFromHex(card_keys[i]), pub.cards[i]))
      .every(Boolean),
    opened: mp
      .deckFromJson(mask.cards)
      .map((c, i) => mp.decodeCard(mp.partialUnmask(c, mp.scalarFromHex(card_keys[i])).msg)),
    move: attempt(() => mp.checkMove(signed, verify_key, { gameId: binding, seq: 1, prevHash: mp.GENESIS_HASH })),
    move_tampered: attempt(() => mp.checkMove({ ...signed, seq: 2 }, verify_key)),
    transition: attempt(() => mp.checkTransition(transition_signature, verify_key, binding, 3, transition)),
    transition_other_version: attempt(() => mp.checkTransition(transition_signature, verify_key, binding, 4, transition)),
  };
}

function load(player) {
  return mp.MacauaPlayer.fromJSON(JSON.parse(players.get(player)));
}

/** A seat's move for the listed actions: the crypto moves as built, a play the longest
 * legal one (several cards of one rank when it can; an Ace declaring spades), else a draw. */
function act({ player, view, actions }) {
  const me = load(player);
  const v = view.state ?? view;
  const action = actions[0];
  let move;
  if (action.kind === "play") {
    const play = me.legalPlays(v).reduce((best, p) => (best && best.length >= p.length ? best : p), null);
    move = play ? me.playMove(play, mp.rank(play[0].card) === "A" ? "S" : null) : { kind: "draw" };
  } else {
    move = me.build(v, action);
  }
  const command = me.sign(v, move);
  players.set(player, JSON.stringify(me)); // a reload between any two moves keeps the seat
  return command;
}

/** The page's verdicts on ``notes`` ([version, message] in order), its verifier reloaded
 * from JSON before every ``reload``-th (as a reload of the page does); ``fresh`` starts a
 * new copy of the game. */
function verify({ player, game_id, notes, fresh, reload }) {
  const me = load(player);
  if (fresh) verifiers.set(player, JSON.stringify(new mp.TransitionVerifier(me, game_id)));
  const verdicts = [];
  let v = mp.TransitionVerifier.fromJSON(me, JSON.parse(verifiers.get(player)));
  for (const [n, [version, message]] of notes.entries()) {
    if (n % reload === reload - 1) v = mp.TransitionVerifier.fromJSON(me, JSON.parse(JSON.stringify(v)));
    try {
      verdicts.push(v.check(version, message));
    } catch (exc) {
      if (!(exc instanceof mp.UnverifiableTransition)) throw exc;
      verdicts.push({ unverifiable: exc.message });
    }
  }
  verifiers.set(player, JSON.stringify(v));
  const state = v.state;
  return { verdicts, hash: state?.hash ?? null, phase: state?.phase ?? null, turns: state?.turns ?? null };
}

const OPS = {
  verify,
  make,
  check,
  new_player: ({ player }) => {
    const me = new mp.MacauaPlayer(player);
    players.set(player, JSON.stringify(me));
    return { verify_key: me.verifyKey };
  },
  act,
  /** What the seat's checked copy (its verifier, as ``verify`` left it) asks it to make. */
  asked: ({ player }) => {
    const v = mp.TransitionVerifier.fromJSON(load(player), JSON.parse(verifiers.get(player)));
    return mp.askedOf(v.state, player);
  },
  sign: ({ player, binding, version, transition }) => load(player).signTransition(binding, version, transition),
  hand: ({ player, view }) => load(player).hand(view.state ?? view).map((c) => c.card),
};

for await (const line of createInterface({ input: process.stdin })) {
  let answer;
  try {
    const request = JSON.parse(line);
    answer = { ok: OPS[request.op](request) };
  } catch (exc) {
    answer = { error: String(exc && exc.stack) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
