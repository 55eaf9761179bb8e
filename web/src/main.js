// cardroom in a browser: the lobby (#/), a seat at a table (#/table/<game>) and a spectator's
// seat (#/watch/<game>). The page holds one player's token and shows only what that player's
// notifications, sync replies and the public spectator stream carry.
import { CardroomError, Player, loadIdentity } from "./conn.js";
import { el } from "./dom.js";
import { clone, gameOf, gameName, syncedClocks, words } from "./games.js";
import { MacauaSeat } from "./macaua_seat.js";
import { seatName, withBots } from "./names.js";
import { openLog, storeQuietly } from "./store.js";

const app = document.getElementById("app");
const statusLine = document.getElementById("connection");

const state = { config: null, player: null, games: [], page: null };
// the lobby waits up to 30 s for the bots of one request to register and join
const BOTS_TIMEOUT = 35000;
// seconds a Macaua table made from this page waits for a move (the house cannot play a seat)
const MACAUA_MOVE_TIMEOUT = 120;

// -- errors in words ------------------------------------------------------------------------
const ERROR_WORDS = {
  not_your_turn: "It is not your turn.",
  illegal_move: "That move is not allowed now.",
  awaiting_acks: "Another player has not seen the last move yet; try again in a moment.",
  table_full: "That table is full.",
  too_many_tables: "You have many tables waiting for players; start or fill one first.",
  too_many_bots: "You have many bots playing already; wait for one of their games to end.",
  already_seated: "You already sit at that table.",
  not_seated: "You do not sit at that table.",
  not_creator: "Only the table's creator can start it.",
  not_enough_players: "Not enough players to start yet.",
  already_started: "That game has already started.",
  game_finished: "That game is over.",
  bad_config: "Those options are not accepted.",
  unknown_game: "There is no such table.",
  unavailable: "The server is not answering right now; trying again may help.",
  rate_limited: "Too many requests at once; slow down a little.",
  key_required: "This game needs a signing key for the seat.",
  internal: "The server failed on that request.",
};

const OVERTAKEN = new Set(["replayed_move", "stale_state", "bad_sequence"]);

function explain(exc) {
  if (exc instanceof CardroomError) {
    const words = ERROR_WORDS[exc.code];
    const detail = exc.message && exc.message !== exc.code ? exc.message : "";
    return words ? `${words}${detail ? ` (${detail})` : ""}` : detail || exc.code;
  }
  return String(exc?.message || exc);
}

function toast(text, kind = "error") {
  const box = el("div", { class: `toast ${kind}`, role: "alert" }, text);
  document.getElementById("toasts").append(box);
  setTimeout(() => box.remove(), 6000);
}

// -- names ------------------------------------------------------------------------------------
function botNames() {
  try {
    return JSON.parse(localStorage.getItem(`cardroom.bots.${state.config.root}`) || "{}");
  } catch {
    return {};
  }
}

/** A game type's entry in the catalog the page read at start (/api/games). */
function catalogOf(type) {
  return state.games.find((g) => g.type === type);
}

/** The bot kind a game's choice starts at: its heuristic bot, else the first it has. */
function firstBot(kinds) {
  return kinds.includes("heuristic") ? "heuristic" : kinds[0];
}

function rememberBots(players, kind, game) {
  // a name only: a full storage must not stop the table from opening
  storeQuietly(`cardroom.bots.${state.config.root}`, JSON.stringify(withBots(botNames(), players, kind, game)));
}

/** The name of ``player`` (names.js), told apart from the other ``seats`` of its table (by
 * default the table shown). */
function label(player, seats = state.page?.summary?.seats || []) {
  return seatName(player, { me: state.player?.player, myName: state.player?.name, bots: botNames(), seats });
}

/** A seat's name as a node, its id in its title (names are labels; the id is the seat). */
function nameNode(player, seats) {
  return el("span", { class: "name", title: player || null }, label(player, seats));
}

