// A player's check of every Macaua transition (libs/games/.../macaua/verify.py): the page
// keeps its own copy of the game's public state, built only from the transitions it was
// sent and the rules (game.js), and for each one decides as the server's decide did. It
// signs a transition that holds, or returns a rejection (code, reason, blame, evidence) that
// halts the table: the server's fault when only a forged or misplaced envelope, an altered
// record or a step the rules do not make explains it, else the fault of the player whose
// signed move breaks the rules. Its whole state is JSON (``toJSON``), so a reload goes on.
import { MIN_SHUFFLE_ROUNDS, Rejection, Unverifiable, decide, deepEqual, evolve, followUp, readConfig, setup, timeouts } from "./game.js";
import { stateHash } from "./signing.js";

export { Unverifiable };

const SERVER_FAULTS = new Set(["bad_signature", "wrong_game", "bad_sequence", "stale_state", "replayed_move"]);
const EVIDENCE_BYTES = 16000;

class Rejected extends Error {
  constructor(code, reason, blame) {
    super(reason);
    this.code = code;
    this.blame = blame;
  }
}

const plain = (value) => JSON.parse(JSON.stringify(value));

function fold(state, transition) {
  try {
    return evolve(state, transition);
  } catch (exc) {
    if (exc instanceof Unverifiable) throw exc;
    throw new Rejected("bad_transition", "the transition does not apply", "server");
  }
}

function evidence(transition) {
  if (!transition || typeof transition !== "object" || Array.isArray(transition)) return { transition: null };
  const out = { type: String(transition.type ?? "").slice(0, 64) };
  if (typeof transition.player === "string") out.player = transition.player.slice(0, 64);
  try {
    out.hash = stateHash(transition);
  } catch {
    out.hash = null;
  }
  const text = JSON.stringify(transition);
  out.transition = text.length <= EVIDENCE_BYTES ? transition : text.slice(0, EVIDENCE_BYTES);
  return out;
}

export class TransitionVerifier {
  /** ``player`` (its MacauaPlayer signs), at the table ``gameId``. */
  constructor(player, gameId) {
    this.player = player;
    this.gameId = gameId;
    this.state = null;
    this.checked = 0;
    this.failed = null;
    this.owed = [];
  }

  toJSON() {
    return { gameId: this.gameId, state: this.state, checked: this.checked, failed: this.failed, owed: this.owed };
  }

  static fromJSON(player, data) {
    const v = new TransitionVerifier(player, data.gameId);
    Object.assign(v, { state: data.state, checked: data.checked, failed: data.failed, owed: data.owed });
    return v;
  }

  /** The verdict on the transition of a notification at ``version``: ``{signature}`` or
   * ``{reject}``, the fields of its ack. Throws Unverifiable when this copy cannot check it. */
  check(version, message) {
    if (this.failed !== null) return { reject: this.failed };
    const transition = message.transition;
    try {
      if (!transition || typeof transition !== "object" || Array.isArray(transition)) {
        throw new Rejected("no_transition", "the notification carries no transition", "server");
      }
      if (version <= this.checked) throw new Rejected("replayed_transition", `version ${version} was checked already`, "server");
      this.state = this.apply(plain(transition), message, version);
    } catch (exc) {
      if (!(exc instanceof Rejected)) throw exc;
      this.failed = { code: exc.code, reason: exc.message, blame: exc.blame, version, evidence: evidence(transition) };
      return { reject: this.failed };
    }
    this.checked = version;
    return { signature: this.player.signTransition(this.state.binding, version, transition) };
  }

