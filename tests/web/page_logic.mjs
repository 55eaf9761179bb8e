// The page's own logic under node, for tests/web/test_page_logic.py: one JSON request on
// stdin ({op, ...}), its JSON answer on stdout. sessionStorage is a Map standing in for the
// tab's (the page's modules read the global, as in a browser).
import { readFileSync } from "node:fs";

class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  get length() {
    return this.items.size;
  }
  key(i) {
    return [...this.items.keys()][i] ?? null;
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}
globalThis.sessionStorage = new MemoryStorage();

const { gameOf, syncedClocks } = await import("../../web/src/games.js");
const { seatName, withBots } = await import("../../web/src/names.js");
const { MacauaSeat, SEATS_KEPT } = await import("../../web/src/macaua_seat.js");

/** A game's log line for ``message``, as a seat's page writes it: ``labels`` names the
 * other seats (the page's labels), ``rejected`` is the seat's own refusal, if any. */
function describe({ game, message, me, view, seats, labels = {}, rejected = null }) {
  const ctx = {
    me,
    view,
    seats,
    label: (p) => labels[p] ?? `<${p}>`,
    seat: rejected ? { rejected } : null,
  };
  return gameOf(game).describe(message, ctx);
}

/** Steps on one tab's Macaua seats: ``take`` (a new seat bound at a table), ``open`` (the
 * table page loads it), ``leave`` (the page is left), ``gone`` (the lobby says the table is
 * finished or gone); answers the kept seats after each step. */
async function seats({ root, player, steps }) {
  const open = new Map();
  const after = [];
  for (const [step, game] of steps) {
    if (step === "take") {
      const seat = await MacauaSeat.fresh(root, player);
      seat.bind(game);
      open.set(game, seat);
    } else if (step === "open") {
      const seat = await MacauaSeat.load(root, player, game);
      if (seat) open.set(game, seat);
    } else if (step === "leave") {
      open.get(game)?.release();
      open.delete(game);
    } else if (step === "gone") {
      MacauaSeat.forgetGame(root, player, game);
    } else if (step === "over") {
      open.get(game)?.forget();
    }
    after.push(MacauaSeat.kept(root, player));
  }
  return { after, cap: SEATS_KEPT, stored: [...sessionStorage.items.keys()] };
}

/** A seat checks a notification while the tab's storage refuses every write: its verdict,
 * and whether it says it is unsaved then, and once the storage takes writes again. */
async function fullStorage({ root, player, game }) {
  const seat = await MacauaSeat.fresh(root, player);
  seat.bind(game);
  const setItem = sessionStorage.setItem;
  sessionStorage.setItem = () => {
    throw new Error("QuotaExceededError");
  };
  let fields;
  let thrown = null;
  try {
    fields = seat.verify({ version: 1, message: { type: "MacauaUpdate" } });
  } catch (exc) {
    thrown = String(exc);
  }
  const full = seat.unsaved;
  sessionStorage.setItem = setItem;
  seat.save();
  return { fields, thrown, full, later: seat.unsaved };
}

/** The final ranking's note on a game's ``outcome``, as seat ``me`` reads it. */
function outcomeNote({ game, outcome, me, labels = {}, rejected = null }) {
  const ctx = { me, label: (p) => labels[p] ?? `<${p}>`, seat: rejected ? { rejected } : null };
  return gameOf(game).outcomeNote?.(outcome, ctx) ?? null;
}

const OPS = {
  fullStorage,
  outcomeNote,
  describe,
  describeMany: ({ cases }) => cases.map(describe),
  seats,
  names: ({ players, me, myName, bots, seats }) => players.map((p) => seatName(p, { me, myName, bots, seats })),
  withBots: ({ known, players, kind, game }) => withBots(known, players, kind, game),
  syncedClocks: ({ type, reply, received }) => syncedClocks(type, reply, received),
};

const request = JSON.parse(readFileSync(0, "utf-8"));
const answer = await OPS[request.op](request);
process.stdout.write(JSON.stringify(answer ?? null));