/** ``players``' names as nodes, ``between`` them. */
function namesLine(players, between, seats = players) {
  return players.flatMap((p, i) => (i ? [between, nameNode(p, seats)] : [nameNode(p, seats)]));
}

// -- countdowns -----------------------------------------------------------------------------
const deadlines = new Map(); // key -> due time (ms), so a re-render does not restart one

function tick(node) {
  const left = Math.max(0, Math.ceil((Number(node.dataset.due) - Date.now()) / 1000));
  node.textContent = left > 0 ? `${left} s left` : "time is up";
  node.classList.toggle("urgent", left <= 5);
}

function countdown(seconds, key) {
  if (!deadlines.has(key)) deadlines.set(key, Date.now() + seconds * 1000);
  const node = el("span", { class: "countdown", "data-due": deadlines.get(key) });
  tick(node);
  return node;
}

setInterval(() => document.querySelectorAll(".countdown").forEach(tick), 250);

// -- the shell ----------------------------------------------------------------------------------
async function start() {
  state.config = await (await fetch("/config.json")).json();
  state.games = (await (await fetch("/api/games")).json()).games;
  window.addEventListener("hashchange", route);
  const known = loadIdentity(state.config.root);
  if (known?.name) await signIn(known.name);
  route();
}

async function signIn(name) {
  setConnection("connecting…");
  state.player = await Player.open(state.config, name);
  state.player.onStatus = (s) => setConnection(s === "online" ? "connected" : "offline: reconnecting…");
  setConnection("connected");
  // a closed tab stops acknowledging: the server marks the player away, as for any client
  window.addEventListener("pagehide", () => state.player?.close());
}

function setConnection(text) {
  const who = state.player ? `${state.player.name} · ` : "";
  statusLine.textContent = `${who}${text}`;
  statusLine.dataset.state = text;
}

function route() {
  state.page?.leave?.();
  state.page = null;
  deadlines.clear();
  app.replaceChildren();
  if (!state.player) return nameForm();
  const [, kind, game] = location.hash.match(/^#\/(table|watch)\/([A-Za-z0-9_-]+)/) || [];
  if (kind === "table") state.page = new TablePage(game, false);
  else if (kind === "watch") state.page = new TablePage(game, true);
  else state.page = new Lobby();
}

function nameForm() {
  const input = el("input", { id: "name", maxlength: 24, placeholder: "your name", required: true, autofocus: true });
  const form = el(
    "form",
    {
      class: "panel signin",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await signIn(input.value.trim() || "Player");
          route();
        } catch (exc) {
          toast(`Could not connect: ${explain(exc)}`);
        }
      },
    },
    el("h2", {}, "Welcome to cardroom"),
    el("p", {}, "Pick a name to sit down. It stays in this browser; other players see your seat."),
    input,
    el("button", { type: "submit", class: "primary" }, "Enter the lobby"),
  );
  app.append(form);
}

