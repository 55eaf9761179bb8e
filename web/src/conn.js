// One player's connection to cardroom, as the Python SDK (libs/client) makes it:
// NATS over WebSocket with the player's own token, requests on the player's own subjects,
// notifications handled one at a time in `seq` order and acknowledged after they are shown,
// a sync whenever a gap appears or the connection comes back.
import { connect, tokenAuthenticator } from "nats.ws";

const enc = new TextEncoder();
const dec = new TextDecoder();

// Refusals that change nothing and may pass when the same command is sent again shortly
// (the same list as the SDK's RETRY_LATER).
const RETRY_LATER = new Set(["awaiting_acks", "conflict", "unavailable", "rate_limited"]);
const TRANSIENT = new Set(["unavailable", "rate_limited", "internal"]);

export class CardroomError extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function randomToken(bytes = 18) {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function wsUrl(config) {
  if (config.nats_ws) return config.nats_ws;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/nats`; // the web edge's bridge to NATS
}

function identityKey(root) {
  return `cardroom.identity.${root}`;
}

export function loadIdentity(root) {
  try {
    const raw = JSON.parse(localStorage.getItem(identityKey(root)) || "null");
    return raw && typeof raw.player === "string" ? raw : null;
  } catch {
    return null;
  }
}

function saveIdentity(root, identity) {
  localStorage.setItem(identityKey(root), JSON.stringify(identity));
}

function decodeReply(msg) {
  const reply = JSON.parse(dec.decode(msg.data));
  if (!reply.ok) {
    const err = reply.error || {};
    throw new CardroomError(String(err.code || "unknown"), String(err.message || ""));
  }
  return reply;
}

async function natsRequest(nc, subject, body, timeout) {
  try {
    return decodeReply(await nc.request(subject, enc.encode(JSON.stringify(body)), { timeout }));
  } catch (exc) {
    if (exc instanceof CardroomError) throw exc;
    const text = String(exc && (exc.code || exc.message || exc));
    if (text.includes("503") || text.toLowerCase().includes("no responders")) {
      throw new CardroomError("unavailable", "nobody answers: is cardroom running?");
    }
    if (text.toLowerCase().includes("timeout")) {
      throw new CardroomError("unavailable", "no answer in time");
    }
    throw new CardroomError("unavailable", text);
  }
}

/** Ask the lobby, as a guest, for a new player id and its token. */
async function register(config) {
  const nonce = randomToken();
  const guest = await connect({
    servers: wsUrl(config),
    user: "guest",
    pass: nonce,
    inboxPrefix: `_GUEST_${config.root}.${nonce}`,
    maxReconnectAttempts: 3,
  });
  try {
    return await natsRequest(guest, `${config.root}.lobby.register.${nonce}`, {}, 10000);
  } finally {
    await guest.close();
  }
}

export class Player {
  constructor(config, nc, identity) {
    this.config = config;
    this.root = config.root;
    this.nc = nc;
    this.identity = identity;
    this.player = identity.player;
    this.feeds = new Map();
    this.onStatus = () => {};
    this.timeout = 10000;
  }

  /** Connect as the player this browser already is, or become a new one. */
  static async open(config, name) {
    let identity = loadIdentity(config.root);
    const fresh = !identity || !identity.token || identity.expires * 1000 < Date.now() + 60000;
    if (fresh) {
      const granted = await register(config);
      identity = { player: granted.player, token: granted.token, expires: granted.expires };
    }
    if (name) identity.name = name;
    const held = { token: identity.token };
    const open = (who) =>
      connect({
        servers: wsUrl(config),
        // read at every (re)connect: a renewed token is used from the next one on
        authenticator: tokenAuthenticator(() => held.token),
        name: `cardroom-web-${who.player}`,
        inboxPrefix: `_INBOX_${config.root}.${who.player}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        pingInterval: 10000,
      });
    let nc;
    try {
      nc = await open(identity);
    } catch (exc) {
      // a token the server no longer takes (its secret changed): become a new player
      if (fresh || !/author/i.test(String(exc?.code || exc?.message || exc))) throw exc;
      const granted = await register(config);
      identity = { ...identity, player: granted.player, token: granted.token, expires: granted.expires };
      held.token = identity.token;
      nc = await open(identity);
    }
    saveIdentity(config.root, identity);
    const player = new Player(config, nc, identity);
    player.held = held;
    player._watchStatus();
    player.sub = nc.subscribe(`${config.root}.player.${identity.player}.>`, {
      callback: (err, msg) => !err && player._onMessage(msg),
    });
    // renew well before expiry, so that a reconnect (or the server, at expiry) finds a valid one
    const renewSoon = () => {
      if (player.identity.expires * 1000 < Date.now() + 6 * 3600 * 1000) player.renew().catch(() => {});
    };
    renewSoon();
    setInterval(renewSoon, 15 * 60 * 1000);
    return player;
  }

  get name() {
    return this.identity.name || this.player;
  }

  async renew() {
    const reply = await this.request(`${this.root}.lobby.renew.${this.player}`, {
      token: this.identity.token,
    });
    this.identity = { ...this.identity, token: reply.token, expires: reply.expires };
    this.held.token = reply.token;
    saveIdentity(this.root, this.identity);
  }

  async _watchStatus() {
    for await (const status of this.nc.status()) {
      if (status.type === "disconnect") this.onStatus("offline");
      if (status.type === "reconnect") {
        this.onStatus("online");
        for (const feed of this.feeds.values()) feed.resync(); // replay what was missed
      }
    }
  }

  request(subject, body) {
    return natsRequest(this.nc, subject, body, this.timeout);
  }

  lobby(verb, body = {}, timeout = this.timeout) {
    return natsRequest(this.nc, `${this.root}.lobby.${verb}.${this.player}`, body, timeout);
  }

  /** Send one command, again with the same id while the refusal only says "not now". */
  async command(game, command, retryFor = 8000) {
    const body = { ...command, id: `w${randomToken(9)}`.replace(/[^A-Za-z0-9_-]/g, "x") };
    const giveUp = Date.now() + retryFor;
    let delay = 20;
    for (;;) {
      try {
        return await this.request(`${this.root}.cmd.${game}.${this.player}`, body);
      } catch (exc) {
        if (!RETRY_LATER.has(exc.code) || Date.now() >= giveUp) throw exc;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  }

  /** Receive `game`'s notifications: `show(note)` for each, in order, then the ack.
   * Without handlers they wait (unshown, unacknowledged) until a page gives some. */
  follow(game, handlers = null) {
    let feed = this.feeds.get(game);
    if (!feed) {
      feed = new Feed(this, game, handlers);
      this.feeds.set(game, feed);
    } else if (handlers) {
      feed.handlers = handlers;
      if (!feed.running) feed._run();
    }
    return feed;
  }

  unfollow(game) {
    this.feeds.delete(game);
  }

  /** A spectator's view of `game`: every public update, newest wins. */
  watch(game, onView) {
    return this.nc.subscribe(`${this.root}.public.${game}`, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const update = JSON.parse(dec.decode(msg.data));
          if (update && update.view) onView(update);
        } catch {
          // a malformed update is not shown
        }
      },
    });
  }

  _onMessage(msg) {
    let note;
    try {
      note = JSON.parse(dec.decode(msg.data));
    } catch {
      return;
    }
    if (!note || note.player !== this.player || typeof note.seq !== "number") return;
    const feed = this.feeds.get(note.game);
    if (feed) feed.push(note);
  }

  close() {
    return this.nc.close();
  }
}

