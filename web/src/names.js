// How the page names a seat. The server tells a player nothing about another seat but its
// id (no name, and not whether a bot plays it), so the page says "you" for its own seat, a
// bot it seated itself by its kind (the bots reply named them to this browser), and any
// other seat by a short label made from its id: the same in every browser, table and
// reload. The id itself stays in each name's title.

// a guest's id, as the lobby's register makes it: 64 random bits, unreadable as a name
const GUEST_ID = /^p[0-9a-f]{16}$/;
const READABLE_ID = /^[A-Za-z][A-Za-z0-9_-]{0,15}$/;

const COLOURS = [
  "Amber", "Azure", "Beige", "Black", "Blue", "Bronze", "Brown", "Coral",
  "Crimson", "Cyan", "Gold", "Green", "Grey", "Indigo", "Ivory", "Jade",
  "Lemon", "Lilac", "Lime", "Maroon", "Mint", "Navy", "Ochre", "Olive",
  "Orange", "Pearl", "Pink", "Plum", "Purple", "Red", "Rose", "Ruby",
  "Rust", "Sage", "Sand", "Scarlet", "Silver", "Slate", "Steel", "Tan",
  "Teal", "Violet", "White", "Yellow",
];
const ANIMALS = [
  "Badger", "Bear", "Beaver", "Bison", "Cat", "Crane", "Crow", "Deer",
  "Dolphin", "Eagle", "Falcon", "Ferret", "Finch", "Fox", "Frog", "Gecko",
  "Goat", "Goose", "Hare", "Hawk", "Heron", "Horse", "Ibis", "Koala",
  "Lark", "Lemur", "Lion", "Lynx", "Mole", "Moose", "Newt", "Otter",
  "Owl", "Panda", "Puffin", "Quail", "Raven", "Robin", "Seal", "Shrew",
  "Stoat", "Swan", "Tiger", "Toad", "Trout", "Viper", "Whale", "Wolf",
];

/** FNV-1a over the id's characters: a fixed spread, the same in every browser. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The short label of a seat the page knows nothing more of than its id. */
export function idLabel(player) {
  if (!GUEST_ID.test(player)) {
    // an id a program chose (the SDK takes any): it reads as a name already
    return READABLE_ID.test(player) ? player : `player ${player.slice(0, 8)}…`;
  }
  const h = hash(player);
  return `${COLOURS[h % COLOURS.length]} ${ANIMALS[Math.floor(h / COLOURS.length) % ANIMALS.length]}`;
}

/** The label of a bot this browser seated: its kind, numbered at its table when it seated
 * more than one of that kind ("heuristic bot", "heuristic bot 2"). Names stored by earlier
 * pages (a plain string) are shown as they are. */
export function botLabel(entry) {
  if (typeof entry === "string") return entry;
  return `${entry.kind} bot${entry.n > 1 ? ` ${entry.n}` : ""}`;
}

/** ``known`` (player -> entry) with ``players`` added as bots of ``kind`` at ``game``,
 * each numbered after those of that kind already there. */
export function withBots(known, players, kind, game) {
  const out = { ...known };
  let n = Object.values(out).filter((e) => typeof e === "object" && e?.game === game && e.kind === kind).length;
  for (const p of players) out[p] = { kind, game, n: ++n };
  return out;
}

/** The name the page shows for ``player``: ``me`` is ``myName`` (you), a bot of ``bots`` by
 * its kind, anyone else by ``idLabel``; ``seats`` (the table's) marks two seats whose labels
 * happen to be alike with the start of their ids, so no two seats at a table read alike. */
export function seatName(player, { me = null, myName = null, bots = {}, seats = [] } = {}) {
  if (!player) return "?";
  if (player === me) return myName ? `${myName} (you)` : "you";
  if (bots[player]) return botLabel(bots[player]);
  const own = idLabel(player);
  const alike = seats.filter((p) => p !== player && p !== me && !bots[p] && idLabel(p) === own);
  return alike.length ? `${own} (…${player.slice(-6)})` : own;
}