// -- the lobby --------------------------------------------------------------------------------
class Lobby {
  constructor() {
    this.list = el("div", { class: "tables" }, el("p", {}, "Loading tables…"));
    app.append(this.createForm(), el("section", { class: "panel" }, el("h2", {}, "Open tables"), this.list));
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 2000);
  }

  leave() {
    clearInterval(this.timer);
  }

  /** Forget this tab's Macaua seats at tables the lobby lists finished, or no longer
   * knows: one missing from the listing (it shows the last changed tables only) is asked
   * for once; a seat at an open or playing table stays. */
  async tidySeats(tables) {
    const { root } = state.config;
    const me = state.player.player;
    const kept = MacauaSeat.kept(root, me);
    if (!kept.length) return;
    const listed = new Map(tables.map((t) => [t.game, t]));
    this.asked ??= new Set();
    for (const game of kept) {
      let table = listed.get(game);
      if (!table) {
        if (this.asked.has(game)) continue;
        this.asked.add(game);
        try {
          table = (await state.player.lobby("get", { game })).table;
        } catch (exc) {
          if (exc instanceof CardroomError && exc.code === "unknown_game") MacauaSeat.forgetGame(root, me, game);
          continue;
        }
      }
      if (table.status === "finished") MacauaSeat.forgetGame(root, me, game);
    }
  }

  createForm() {
    const type = el("select", { id: "game-type" }, ...state.games.map((g) => el("option", { value: g.type }, gameName(g.type))));
    const options = el("div", { class: "options" });
    const seats = el("input", { id: "seats", type: "number", min: 2, value: 3 });
    const bots = el("input", { id: "bots", type: "number", min: 0, value: 2 });
    const kind = el("select", { id: "bot-kind" });
    const turnTimeout = el("input", { id: "turn-timeout", type: "number", min: 0.1, step: "any", placeholder: "off" });
    const ackTimeout = el("input", { id: "ack-timeout", type: "number", min: 1, step: "any", placeholder: "30" });
    const fields = new Map();
    const showOptions = () => {
      const game = catalogOf(type.value);
      seats.min = game.min_players;
      seats.max = game.max_players;
      seats.value = Math.min(Math.max(Number(seats.value), game.min_players), game.max_players);
      bots.max = game.max_players - 1;
      // the kinds are the game's own (a game that adds one needs no change here); each game
      // starts at its heuristic bot, whatever the game shown before offered
      const chosen = firstBot(game.bots);
      kind.replaceChildren(...game.bots.map((k) => el("option", { value: k, selected: k === chosen }, `${k} bots`)));
      fields.clear();
      options.replaceChildren(
        ...Object.entries(game.defaults).map(([key, value]) => {
          let input;
          if (key === "protocol") {
            input = el("select", { name: key }, ...["v2", "v1"].map((v) => el("option", { value: v, selected: v === value }, v === "v2" ? "second generation (v2)" : "first generation (v1)")));
          } else if (typeof value === "number") {
            input = el("input", { name: key, type: "number", step: "any", value });
          } else {
            // a Macaua seat moves only from the tab holding its keys: a table made here gives
            // up on a closed tab after a while (the option's own default waits forever)
            const shown = type.value === "macaua" && key === "move_timeout" && value == null ? MACAUA_MOVE_TIMEOUT : value;
            input = el("input", { name: key, value: typeof shown === "string" ? shown : JSON.stringify(shown) });
          }
          fields.set(key, [input, value]);
          return el("label", {}, el("span", {}, words(key)), input);
        }),
      );
    };
    type.addEventListener("change", showOptions);
    showOptions();
    const submit = async (e) => {
      e.preventDefault();
      const config = {};
      try {
        for (const [key, [input, initial]] of fields) {
          if (typeof initial === "number") config[key] = Number(input.value);
          else if (typeof initial === "string") config[key] = input.value;
          else config[key] = JSON.parse(input.value || "null");
        }
      } catch {
        toast("An option is not valid JSON.");
        return;
      }
      const table = {};
      if (turnTimeout.value) table.turn_timeout = Number(turnTimeout.value);
      if (ackTimeout.value) table.ack_timeout = Number(ackTimeout.value);
      if (Object.keys(table).length) config.table = table;
      const total = Number(seats.value);
      const botCount = Number(bots.value);
      if (botCount >= total) {
        toast("Leave at least one seat for yourself: fewer bots than seats.");
        return;
      }
      try {
        // a Macaua seat is bound to a key made here, now, and kept in this tab
        const seat = type.value === "macaua" ? await MacauaSeat.fresh(state.config.root, state.player.player) : null;
        const body = { game_type: type.value, config, seats: total, ...(seat ? { key: seat.verifyKey } : {}) };
        const reply = await state.player.lobby("create", body);
        seat?.bind(reply.game);
        state.player.follow(reply.game); // held until the table page shows them
        if (botCount > 0) await addBots(reply.game, botCount, kind.value);
        location.hash = `#/table/${reply.game}`;
      } catch (exc) {
        toast(`Could not create the table: ${explain(exc)}`);
      }
    };
    return el(
      "form",
      { class: "panel create", onsubmit: submit },
      el("h2", {}, "New table"),
      el("label", {}, el("span", {}, "Game"), type),
      el("label", {}, el("span", {}, "Seats"), seats),
      el("label", {}, el("span", {}, "Bots"), bots, kind),
      el("label", {}, el("span", {}, "Turn timeout (s)"), turnTimeout),
      el("label", {}, el("span", {}, "Away after (s)"), ackTimeout),
      el("details", {}, el("summary", {}, "Game options"), options),
      el("button", { type: "submit", class: "primary", id: "create" }, "Create table"),
    );
  }

  async refresh() {
    let tables;
    try {
      tables = (await state.player.lobby("list", {})).tables;
    } catch (exc) {
      this.list.replaceChildren(el("p", { class: "error" }, `Cannot list the tables: ${explain(exc)}`));
      return;
    }
    this.tidySeats(tables).catch((exc) => console.warn("the kept Macaua seats could not be tidied", exc));
    const order = { lobby: 0, playing: 1, finished: 2 };
    tables.sort((a, b) => order[a.status] - order[b.status] || b.version - a.version);
    const shown = tables.filter((t) => t.status !== "finished" || t.seats.includes(state.player.player)).slice(0, 40);
    const byType = new Map();
    for (const t of shown) byType.set(t.game_type, [...(byType.get(t.game_type) || []), t]);
    if (!byType.size) {
      this.list.replaceChildren(el("p", {}, "No open tables yet: create one."));
      return;
    }
    this.list.replaceChildren(
      ...[...byType].map(([type, list]) =>
        el(
          "div",
          { class: "game-group" },
          el("h3", {}, gameName(type)),
          ...list.map((t) => tableRow(t)),
        ),
      ),
    );
  }
}