  apply(transition, message, version) {
    if (transition.type === "macaua.started") {
      const start = this.setup(message.setup);
      const binding = transition.binding;
      if (typeof binding !== "string" || !binding.startsWith(`${this.gameId}/`)) {
        throw new Rejected("wrong_game", "the binding does not name this table", "server");
      }
      return fold(start, transition);
    }
    const state = this.state;
    if (state === null) throw new Unverifiable("a transition before the game's start: this copy cannot check it");
    if (this.owed.length) {
      if (!deepEqual(transition, this.owed.shift())) {
        throw new Rejected("altered_record", "the recorded transition is not what the move yields", "server");
      }
      return fold(state, transition);
    }
    if ("signed" in transition) return this.move(state, transition);
    if (transition.type === "macaua.rejected") return this.halt(state, transition, version);
    return this.serverStep(state, transition);
  }

  setup(data) {
    if (this.state !== null) throw new Rejected("restarted", "the game started twice", "server");
    if (!data || typeof data !== "object") throw new Rejected("no_setup", "the start carries no setup", "server");
    let config;
    let seats;
    let keys;
    try {
      config = readConfig(data.config);
      seats = (data.seats || []).map(String);
      keys = Object.fromEntries(Object.entries(data.keys || {}).map(([p, k]) => [String(p), String(k)]));
    } catch {
      throw new Rejected("bad_setup", "the setup is malformed", "server");
    }
    const me = this.player.player;
    if (!seats.includes(me)) throw new Rejected("not_seated", "this player has no seat in the setup", "server");
    if (config.shuffle_proof === "rounds" && config.shuffle_rounds < MIN_SHUFFLE_ROUNDS) {
      // a shuffler could then stack the deck (a proof of few rounds is forged by retrying)
      throw new Rejected("weak_proof", `shuffles proved by ${config.shuffle_rounds} rounds: fewer than ${MIN_SHUFFLE_ROUNDS}`, "server");
    }
    if (keys[me] !== this.player.verifyKey) throw new Rejected("key_swapped", "this player's seat key is not its own", "server");
    const bound = Object.keys(keys).sort();
    if (bound.length !== new Set(seats).size || bound.some((p) => !seats.includes(p))) {
      throw new Rejected("missing_key", "a seat has no key bound", "server");
    }
    return setup(config, seats, this.gameId, keys);
  }

  move(state, transition) {
    const player = transition.player;
    if (typeof player !== "string" || !state.seats.includes(player)) {
      throw new Rejected("unknown_player", "a move of nobody at this table", "server");
    }
    const signed = transition.signed;
    if (!signed || typeof signed !== "object" || Array.isArray(signed)) throw new Rejected("bad_move", "the move is not an object", "server");
    let events;
    try {
      events = decide(state, player, { type: "move", ...signed });
    } catch (exc) {
      if (!(exc instanceof Rejection)) throw exc;
      throw new Rejected(exc.code, exc.message, SERVER_FAULTS.has(exc.code) ? "server" : player);
    }
    const [recorded, ...owed] = plain(events);
    this.owed = owed;
    if (!deepEqual(recorded, transition)) {
      throw new Rejected("altered_record", "the recorded transition is not what the move yields", "server");
    }
    return fold(state, transition);
  }

  // A halt must name a seat, blame it and refer to a transition already sent; the seat it
  // names refuses it when this copy signed every transition (nobody else can tell).
  halt(state, transition, version) {
    const { player, version: halted } = transition;
    if (
      typeof player !== "string" ||
      !state.seats.includes(player) ||
      transition.blame !== player ||
      !Number.isInteger(halted) ||
      !(halted > 0 && halted < version)
    ) {
      throw new Rejected("bad_halt", "a halt that names no seat or no earlier transition", "server");
    }
    if (player === this.player.player) {
      throw new Rejected("false_halt", "the table halted on a rejection or a bad signature this player never sent", "server");
    }
    return fold(state, transition);
  }

  serverStep(state, transition) {
    const candidates = [...followUp(state), ...timeouts(state)];
    if (!candidates.some((c) => deepEqual(plain(c), transition))) {
      throw new Rejected("unexpected_step", "a server step the rules do not produce here", "server");
    }
    return fold(state, transition);
  }
}
