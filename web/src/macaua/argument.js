// The Terelius-Wikström shuffle argument (libs/mentalpoker/argument.py, whose docstring has
// the equations), byte for byte: the same generators, transcripts and JSON.
import {
  EncodingError,
  GROUP_ORDER,
  MentalPokerError,
  Transcript,
  add,
  equal,
  framedSha512,
  fromInt,
  hashToPoint,
  hashToScalar,
  identity,
  isIdentity,
  le32,
  mul,
  mulBase,
  pointFromHex,
  randomScalar,
  sAdd,
  sMul,
  sNeg,
  scalarFromHex,
  sub,
  toHex,
  toInt,
  utf8,
} from "./group.js";
import { MAX_DECK_SIZE } from "./masking.js";

const DOMAIN = "cardroom/mentalpoker/shuffle-argument/v1";
const GEN_DOMAIN = utf8(`${DOMAIN}/generator`);
const SEED_DOMAIN = utf8(`${DOMAIN}/statement`);
const U_DOMAIN = utf8(`${DOMAIN}/u`);
const E_DOMAIN = utf8(`${DOMAIN}/e`);

const generators = [];
function generator(index) {
  while (generators.length <= index) generators.push(hashToPoint(GEN_DOMAIN, le32(generators.length)));
  return generators[index];
}

/** H_0 .. H_n. */
export function argumentGenerators(n) {
  if (!(n > 0 && n <= MAX_DECK_SIZE)) throw new MentalPokerError(`shuffle argument: deck size must be in 1..${MAX_DECK_SIZE}`);
  return Array.from({ length: n + 1 }, (_, i) => generator(i));
}