function optionsText(t) {
  return Object.entries(t.config || {})
    .filter(([, v]) => v != null)
    .map(([k, v]) => `${words(k).toLowerCase()} ${Array.isArray(v) ? v.join("-") : v}`)
    .join(", ");
}

function tableRow(t) {
  const me = state.player.player;
  const seated = t.seats.includes(me);
  const buttons = [];
  const open = () => (location.hash = `#/table/${t.game}`);
  if (seated) buttons.push(el("button", { class: "primary", onclick: open }, "Open"));
  if (t.status === "lobby" && !seated && t.seats.length < t.max_seats) {
    buttons.push(
      el(
        "button",
        {
          class: "primary join",
          onclick: async () => {
            try {
              state.player.follow(t.game);
              const seat = t.game_type === "macaua" ? await MacauaSeat.fresh(state.config.root, state.player.player) : null;
              await state.player.lobby("join", { game: t.game, ...(seat ? { key: seat.verifyKey } : {}) });
              seat?.bind(t.game);
              open();
            } catch (exc) {
              toast(`Could not join: ${explain(exc)}`);
            }
          },
        },
        "Join",
      ),
    );
  }
  if (t.status !== "lobby") buttons.push(el("button", { class: "watch", onclick: () => (location.hash = `#/watch/${t.game}`) }, "Watch"));
  return el(
    "div",
    { class: `table-row status-${t.status}`, "data-game": t.game },
    el(
      "div",
      {},
      el("strong", {}, `${words(t.status)} · ${t.seats.length}/${t.max_seats} seats`),
      el("div", { class: "seats-line" }, ...namesLine(t.seats, ", ")),
      el("small", {}, optionsText(t)),
    ),
    el("div", { class: "buttons" }, ...buttons),
  );
}

/** Seat bots at a table this player sits at: the lobby checks the seat, the bots' service
 * seats them (each registers and joins, so it may take a while). */
async function addBots(game, count, kind) {
  const reply = await state.player.lobby("bots", { game, count, kind }, BOTS_TIMEOUT);
  rememberBots(reply.players, kind, game);
  return reply.players;
}

