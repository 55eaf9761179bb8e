// What the page keeps in localStorage for convenience (each table's log, the names it gave
// its bots). A write here must never throw: the log is written while a notification is
// shown, and a throw there leaves it unacknowledged (the player is then marked away).
const LOG_PREFIX = "cardroom.log.";
const LOG_ORDER = "cardroom.logs"; // the logs' keys, least recently opened first
export const LOGS_KEPT = 20; // the logs of the most recent games; older ones are removed

function readOrder() {
  try {
    const order = JSON.parse(localStorage.getItem(LOG_ORDER) || "[]");
    return Array.isArray(order) ? order : [];
  } catch {
    return [];
  }
}

/** Every stored log's key, oldest first (logs stored before the order was kept come first). */
function logKeys() {
  const present = new Set(Object.keys(localStorage).filter((k) => k.startsWith(LOG_PREFIX)));
  const ordered = readOrder().filter((k) => present.has(k));
  const listed = new Set(ordered);
  return [...[...present].filter((k) => !listed.has(k)), ...ordered];
}

function drop(keys) {
  for (const key of keys) localStorage.removeItem(key);
}

/** Store `value` under `key`, or go on without it. When the storage is full, the oldest half
 * of the logs (never `key` itself) is removed and the write tried once more. */
export function storeQuietly(key, value) {
  try {
    localStorage.setItem(key, value);
    return true;
  } catch {
    // full (or unavailable): make room below
  }
  try {
    const others = logKeys().filter((k) => k !== key);
    if (!others.length) return false;
    drop(others.slice(0, Math.ceil(others.length / 2)));
    localStorage.setItem(key, value);
    return true;
  } catch (exc) {
    console.warn(`${key} is not kept: the browser's storage is full`, exc);
    return false;
  }
}

/** `key`'s log becomes the most recent; logs beyond the last LOGS_KEPT are removed. */
export function openLog(key) {
  try {
    const order = [...logKeys().filter((k) => k !== key), key];
    drop(order.splice(0, Math.max(0, order.length - LOGS_KEPT)));
    storeQuietly(LOG_ORDER, JSON.stringify(order));
  } catch (exc) {
    console.warn("the stored logs could not be tidied", exc);
  }
}