/** One game's ordered notifications for this player (the SDK's _Feed). */
class Feed {
  constructor(player, game, handlers) {
    this.player = player;
    this.game = game;
    this.handlers = handlers;
    this.lastSeq = 0;
    this.held = new Map(); // notifications ahead of a gap
    this.queue = [];
    this.running = false;
    this.syncing = false;
  }

  push(item) {
    this.queue.push(item);
    if (!this.running) this._run();
  }

  async _run() {
    if (!this.handlers) return; // nothing may be acknowledged before it is shown
    this.running = true;
    try {
      while (this.queue.length && this.player.feeds.get(this.game) === this) {
        const item = this.queue.shift();
        if (item.syncEnd !== undefined) {
          this.syncing = false;
          this.lastSeq = Math.max(this.lastSeq, item.syncEnd);
          if (item.reply) this.handlers.synced?.(item.reply, item.received);
          await this._drainHeld();
          continue;
        }
        const note = item;
        if (note.seq <= this.lastSeq) {
          if (note.ack) {
            // a resend: our ack may have been lost
            const fields = this._fields(note);
            if (fields) this._ack(note, fields);
          }
          continue;
        }
        if (note.seq > this.lastSeq + 1) {
          this.held.set(note.seq, note);
          if (!this.syncing) this.resync();
          continue;
        }
        await this._process(note);
        await this._drainHeld();
      }
    } finally {
      this.running = false;
    }
  }

  async _drainHeld() {
    for (const seq of [...this.held.keys()].sort((a, b) => a - b)) {
      if (seq <= this.lastSeq) this.held.delete(seq);
      else if (seq === this.lastSeq + 1) {
        const note = this.held.get(seq);
        this.held.delete(seq);
        await this._process(note);
      }
    }
    if (this.held.size && !this.syncing) this.resync();
  }

  /** What the ack of ``note`` carries besides its version: for a transition to check and
   * sign (Macaua's), the page's verdict (a signature or a rejection), or null when it has
   * none (no verifier, or one that cannot check it): then nothing is acknowledged. */
  _fields(note) {
    if (note.message?.transition === undefined) return {};
    return this.handlers.verify ? this.handlers.verify(note) : null;
  }

  async _process(note) {
    let fields;
    try {
      fields = this._fields(note);
      await this.handlers.show(note);
    } catch (exc) {
      console.error("showing a notification failed; not acknowledged", exc);
      return;
    }
    this.lastSeq = note.seq;
    if (note.ack && fields) await this._ack(note, fields);
  }

  async _ack(note, fields = {}) {
    let delay = 50;
    for (let i = 0; i < 20; i++) {
      try {
        await this.player.request(`${this.player.root}.ack.${this.game}.${this.player.player}`, {
          type: "ack",
          version: note.version,
          ...fields,
        });
        return;
      } catch (exc) {
        if (!TRANSIENT.has(exc.code)) return;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** Ask for the view and every unacknowledged notification; they are shown in order. */
  async sync() {
    const reply = await this.player.request(
      `${this.player.root}.sync.${this.game}.${this.player.player}`,
      { type: "sync" },
    );
    // when it came: a clock the reply tells (turn_due_in_ms) runs from then, not from when
    // the notifications listed before it have been shown
    const received = Date.now();
    for (const note of reply.notifications || []) this.push(note);
    this.push({ syncEnd: reply.last_seq || 0, reply, received });
    return reply;
  }

  async resync() {
    this.syncing = true;
    let delay = 50;
    for (;;) {
      try {
        await this.sync();
        return;
      } catch (exc) {
        if (!TRANSIENT.has(exc.code)) {
          this.syncing = false;
          this.handlers.error?.(exc);
          return;
        }
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 1000);
    }
  }
}