// -- a table: a seat (with the player's notifications) or a spectator's view ---------------------
class TablePage {
  constructor(game, spectator) {
    this.game = game;
    this.spectator = spectator;
    this.view = null;
    this.version = 0; // of the newest notification or view shown
    this.actions = [];
    this.summary = null;
    this.outcome = null;
    this.busy = false;
    this.logKey = `cardroom.log.${state.config.root}.${state.player.player}.${game}`;
    if (!spectator) openLog(this.logKey);
    this.log = spectator ? [] : this.loadLog();
    this.header = el("div", { class: "table-header" });
    this.board = el("div", { class: "board" });
    this.logBox = el("ol", { class: "log", "aria-live": "polite" });
    this.turn = el("div", { class: "turn-banner" });
    app.append(
      el("section", { class: "panel table-page", "data-game": game }, this.header, this.turn, this.board),
      el(
        "section",
        { class: "panel" },
        el("h3", {}, spectator ? "What the table shows" : "What happened"),
        spectator ? el("p", { class: "status" }, "Spectators see the table, the scores and the result; the players' own messages stay with them.") : null,
        this.logBox,
      ),
    );
    this.renderLog();
    this.load();
  }

  leave() {
    this.stopped = true;
    clearInterval(this.poll);
    this.watching?.unsubscribe();
    this.seat?.release();
    if (!this.spectator) state.player.unfollow(this.game);
  }

  loadLog() {
    try {
      return JSON.parse(localStorage.getItem(this.logKey) || "[]");
    } catch {
      return [];
    }
  }

  addLog(text) {
    if (!text) return;
    this.log.push(text);
    if (this.log.length > 400) this.log.splice(0, this.log.length - 400);
    if (!this.spectator) storeQuietly(this.logKey, JSON.stringify(this.log));
    this.logBox.append(el("li", {}, text));
    this.logBox.scrollTop = this.logBox.scrollHeight;
  }

  renderLog() {
    this.logBox.replaceChildren(...this.log.map((t) => el("li", {}, t)));
  }

  async load() {
    try {
      this.summary = (await state.player.lobby("get", { game: this.game })).table;
    } catch (exc) {
      // a table the server does not know: a seat this tab kept there guards nothing
      if (exc instanceof CardroomError && exc.code === "unknown_game") MacauaSeat.forgetGame(state.config.root, state.player.player, this.game);
      this.board.replaceChildren(el("p", { class: "error" }, explain(exc)));
      return;
    }
    this.render();
    if (this.spectator) {
      const apply = (update) => {
        if (update.version <= this.version) return; // updates may cross the first read
        this.version = update.version;
        const rules = gameOf(this.summary?.game_type);
        if (this.view && rules?.spectate) {
          for (const line of rules.spectate(this.view, update.view, this.ctx())) this.addLog(line);
        }
        this.view = update.view;
        this.summary = { ...this.summary, status: update.view.status, away: update.view.away };
        this.outcome = update.view.outcome;
        this.render();
      };
      this.watching = state.player.watch(this.game, apply);
      await state.player.nc.flush(); // subscribed before the present is read: nothing falls between
      const response = await fetch(`/api/public?game=${encodeURIComponent(this.game)}`);
      if (response.ok) apply(await response.json());
      if (this.summary.status === "finished") this.outcome = this.summary.outcome;
      this.render();
      return;
    }
    if (!this.summary.seats.includes(state.player.player)) {
      location.hash = `#/watch/${this.game}`;
      return;
    }
    if (this.summary.game_type === "macaua") {
      this.seat = await MacauaSeat.load(state.config.root, state.player.player, this.game);
      if (this.stopped) {
        this.seat?.release(); // the page was left while the seat loaded
        return;
      }
      this.forgetIfOver();
      // a finished game's seat was removed once its end was shown: the result still shows
      if (!this.seat && this.summary.status !== "finished") {
        // the seat's keys live in the tab that took it: this one can neither move nor sign
        this.orphan = true;
        this.render();
        return;
      }
    }
    this.feed = state.player.follow(this.game, {
      verify: (note) => (this.seat ? this.seat.verify(note) : null),
      show: (note) => this.show(note),
      synced: (reply, received) => this.synced(reply, received),
      error: (exc) => toast(explain(exc)),
    });
    if (this.summary.status === "lobby") {
      // nothing to sync before the game starts: its first notification is GameStarted
      this.poll = setInterval(() => this.refreshSummary(), 1500);
    } else {
      this.feed.resync(); // a reload, a second tab: every unacknowledged notification, in order
    }
  }

