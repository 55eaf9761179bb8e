// A player's steps of the deal and their public checks (libs/mentalpoker/protocol.py): the
// shuffle (add the shuffle key, permute, re-randomise, prove with the Terelius-Wikström
// argument) and the mask (swap the shuffle key for the per-position keys, with proofs).
import {
  EncodingError,
  MentalPokerError,
  VerificationError,
  add,
  basePoint,
  equal,
  isIdentity,
  mul,
  mulBase,
  pointFromHex,
  randbelow,
  randomScalar,
  sMul,
  sSub,
  sub,
  toHex,
  utf8,
} from "./group.js";
import { card } from "./masking.js";
import { proofFromJson, proofToJson, proveDleqKnown, verifyDleq } from "./proofs.js";
import {
  argumentFromJson,
  argumentToJson,
  proveShuffleArgument,
  randomPermutation,
  verifyShuffleArgument,
} from "./argument.js";
import { canonicalText } from "./signing.js";

/** The context binding a player's proofs to one game (its binding) and deck. */
export const proofContext = (gameId, deckNo, player) =>
  utf8(canonicalText({ deck: deckNo, game: gameId, player }));

function ctx(context, tag, position = null) {
  const suffix = utf8(position === null ? `|${tag}` : `|${tag}|${position}`);
  const out = new Uint8Array(context.length + suffix.length);
  out.set(context);
  out.set(suffix, context.length);
  return out;
}

function deckKey(deck) {
  if (!deck.length) throw new MentalPokerError("empty deck");
  const pk = deck[0].pk;
  if (deck.some((c) => !equal(c.pk, pk))) throw new MentalPokerError("shuffle phase: every card must be under the same key");
  return pk;
}

/** ``out[perm[i]] = reenc(deck[i], nonces[i])``; ``pkSecret``: the deck key's log when known. */
function reencryptShuffle(deck, perm, nonces, pkSecret) {
  const out = new Array(deck.length);
  deck.forEach((c, i) => {
    const r = nonces[i];
    const rPk = pkSecret ? mulBase(sMul(r, pkSecret)) : mul(r, c.pk);
    out[perm[i]] = card(add(c.epk, mulBase(r)), add(c.msg, rPk), c.pk);
  });
  return out;
}

/** One player's shuffle move: the new deck and its proof as ShuffleStepProof.to_json writes
 * it with the argument ({keyed, key_proofs, argument}). */
export function shuffleStep(deck, secrets, context) {
  const pkOld = deckKey(deck);
  const k = secrets.shuffleKey;
  const g = basePoint();
  const bigK = mulBase(k);
  const pkNew = add(pkOld, bigK);
  const keyed = [];
  const keyProofs = [];
  deck.forEach((c, i) => {
    const kEpk = mul(k, c.epk);
    keyed.push(card(c.epk, add(c.msg, kEpk), pkNew));
    keyProofs.push(proveDleqKnown(k, g, bigK, c.epk, kEpk, ctx(context, "add-key", i)));
  });
  const perm = randomPermutation(deck.length, randbelow);
  const nonces = deck.map(() => randomScalar());
  const out = reencryptShuffle(keyed, perm, nonces, isIdentity(pkOld) ? k : null);
  const argument = proveShuffleArgument(keyed, out, perm, nonces, ctx(context, "shuffle-argument"));
  return [
    out,
    { keyed: keyed.map((c) => toHex(c.msg)), key_proofs: keyProofs.map(proofToJson), argument: argumentToJson(argument) },
  ];
}

function list(data, n, what, decode) {
  if (!Array.isArray(data) || data.length !== n) throw new EncodingError(`${what}: expected a list of ${n}`);
  return data.map(decode);
}

/** Throws VerificationError unless ``next`` is a valid shuffle (with its argument) of ``old``
 * by the player of ``keys`` (parsed public keys); ``proof``: the move's JSON fields. */