export function isPermutation(perm, n) {
  if (perm.length !== n) return false;
  const seen = new Array(n).fill(false);
  for (const p of perm) {
    if (!Number.isInteger(p) || p < 0 || p >= n || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

export function invertPermutation(perm) {
  const inverse = new Array(perm.length);
  perm.forEach((p, i) => (inverse[p] = i));
  return inverse;
}

/** Fisher-Yates on the CSPRNG (``randbelow(k)``: uniform in [0, k)). */
export function randomPermutation(n, randbelow) {
  const perm = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = randbelow(i + 1);
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  return perm;
}

/** The common ``pk`` of a shuffled deck (never the identity). */
export function commonPk(deck) {
  if (!deck.length) throw new MentalPokerError("shuffle: empty deck");
  const pk = deck[0].pk;
  if (isIdentity(pk) || deck.some((c) => !equal(c.pk, pk))) {
    throw new MentalPokerError("shuffle: every card must be masked under one common key");
  }
  return pk;
}

function seedOf(context, pk, inputs, outputs, commitments) {
  const t = framedSha512(SEED_DOMAIN, context);
  t.update(le32(inputs.length)).update(pk);
  for (const deck of [inputs, outputs]) for (const c of deck) t.update(c.epk).update(c.msg).update(c.pk);
  for (const c of commitments) t.update(c);
  return t.sha512();
}

const challenges = (seed, n) => Array.from({ length: n }, (_, j) => hashToScalar(U_DOMAIN, seed, le32(j)));

function concat(points) {
  const t = new Transcript();
  for (const p of points) t.update(p);
  return t.bytes();
}

const challengeOf = (seed, chain, ts) => hashToScalar(E_DOMAIN, seed, concat(chain), concat(ts));

function sum(points) {
  let total = identity();
  for (const p of points) total = add(total, p);
  return total;
}

const total = (xs) => fromInt(xs.reduce((acc, x) => acc + toInt(x), 0n));
const dot = (xs, ys) => fromInt(xs.reduce((acc, x, i) => acc + toInt(x) * toInt(ys[i]), 0n));

/** Prove ``outputs == reencrypt_shuffle(inputs, perm, nonces)`` without revealing ``perm``. */
export function proveShuffleArgument(inputs, outputs, perm, nonces, context) {
  const n = inputs.length;
  if (outputs.length !== n || nonces.length !== n || !isPermutation(perm, n)) {
    throw new MentalPokerError("shuffle argument: perm and nonces must match the deck");
  }
  const pk = commonPk(inputs);
  if (!equal(commonPk(outputs), pk)) throw new MentalPokerError("shuffle argument: outputs are under another key");
  const gens = argumentGenerators(n);
  const h0 = gens[0];
  const psi = invertPermutation(perm);
  const rho = Array.from({ length: n }, randomScalar);
  const commitments = rho.map((r, j) => add(mulBase(r), gens[1 + perm[j]]));
  const seed = seedOf(context, pk, inputs, outputs, commitments);
  const u = challenges(seed, n);
  const uOut = psi.map((p) => u[p]);
  const rOut = psi.map((p) => nonces[p]);
  const bigR = Array.from({ length: n }, randomScalar);
  const chain = [];
  let prev = h0;
  for (let m = 0; m < n; m++) {
    prev = add(mulBase(bigR[m]), mul(uOut[m], prev));
    chain.push(prev);
  }
  const [w1, w2, w3, w4] = [randomScalar(), randomScalar(), randomScalar(), randomScalar()];
  const wHat = Array.from({ length: n }, randomScalar);
  const wPrime = Array.from({ length: n }, randomScalar);
  const t1 = mulBase(w1);
  const t2 = mulBase(w2);
  const t3 = add(mulBase(w3), sum(wPrime.map((w, m) => mul(w, gens[1 + m]))));
  const t41 = add(mul(sNeg(w4), pk), sum(wPrime.map((w, m) => mul(w, outputs[m].msg))));
  const t42 = inputs.every((c) => isIdentity(c.epk))
    ? mulBase(sAdd(dot(wPrime, rOut), sNeg(w4)))
    : add(mulBase(sNeg(w4)), sum(wPrime.map((w, m) => mul(w, outputs[m].epk))));
  const tHat = wHat.map((w, m) => add(mulBase(w), mul(wPrime[m], m ? chain[m - 1] : h0)));
  const e = challengeOf(seed, chain, [t1, t2, t3, t41, t42, ...tHat]);
  const v = new Array(n).fill(fromInt(1n));
  for (let m = n - 1; m > 0; m--) v[m - 1] = sMul(uOut[m], v[m]);
  return {
    commitments,
    chain,
    challenge: e,
    responses: [
      sAdd(w1, sMul(e, total(rho))),
      sAdd(w2, sMul(e, dot(bigR, v))),
      sAdd(w3, sMul(e, dot(rho, u))),
      sAdd(w4, sMul(e, dot(rOut, uOut))),
    ],
    chainResponses: wHat.map((w, m) => sAdd(w, sMul(e, bigR[m]))),
    permResponses: wPrime.map((w, m) => sAdd(w, sMul(e, uOut[m]))),
  };
}

export const argumentToJson = (a) => ({
  commitments: a.commitments.map(toHex),
  chain: a.chain.map(toHex),
  challenge: toHex(a.challenge),
  responses: a.responses.map(toHex),
  chain_responses: a.chainResponses.map(toHex),
  perm_responses: a.permResponses.map(toHex),
});

const FIELDS = "chain,chain_responses,challenge,commitments,perm_responses,responses";

function list(data, n, what, decode) {
  if (!Array.isArray(data) || data.length !== n) throw new EncodingError(`shuffle argument ${what}: expected a list of ${n}`);
  return data.map(decode);
}

export function argumentFromJson(data, n) {
  const keys = data && typeof data === "object" && !Array.isArray(data) ? Object.keys(data).sort() : [];
  if (keys.join() !== FIELDS) throw new EncodingError(`shuffle argument: expected an object with keys ${FIELDS}`);
  return {
    commitments: list(data.commitments, n, "commitments", pointFromHex),
    chain: list(data.chain, n, "chain", pointFromHex),
    challenge: scalarFromHex(data.challenge),
    responses: list(data.responses, 4, "responses", scalarFromHex),
    chainResponses: list(data.chain_responses, n, "chain_responses", scalarFromHex),
    permResponses: list(data.perm_responses, n, "perm_responses", scalarFromHex),
  };
}

export function verifyShuffleArgument(inputs, outputs, argument, context) {
  const n = inputs.length;
  const a = argument;
  if (
    n === 0 || n > MAX_DECK_SIZE || outputs.length !== n || a.commitments.length !== n || a.chain.length !== n ||
    a.chainResponses.length !== n || a.permResponses.length !== n || a.responses.length !== 4
  ) {
    return false;
  }
  let pk;
  try {
    pk = commonPk(inputs);
    if (!equal(commonPk(outputs), pk)) return false;
  } catch (exc) {
    if (exc instanceof MentalPokerError) return false;
    throw exc;
  }
  const gens = argumentGenerators(n);
  const h0 = gens[0];
  const { commitments: c, chain, challenge: e } = a;
  const [s1, s2, s3, s4] = a.responses;
  const seed = seedOf(context, pk, inputs, outputs, c);
  const u = challenges(seed, n);
  const negE = sNeg(e);
  const negEu = u.map((uj) => sMul(negE, uj));
  const cBar = sub(sum(c), sum(gens.slice(1)));
  let uProd = 1n;
  for (const uj of u) uProd = (uProd * toInt(uj)) % GROUP_ORDER;
  const cHat = sub(chain[n - 1], mul(fromInt(uProd), h0));
  const t1 = add(mulBase(s1), mul(negE, cBar));
  const t2 = add(mulBase(s2), mul(negE, cHat));
  const t3 = add(
    add(mulBase(s3), sum(a.permResponses.map((s, m) => mul(s, gens[1 + m])))),
    sum(negEu.map((x, j) => mul(x, c[j]))),
  );
  const t41 = add(
    add(mul(sNeg(s4), pk), sum(a.permResponses.map((s, m) => mul(s, outputs[m].msg)))),
    sum(negEu.map((x, j) => mul(x, inputs[j].msg))),
  );
  const t42 = add(
    add(mulBase(sNeg(s4)), sum(a.permResponses.map((s, m) => mul(s, outputs[m].epk)))),
    sum(negEu.map((x, j) => mul(x, inputs[j].epk))),
  );
  const tHat = a.chainResponses.map((s, m) =>
    add(add(mulBase(s), mul(a.permResponses[m], m ? chain[m - 1] : h0)), mul(negE, chain[m])),
  );
  return equal(challengeOf(seed, chain, [t1, t2, t3, t41, t42, ...tHat]), e);
}