  async refreshSummary() {
    let table;
    try {
      table = (await state.player.lobby("get", { game: this.game })).table;
    } catch {
      return;
    }
    // an answer read before GameStarted was shown must not take the page back to the lobby
    const rank = { lobby: 0, playing: 1, finished: 2 };
    if (rank[table.status] < rank[this.summary?.status]) table = { ...table, status: this.summary.status };
    this.summary = table;
    this.forgetIfOver();
    if (this.summary.status !== "lobby") {
      clearInterval(this.poll);
      if (!this.view && this.feed && this.feed.lastSeq === 0) this.feed.resync();
    }
    this.render();
  }

  async show(note) {
    const rules = gameOf(this.summary?.game_type);
    const message = note.message || {};
    if (message.type === "GameStarted") {
      clearInterval(this.poll);
      this.summary = { ...this.summary, status: "playing", seats: message.seats };
    }
    this.version = Math.max(this.version, note.version);
    if (note.view) this.view = note.view;
    else if (this.view && rules?.patch) this.view = rules.patch(clone(this.view), message, this.ctx());
    this.actions = note.actions || [];
    this.actionsAt = Date.now();
    this.sent = null; // what comes next is told now
    if (!this.view && !this.asked) {
      // no view yet (a seat that does not act first gets none with its notifications):
      // ask for the player's whole view once, as a reconnect does
      this.asked = true;
      this.feed?.resync();
    }
    this.addLog(this.describe(message));
    if (message.type === "GameOver") {
      this.outcome = message.outcome;
      this.summary = { ...this.summary, status: "finished", outcome: message.outcome };
      this.forgetIfOver();
    }
    this.render();
    this.automatic();
  }

  /** A Macaua seat's own moves of the deal (keys, shuffle, mask, card keys, the audit) are
   * the page's to make, once each: only a play or a draw is the person's choice. The move is
   * the one the seat's own checked copy asks for, made once the server lists that kind too
   * (the game is ready for it); the server's listing never says which keys to publish. */
  automatic() {
    const action = this.actions[0];
    const seat = this.seat;
    const asked = seat?.asked();
    if (!asked || !action || action.kind !== asked.kind) return;
    if (this.busy || this.autoSeq === seat.state.seq) return;
    this.autoSeq = seat.state.seq;
    setTimeout(() => this.act(() => seat.automatic(asked)), 0);
  }

  synced(reply, received = Date.now()) {
    // a projector still catching up answers from an older version: what was shown stands
    if (reply.version < this.version) {
      this.asked = false; // the next notification asks again
      return;
    }
    this.version = reply.version;
    this.view = reply.view;
    this.actions = reply.actions || [];
    if (typeof reply.turn_due_in_ms === "number" && this.actions.length) {
      // the server's count of the turn (a reload, a new tab, a resync): counted from when
      // this page saw the prompt, a reloaded page would show the full time again. A reply
      // without it leaves the page's own count
      this.actionsAt = received;
      deadlines.set(`turn-${received}`, received + reply.turn_due_in_ms);
    }
    const type = this.summary?.game_type ?? reply.view?.game_type;
    for (const [key, due] of syncedClocks(type, reply, received)) deadlines.set(key, due);
    if (reply.view?.status === "finished") this.outcome = reply.view.outcome;
    if (this.summary && reply.view?.status) this.summary = { ...this.summary, status: reply.view.status };
    this.forgetIfOver();
    this.render();
    this.automatic();
  }