export function checkShuffleStep(old, next, keys, proof, context) {
  const n = old.length;
  const keyedMsgs = list(proof.keyed, n, "shuffle step keyed", pointFromHex);
  const keyProofs = list(proof.key_proofs, n, "shuffle step key_proofs", (p) => proofFromJson(p, "dleq proof"));
  const argument = argumentFromJson(proof.argument, n);
  if (next.length !== n) throw new VerificationError("shuffle step: deck sizes differ");
  let pkOld;
  try {
    pkOld = deckKey(old);
  } catch (exc) {
    throw new VerificationError(`shuffle step: input deck: ${exc.message}`);
  }
  const pkNew = add(pkOld, keys.shuffle);
  if (isIdentity(pkNew)) throw new VerificationError("shuffle step: the joint key would be the identity");
  const g = basePoint();
  const keyed = old.map((c, i) => {
    if (!verifyDleq(g, keys.shuffle, c.epk, sub(keyedMsgs[i], c.msg), keyProofs[i], ctx(context, "add-key", i))) {
      throw new VerificationError(`shuffle step: card ${i} was not keyed with the committed key`);
    }
    return card(c.epk, keyedMsgs[i], pkNew);
  });
  old.forEach((before, i) => {
    const after = next[i];
    if (!equal(after.pk, pkNew)) throw new VerificationError(`shuffle step: card ${i} has pk != old pk + shuffle key`);
    if (equal(after.epk, before.epk) || equal(after.msg, before.msg)) {
      throw new VerificationError(`shuffle step: card ${i} was not re-randomised`);
    }
  });
  if (!verifyShuffleArgument(keyed, next, argument, ctx(context, "shuffle-argument"))) {
    throw new VerificationError("shuffle step: the shuffle argument does not verify");
  }
}

/** One player's mask move: the new deck and MaskStepProof.to_json's fields. */
export function maskStep(deck, secrets, context) {
  if (deck.length !== secrets.cardKeys.length) throw new MentalPokerError("mask step: deck size differs from the number of card keys");
  const g = basePoint();
  const k = secrets.shuffleKey;
  const out = [];
  const swapped = [];
  const swapProofs = [];
  const remaskProofs = [];
  deck.forEach((c, i) => {
    const delta = sSub(secrets.cardKeys[i], k);
    const dG = mulBase(delta);
    const dEpk = mul(delta, c.epk);
    const midMsg = add(c.msg, dEpk);
    const midPk = add(c.pk, dG);
    if (isIdentity(midPk)) throw new MentalPokerError("remask: an open card cannot be re-randomised (no key masks it)");
    const r = randomScalar();
    const rG = mulBase(r);
    const rPk = mul(r, midPk);
    swapped.push(toHex(midMsg));
    swapProofs.push(proofToJson(proveDleqKnown(delta, g, dG, c.epk, dEpk, ctx(context, "swap", i))));
    remaskProofs.push(proofToJson(proveDleqKnown(r, g, rG, midPk, rPk, ctx(context, "remask", i))));
    out.push(card(add(c.epk, rG), add(midMsg, rPk), midPk));
  });
  return [out, { swapped, swap_proofs: swapProofs, remask_proofs: remaskProofs }];
}

/** Throws VerificationError unless ``next`` is a valid mask move on ``old``. */
export function checkMaskStep(old, next, keys, proof, context) {
  const n = old.length;
  const swappedAll = list(proof.swapped, n, "mask step proof swapped", pointFromHex);
  const swapProofs = list(proof.swap_proofs, n, "mask step proof swap_proofs", (p) => proofFromJson(p, "dleq proof"));
  const remaskProofs = list(proof.remask_proofs, n, "mask step proof remask_proofs", (p) => proofFromJson(p, "dleq proof"));
  if (next.length !== n || keys.cards.length !== n) throw new VerificationError("mask step: sizes differ");
  const g = basePoint();
  old.forEach((before, i) => {
    const after = next[i];
    const delta = sub(keys.cards[i], keys.shuffle);
    const midPk = add(before.pk, delta);
    if (isIdentity(midPk) || !equal(after.pk, midPk)) throw new VerificationError(`mask step: card ${i} has pk != old pk - K + C_${i}`);
    if (equal(after.epk, before.epk) || equal(after.msg, before.msg)) throw new VerificationError(`mask step: card ${i} was not re-randomised`);
    const swapped = swappedAll[i];
    if (!verifyDleq(g, delta, before.epk, sub(swapped, before.msg), swapProofs[i], ctx(context, "swap", i))) {
      throw new VerificationError(`mask step: card ${i} key swap does not match the keys`);
    }
    if (!verifyDleq(g, sub(after.epk, before.epk), midPk, sub(after.msg, swapped), remaskProofs[i], ctx(context, "remask", i))) {
      throw new VerificationError(`mask step: card ${i} re-randomisation does not verify`);
    }
  });
}