  /** A finished (or aborted) game's seat is stored no more: its keys guard nothing now,
   * and a kept seat would fill this tab's storage game by game. The seat stays in memory to
   * acknowledge a resend of what came before the end. */
  forgetIfOver() {
    if (this.seat && !this.seat.forgotten && this.summary?.status === "finished") this.seat.forget();
  }

  describe(message) {
    switch (message.type) {
      case "GameStarted":
        return `The game starts with ${message.seats.map((p) => label(p, message.seats)).join(", ")}.`;
      case "GameOver":
        return "Game over.";
      case "PlayerAway":
        return `${label(message.player)} is away; the house plays that seat.`;
      case "PlayerBack":
        return `${label(message.player)} is back.`;
      default: {
        // a game's describe may say nothing (null): the page itself shows it (your move)
        const rules = gameOf(this.summary?.game_type);
        return rules ? rules.describe(message, this.ctx()) : words(message.type || "update");
      }
    }
  }

  ctx() {
    return {
      me: this.spectator ? null : state.player.player,
      view: this.view,
      seats: this.summary?.seats || [],
      label: (player) => label(player, this.summary?.seats || []),
      act: (action) => this.act(action),
      sent: this.sent, // this player's last move, while nothing has followed it
      // a notification the last view cannot take: ask for the player's whole view again
      resync: () => this.feed && !this.feed.syncing && this.feed.resync(),
      seat: this.spectator ? null : this.seat,
      refresh: () => this.render(),
      countdown,
      seatChip: (player, { detail = "", active = false } = {}) =>
        el(
          "div",
          {
            class: `chip${active ? " active" : ""}${player === state.player.player && !this.spectator ? " me" : ""}${(this.view?.away || []).includes(player) ? " away" : ""}`,
          },
          el("span", { class: "who", title: player }, label(player)),
          detail ? el("span", { class: "detail" }, detail) : null,
          (this.view?.away || []).includes(player) ? el("span", { class: "detail" }, "away") : null,
        ),
    };
  }

  async act(action) {
    if (this.busy || this.spectator) return;
    this.busy = true;
    this.render();
    const shown = this.version;
    try {
      // a Macaua move is built and signed when it is sent, on the state shown last
      await state.player.command(this.game, typeof action === "function" ? action() : action);
      // used; the next notification says what comes next (unless it came before the reply)
      if (this.version === shown) {
        this.actions = [];
        // a move that waits for the others' (take5's cards are shown together): the page
        // marks it until the next notification
        this.sent = typeof action === "function" ? null : action;
      }
    } catch (exc) {
      // a Macaua move overtaken by another's (in the audit anyone moves) is no one's error
      if (!OVERTAKEN.has(exc.code)) toast(explain(exc));
    } finally {
      this.busy = false;
      this.render();
      // a move of the page's own that was overtaken (another's audit came first) is made
      // again on the state that overtook it
      this.automatic();
    }
  }

  render() {
    if (this.stopped) return;
    const s = this.summary || {};
    this.header.replaceChildren(
      el("a", { href: "#/", class: "back" }, "← Lobby"),
      el("h2", {}, `${s.game_type ? gameName(s.game_type) : "Table"}${this.spectator ? " — watching" : ""}`),
      el("small", { class: "table-id" }, `${this.game} · ${words(s.status || "")}`),
    );
    this.turn.replaceChildren(...this.turnBanner().filter(Boolean));
    if (s.status === "lobby") {
      this.board.replaceChildren(this.lobbyBoard());
      return;
    }
    const rules = gameOf(s.game_type);
    const parts = [];
    if (this.outcome) parts.push(this.ranking());
    if (this.orphan) {
      // (a Macaua seat) nothing to show or do here: the moves need the keys of the other tab
      parts.push(el("p", { class: "error" }, "This seat's keys are in the browser tab that took it, not in this one."));
    } else if (!this.view) {
      parts.push(el("p", { class: "waiting" }, this.spectator ? "Waiting for the next move to show the table…" : "Catching up…"));
    } else if (rules) {
      parts.push(rules.render(this.view, this.busy ? [] : this.actions, this.ctx()));
    } else {
      parts.push(el("pre", {}, JSON.stringify(this.view.state, null, 1)));
    }
    this.board.replaceChildren(...parts);
  }

  turnBanner() {
    if (this.outcome) return [el("strong", { class: "game-over" }, "Game over")];
    if (this.spectator) return [el("span", {}, "You are watching: only public information is shown.")];
    if (this.summary?.status === "lobby") return [el("span", {}, "Waiting for players…")];
    if (this.orphan) return [el("span", { class: "orphan" }, "This seat's keys are in another browser tab: the table waits for that tab's moves.")];
    if (this.actions.length && !this.busy) {
      const seconds = this.view?.options?.turn_timeout ?? this.view?.config?.turn_timeout;
      return [
        el("strong", { class: "your-turn" }, "Your move!"),
        seconds ? el("span", {}, " Before the house plays for you: ", countdown(seconds, `turn-${this.actionsAt}`)) : null,
      ];
    }
    return [el("span", { class: "waiting-turn" }, this.busy ? "Sending…" : "Waiting for the others…")];
  }

  lobbyBoard() {
    const s = this.summary;
    const me = state.player.player;
    const free = s.max_seats - s.seats.length;
    return el(
      "div",
      { class: "lobby-board" },
      el("p", {}, `Seats: ${s.seats.length} of ${s.max_seats}. The game starts when every seat is taken${s.creator === me ? ", or when you start it" : ""}.`),
      el("ul", {}, ...s.seats.map((p) => el("li", {}, nameNode(p, s.seats)))),
      free > 0 ? this.addBot() : null,
      s.creator === me
        ? el(
            "button",
            {
              class: "primary start",
              onclick: async () => {
                try {
                  await state.player.lobby("start", { game: this.game });
                  await this.refreshSummary();
                } catch (exc) {
                  toast(`Could not start: ${explain(exc)}`);
                }
              },
            },
            "Start now",
          )
        : null,
    );
  }

  /** "Add a bot" of the kind chosen beside it: the game's own kinds, its heuristic first. */
  addBot() {
    const kinds = catalogOf(this.summary.game_type)?.bots ?? ["heuristic"];
    // kept on the page: the board is drawn again at every look at the table
    if (!kinds.includes(this.botKind)) this.botKind = firstBot(kinds);
    const kind = el("select", { class: "add-bot-kind" }, ...kinds.map((k) => el("option", { value: k, selected: k === this.botKind }, `${k} bot`)));
    kind.addEventListener("change", () => (this.botKind = kind.value));
    const add = async () => {
      try {
        await addBots(this.game, 1, kind.value);
        await this.refreshSummary();
      } catch (exc) {
        toast(`Could not add a bot: ${explain(exc)}`);
      }
    };
    return el("span", { class: "add-bot-row" }, kind, el("button", { class: "add-bot", onclick: add }, "Add a bot"));
  }

  ranking() {
    const o = this.outcome || {};
    const scores = o.scores || {};
    return el(
      "div",
      { class: "ranking" },
      el("h3", {}, "Final ranking"),
      el(
        "ol",
        {},
        ...(o.ranking || []).map((group) =>
          el("li", {}, ...group.flatMap((p, i) => [i ? " = " : null, nameNode(p), ` — ${scores[p] ?? "?"}`])),
        ),
      ),
      o.details?.reason ? el("p", {}, words(o.details.reason)) : null,
      ...this.outcomeNote(o),
    );
  }

  /** The game's own words on why it ended so (a Macaua halt names who and whose fault). */
  outcomeNote(outcome) {
    const note = gameOf(this.summary?.game_type)?.outcomeNote?.(outcome, this.ctx());
    return note ? [el("p", { class: "outcome-note" }, note)] : [];
  }
}

start().catch((exc) => {
  app.replaceChildren(el("p", { class: "error" }, `cardroom could not start: ${explain(exc)}`));
});
