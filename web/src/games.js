// What each game's page shows. Everything comes from the player's notifications and views
// (or the spectators' public view): a renderer draws a view, `patch` folds a notification's
// own fields into the last view shown (so the table moves between views), `describe` turns
// a notification into a line of the log. Nothing here knows a rule the server did not say.
import { el } from "./dom.js";

const words = (type) =>
  String(type)
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase());

const clone = (value) => (value == null ? value : JSON.parse(JSON.stringify(value)));

/** The player's hand: a card that a legal action plays is a button that plays it. */
function yourHand(cards, ctx, actionFor, draw, title, click = (card, action) => () => ctx.act(action)) {
  if (!cards) return null;
  return el(
    "div",
    { class: "hand" },
    el("h3", {}, "Your hand"),
    el(
      "div",
      { class: "cards" },
      ...cards.map((card) => {
        const action = actionFor(card);
        if (!action) return draw(card);
        const button = { class: "action card-button", title: title(card, action), onclick: click(card, action) };
        return el("button", button, draw(card));
      }),
    ),
  );
}

// -- take5 ----------------------------------------------------------------------------------
function bullClass(bull) {
  return bull >= 7 ? "b7" : bull >= 5 ? "b5" : bull >= 3 ? "b3" : bull >= 2 ? "b2" : "b1";
}

function take5Card(card, extra = {}) {
  return el(
    "div",
    { class: `card t5 ${bullClass(card.bull)}`, title: `${card.face}: ${card.bull} bull(s)`, ...extra },
    el("span", { class: "face" }, String(card.face)),
    el("span", { class: "bulls" }, "▲".repeat(Math.min(card.bull, 7))),
  );
}

const cardText = (card) => `${card.face}${card.bull > 1 ? ` (${card.bull} bulls)` : ""}`;
// "1 card", "2 cards"
const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
// "5", "5 and 7", "5, 6 and 7"
const listed = (items) => (items.length > 1 ? `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}` : `${items[0] ?? ""}`);

const take5 = {
  // seat index -> player id, from the state's `ids`
  seatOf(state, index) {
    return Object.entries(state?.ids || {}).find(([, i]) => i === index)?.[0];
  },
  patch(view, message) {
    const state = view?.state;
    if (!state) return view;
    if ((message.type === "play_request" || message.type === "choose_request") && message.data) {
      state.board = message.data;
    }
    if (message.type === "deal" && Array.isArray(message.data)) state.hand = message.data;
    return view;
  },
  describe(message, ctx) {
    const who = (index) => ctx.label(take5.seatOf(ctx.view?.state, index)) || `seat ${index + 1}`;
    switch (message.type) {
      case "deal":
        return `You are dealt ${message.data.length} cards: ${message.data.map(cardText).join(", ")}.`;
      case "play_request":
        return "Your turn: pick a card to play.";
      case "choose_request":
        return "Your card is lower than every row: choose a row to take.";
      case "played":
        return `Cards played: ${message.data.map((p) => `${who(p.id)} ${cardText(p.card)}`).join(", ")}.`;
      case "taken":
        return `${who(message.data.id)} takes a row of ${count(message.data.stack.reduce((n, c) => n + c.bull, 0), "bull")}: ${message.data.stack.map(cardText).join(", ")}.`;
      case "game_over":
        return `Final scores: ${message.data.map((s) => `${who(s.player)} ${s.score}`).join(", ")}.`;
      default:
        return null;
    }
  },
  // a spectator's log: what changed between two public views
  spectate(before, after, ctx) {
    const b = before?.state || {};
    const a = after?.state || {};
    const who = (index) => ctx.label(take5.seatOf(a, index));
    const lines = [];
    const played = (a.played || []).filter((p) => p.card);
    if (played.length && JSON.stringify(played) !== JSON.stringify(b.played)) {
      lines.push(`Cards played: ${played.map((p) => `${who(p.id)} ${cardText(p.card)}`).join(", ")}.`);
    }
    for (const s of a.scores || []) {
      const old = (b.scores || []).find((x) => x.player === s.player);
      if (old && s.score > old.score) lines.push(`${who(s.player)} takes ${s.score - old.score} bulls (${s.score} in all).`);
    }
    return lines;
  },
  render(view, actions, ctx) {
    const state = view?.state || {};
    const rows = Object.entries(state.board || {});
    const chooseable = new Map(
      actions.filter((a) => a.type === "choose_response").map((a) => [a.data, a]),
    );
    const playable = new Map(
      actions.filter((a) => a.type === "play_response").map((a) => [`${a.data.face}`, a]),
    );
    const scores = new Map((state.scores || []).map((s) => [s.player, s.score]));
    const waiting = new Set(state.waiting_for || []);
    const sent = ctx.sent?.type === "play_response" ? ctx.sent.data?.face : (state.my_play?.face ?? null);
    const seats = Object.entries(state.ids || {}).sort((a, b) => a[1] - b[1]);
    return el(
      "div",
      { class: "take5" },
      el(
        "div",
        { class: "players" },
        ...seats.map(([player, index]) =>
          ctx.seatChip(player, {
            detail: `${scores.get(index) ?? 0} bulls`,
            active: waiting.has(index) || state.chooser === index,
          }),
        ),
      ),
      el(
        "p",
        { class: "status" },
        `Round ${state.round ?? "?"}, turn ${state.turn ?? "?"} of ${state.turn_count ?? "?"}. ` +
          `A row takes ${state.stack_size ?? 5} cards; the game ends at ${state.win_score ?? 66} bulls.`,
      ),
      el(
        "div",
        { class: "rows" },
        ...rows.map(([name, cards]) => {
          const action = chooseable.get(name);
          return el(
            "div",
            {
              class: `row${action ? " pickable" : ""}`,
              "data-row": name,
              onclick: action ? () => ctx.act(action) : null,
            },
            el("span", { class: "row-name" }, name),
            ...cards.map((c) => take5Card(c)),
            action ? el("button", { class: "action", onclick: () => ctx.act(action) }, `Take row ${name}`) : null,
          );
        }),
      ),
      (state.played || []).length
        ? el(
            "div",
            { class: "played" },
            el("span", {}, "On the table: "),
            ...(state.played || []).map((p) => take5Card(p.card ?? p)),
          )
        : null,
      sent != null ? el("p", { class: "status sent" }, `You played ${sent}: waiting for the others.`) : null,
      yourHand(
        state.hand,
        ctx,
        (card) => playable.get(`${card.face}`),
        // the card this player played stays in its hand until every seat has played
        (card) => take5Card(card, card.face === sent ? { class: `card t5 ${bullClass(card.bull)} sent` } : {}),
        (card) => `Play ${card.face}`,
      ),
    );
  },
};

// -- the 66 game (both protocol generations) -----------------------------------------------
function ssCard(value, { known = true, extra = {} } = {}) {
  const shown = value == null ? "?" : String(value);
  return el(
    "div",
    { class: `card ss${value == null ? " back" : ""}${known ? "" : " dim"}`, ...extra },
    el("span", { class: "face" }, shown),
  );
}

function ssActionLabel(action, ctx) {
  const base = words(action.type);
  const players = ctx.view?.state?.players || [];
  // the powers on another's card name that player (by seat: v2 `playerIndex`, v1
  // `anotherPlayerIndex`) and the card, or two buttons of a 3-seat table would read alike
  const theirs = (seat, card) => `${ctx.label(players[seat])}'s card ${card + 1}`;
  if (action.anotherPlayerIndex != null && action.anotherPlayerCardIndex != null) {
    return `${base}: your card ${action.cardIndex + 1} for ${theirs(action.anotherPlayerIndex, action.anotherPlayerCardIndex)}`;
  }
  const target = action.anotherPlayerIndex ?? (action.cardIndex != null ? action.playerIndex : null);
  if (target != null && action.cardIndex != null) return `${base}: ${theirs(target, action.cardIndex)}`;
  if (action.cardIndex != null) return `${base}: card ${action.cardIndex + 1}`;
  if (action.cardIndexes) return `${base}: cards ${action.cardIndexes.map((i) => i + 1).join(" & ")}`;
  if (action.targetPlayerIndex != null) return `${base}: ${ctx.label(players[action.targetPlayerIndex])}`;
  return base;
}

// v1's messages to the player who moved name no seat (it is the reader's own)
const SS_REPLACED = {
  // type: [the mover's seat is in the message, the new card comes from the deck, a claim]
  ReplacedCardFromDeck: [false, true, false],
  ReplacedCardByDiscarded: [false, false, false],
  CardReplacedFromDeck: [true, true, false],
  CardReplacedByDiscarded: [true, false, false],
  ReplacedCardsFromDeck: [false, true, true],
  ReplacedCardsByDiscarded: [false, false, true],
  CardsReplacedFromDeck: [true, true, true],
  CardsReplacedByDiscarded: [true, false, true],
};

/** The hands after `player` put `value` at the lowest of `indexes` (the others leave the
 * hand, later cards shift down), as the server's fold does. */
function ssReplace(state, player, indexes, value) {
  const hand = state.hands?.[player];
  if (!hand || !indexes.length || indexes.some((i) => i < 0 || i >= hand.length)) return false;
  const first = Math.min(...indexes);
  hand[first] = value;
  for (const i of [...indexes].sort((a, b) => b - a)) if (i !== first) hand.splice(i, 1);
  state.handSizes = state.hands.map((h) => h.length);
  return true;
}

/** Swap two cards between hands: what each seat knows of a card travels with it. */
function ssExchange(state, p, i, q, j) {
  const a = state.hands?.[p];
  const b = state.hands?.[q];
  if (!a || !b || i >= a.length || j >= b.length) return false;
  [a[i], b[j]] = [b[j], a[i]];
  return true;
}

function ssSee(state, player, indexes, values) {
  const hand = state.hands?.[player];
  if (!hand || indexes.some((i) => i >= hand.length)) return false;
  indexes.forEach((i, k) => (hand[i] = values[k]));
  return true;
}

const sixtysix = {
  /** Fold a notification into the hands and the board. A notification carries the whole view
   * only when the player must act, so every move that changes a hand is applied here; a
   * message that does not fit the hands shown (a view out of step) asks for the view again. */
  patch(view, message, ctx) {
    const state = view?.state;
    if (!state) return view;
    const me = state.playerIndex;
    const copy = (...keys) => keys.forEach((k) => k in message && (state[k] = message[k]));
    const top = state.discardedValue; // the discard before this message: a card taken from it
    let fits = true;
    const v1 = SS_REPLACED[message.type];
    if (v1) {
      const [named, fromDeck, claim] = v1;
      const player = named ? message.playerIndex : me;
      const indexes = message.cardIndexes || [message.cardIndex];
      // the new card: the discard top is public, a deck card is seen by its drawer only,
      // and a claim's card from the deck by nobody
      const value = !fromDeck ? top : player === me && !claim ? state.deckCard : null;
      fits = ssReplace(state, player, indexes, value);
      if (fromDeck && player === me) state.deckCard = null;
      // the deck card of another (or a claim's) leaves the deck only now for this reader
      if (fromDeck && (player !== me || claim) && state.deckSize != null) state.deckSize -= 1;
      copy("discardedValue");
      if (!fits) ctx?.resync?.();
      return view;
    }
    switch (message.type) {
      case "BoardInitialized":
        copy("deckSize", "deckCard", "discardedValue", "handSizes", "stopCounter", "round", "turn");
        state.hands = (message.handSizes || []).map((n) => Array(n).fill(null));
        state.roundScores = null;
        break;
      case "BoardUpdated":
        copy("activePlayerIndex", "deckCard", "stopCounter", "turn", "deckSize", "discardedValue");
        break;
      case "GameState": // v1: a round starts
        copy("deckSize", "discardedValue", "handSizes");
        state.hands = (message.handSizes || []).map((n) => Array(n).fill(null));
        state.roundScores = null;
        state.deckCard = null;
        break;
      case "CardsRevealed":
        for (const shown of message.cards || []) {
          if (!shown.values || !(shown.lookingPlayerIndexes || []).includes(me)) continue;
          fits = ssSee(state, shown.targetPlayerIndex, shown.cardIndexes, shown.values) && fits;
        }
        break;
      case "CardsReplaced": {
        const value = !message.fromDeck ? top : message.playerIndex === me ? state.deckCard : null;
        fits = ssReplace(state, message.playerIndex, message.cardIndexes || [], value);
        if (message.playerIndex === me) state.deckCard = null;
        copy("discardedValue", "deckSize");
        break;
      }
      case "CardExchanged": // v2
      case "CardsExchanged": // v1, to the others
      case "ExchangedCards": // v1, to the player who swapped
        fits = ssExchange(state, message.playerIndex ?? me, message.cardIndex, message.anotherPlayerIndex, message.anotherPlayerCardIndex);
        break;
      case "OwnCard": // v1
        fits = ssSee(state, me, [message.cardIndex], [message.value]);
        break;
      case "AnothersCard": // v1
        fits = ssSee(state, message.anotherPlayerIndex, [message.cardIndex], [message.value]);
        break;
      case "DifferentCardsShown": // v1
        fits = ssSee(state, message.playerIndex, message.cardIndexes, message.values);
        break;
      case "IdenticalCardsShown": // v1
        fits = ssSee(state, message.playerIndex, message.cardIndexes, message.cardIndexes.map(() => message.value));
        break;
      case "FirstTwoCards": // v1
        if (state.hands?.[me]) [state.hands[me][0], state.hands[me][1]] = [message.value1, message.value2];
        break;
      case "NextTurn": // v1
        state.activePlayerIndex = message.playerIndex;
        state.deckCard = null;
        break;
      case "YourTurn": // v1
        state.activePlayerIndex = me;
        break;
      case "TookDeckCard": // v1
        state.deckCard = message.value;
        copy("deckSize");
        break;
      case "DiscardedCard": // v1: the drawn card went to the discard
        state.deckCard = null;
        copy("discardedValue");
        break;
      case "CardDiscarded": // v1: another's drawn card went to the discard
        if (state.deckSize != null) state.deckSize -= 1;
        copy("discardedValue");
        break;
      case "RoundFinished":
        state.roundScores = message.scores;
        copy("totalScores");
        if (message.cards) state.hands = message.cards;
        // v1 does not show the hands: the view does
        else fits = false;
        break;
      case "GameFinished":
        state.roundScores = message.scores;
        copy("totalScores");
        break;
      default:
        if ("discardedValue" in message) state.discardedValue = message.discardedValue;
    }
    if (!fits) ctx?.resync?.();
    return view;
  },
  describe(message, ctx) {
    const state = ctx.view?.state || {};
    const players = state.players || ctx.seats;
    const me = state.playerIndex ?? players.indexOf(ctx.me);
    const mine = (i) => i === me;
    const name = (i) => (players[i] ? ctx.label(players[i]) : `player ${i + 1}`);
    // the seat as a sentence's subject, its owner, or one of a list
    const who = (i) => (mine(i) ? "You" : name(i));
    const whom = (i) => (mine(i) ? "you" : name(i));
    const whose = (i) => (mine(i) ? "your" : `${name(i)}'s`);
    const own = (i) => (mine(i) ? "your" : "their");
    const does = (i, verb) => `${who(i)} ${mine(i) ? verb : `${verb.replace(/(s|sh|ch|x)$/, "$1e")}s`}`;
    const cards = (idx) => `card${idx.length === 1 ? "" : "s"} ${listed(idx.map((i) => i + 1))}`;
    const scores = (list) => list.map((score, i) => `${whom(i)} ${score}`).join(", ");
    const turn = (i) => (mine(i) ? "your turn" : `${name(i)}'s turn`);
    const left = (n) => (n == null ? "" : n === 1 ? " (the last turn of the round)" : ` (${n} turns left in the round)`);
    const dealt = (sizes) => (sizes.every((n) => n === sizes[0]) ? `${count(sizes[0], "card")} each` : `${sizes.join("/")} cards`);
    const pile = (value) => (value == null ? "the discard pile is empty" : `${value} is on the discard pile`);
    const stop = (i) => `${does(i, "call")} stop: everyone else has one more turn.`;
    const replaced = (player, idx, fromDeck, top) =>
      `${does(player, "replace")} ${own(player)} ${cards(idx)} with ${fromDeck ? "a card from the deck" : "the top card of the discard pile"}; ${top == null ? "the discard pile is empty" : `the discard pile now shows ${top}`}.`;
    const swapped = (player, i, other, j) => `${does(player, "swap")} ${own(player)} card ${i + 1} with ${whose(other)} card ${j + 1}.`;
    const v1 = SS_REPLACED[message.type];
    if (v1) {
      const [named] = v1;
      return replaced(named ? message.playerIndex : me, message.cardIndexes || [message.cardIndex], v1[1], message.discardedValue);
    }
    switch (message.type) {
      // -- the second generation
      case "BoardInitialized":
        return `Round ${message.round} is dealt: ${dealt(message.handSizes)}, ${message.deckSize} in the deck; ${pile(message.discardedValue)}.`;
      case "CardsRevealed":
        return (message.cards || []).map((c) => revealed(c)).join(" ");
      case "BoardUpdated":
        return boardUpdated();
      case "CardsReplaced":
        return replaced(message.playerIndex, message.cardIndexes || [], message.fromDeck, message.discardedValue);
      case "CardExchanged":
        return swapped(message.playerIndex, message.cardIndex, message.anotherPlayerIndex, message.anotherPlayerCardIndex);
      case "RoundFinished": {
        const after = message.turnCount != null ? ` after ${count(message.turnCount, "turn")}` : "";
        const next = message.nextPlayerIndex != null ? ` ${does(message.nextPlayerIndex, "start")} the next round.` : "";
        const last = message.isGameFinished ? " That was the last round." : "";
        return `Round over${after}. Points this round: ${scores(message.scores)}. Totals: ${scores(message.totalScores)}.${last}${next}`;
      }
      case "GameFinished":
        return `The game ends after ${count(message.roundCount, "round")}. Points in the last round: ${scores(message.scores)}. Final totals: ${scores(message.totalScores)}.`;
      // -- the first generation (to the player who moved, a message names no seat)
      case "GameState":
        return `A round is dealt: ${dealt(message.handSizes)}, ${message.deckSize} in the deck; ${pile(message.discardedValue)}. You sit at seat ${message.playerIndex + 1}.`;
      case "FirstTwoCards":
        return `You look at your cards 1 and 2: ${message.value1} and ${message.value2}.`;
      case "YourTurn":
        return "Your turn.";
      case "NextTurn":
        return `${turn(message.playerIndex).replace(/^./, (c) => c.toUpperCase())}.`;
      case "TookDeckCard":
        return `You draw ${message.value} from the deck.`;
      case "StopInitiated":
        return stop(message.playerIndex);
      case "InitiatedStop":
        return stop(me);
      case "IdenticalCardsShown":
        return `${does(message.playerIndex, "show")} ${own(message.playerIndex)} ${cards(message.cardIndexes)}: ${message.cardIndexes.length === 2 ? "both" : "all"} ${message.value}.`;
      case "DifferentCardsShown":
        return `${does(message.playerIndex, "show")} ${own(message.playerIndex)} ${cards(message.cardIndexes)}: ${listed(message.values)}, which do not match.`;
      case "ShowedIdenticalCards":
        return `You show your ${cards(message.cardIndexes)}: they match.`;
      case "ShowedDifferentCards":
        return `You show your ${cards(message.cardIndexes)}: they do not match.`;
      case "CardDiscarded":
        return `${does(message.playerIndex, "discard")} the ${message.discardedValue} ${mine(message.playerIndex) ? "you" : "they"} drew.`;
      case "DiscardedCard":
        return `You discard the ${message.discardedValue} you drew.`;
      case "PeekingOwnCard":
        return `You discard the ${message.discardedValue} you drew: you may peek at one of your cards.`;
      case "PeekingAnothersCard":
        return `You discard the ${message.discardedValue} you drew: you may peek at another player's card.`;
      case "ExchangingCards":
        return `You discard the ${message.discardedValue} you drew: you may swap one of your cards with another player's.`;
      case "OwnCardPeeked":
        return `${does(message.playerIndex, "peek")} at ${own(message.playerIndex)} own card ${message.cardIndex + 1}.`;
      case "OwnCard":
        return `You peek at your card ${message.cardIndex + 1}: ${message.value}.`;
      case "AnothersCardPeeked":
        return `${does(message.playerIndex, "peek")} at ${whose(message.anotherPlayerIndex)} card ${message.cardIndex + 1}.`;
      case "AnothersCard":
        return `You peek at ${whose(message.anotherPlayerIndex)} card ${message.cardIndex + 1}: ${message.value}.`;
      case "CardsExchanged":
        return swapped(message.playerIndex, message.cardIndex, message.anotherPlayerIndex, message.anotherPlayerCardIndex);
      case "ExchangedCards":
        return swapped(me, message.cardIndex, message.anotherPlayerIndex, message.anotherPlayerCardIndex);
      default:
        return `${words(message.type || "update")}.`;
    }

    /** One entry of v2's CardsRevealed: who looks at whose cards (the values if this player
     * is one who sees them). */
    function revealed(c) {
      const lookers = c.lookingPlayerIndexes || [];
      const target = c.targetPlayerIndex;
      const idx = c.cardIndexes || [];
      if (c.values) {
        if (mine(target)) return `You look at your ${cards(idx)}: ${listed(c.values)}.`;
        if (lookers.length === 1) return `You peek at ${whose(target)} ${cards(idx)}: ${listed(c.values)}.`;
        return `${does(target, "show")} ${own(target)} ${cards(idx)}: ${listed(c.values)}.`;
      }
      if (lookers.length === 1 && lookers[0] === target) return `${does(target, "look")} at ${own(target)} own ${cards(idx)}.`;
      if (mine(target) && !lookers.includes(me)) return `You show your ${cards(idx)} to ${listed(lookers.map(whom))}.`;
      if (lookers.length === 1) return `${does(lookers[0], "peek")} at ${whose(target)} ${cards(idx)}.`;
      return `${listed(lookers.map(whom)).replace(/^./, (ch) => ch.toUpperCase())} look at ${whose(target)} ${cards(idx)}.`;
    }

    /** v2's BoardUpdated: what changed, told by the fields it carries. */
    function boardUpdated() {
      const active = message.activePlayerIndex ?? state.activePlayerIndex;
      const keys = Object.keys(message).filter((k) => k !== "type");
      if (message.activePlayerIndex != null) return `Turn ${message.turn}: ${turn(message.activePlayerIndex)}${left(message.stopCounter)}.`;
      if (message.deckCard != null) return `You draw ${message.deckCard} from the deck.`;
      if (keys.length === 1 && keys[0] === "stopCounter") return active == null ? "Stop is called: everyone else has one more turn." : stop(active);
      if ("actions" in message && !("discardedValue" in message)) {
        // what this player may do next says what just happened to it
        const next = message.actions || [];
        if (next.includes("StartNextRound")) return "You start the next round when you are ready.";
        if (next.includes("PickAnothersCard")) return "Now pick another player's card to swap yours with.";
        if (next.includes("PickOwnCard")) return `You take the ${state.discardedValue ?? "top card"} from the discard pile: pick the card it replaces.`;
        return null;
      }
      if ("actions" in message) return `You discard the ${message.discardedValue} you drew and may use its power.`;
      if ("discardedValue" in message) {
        if (active == null) return `The discard pile now shows ${message.discardedValue}.`;
        const drew = `the ${message.discardedValue} ${mine(active) ? "you" : "they"} drew`;
        // to the others only: the drawer goes on to use the card's power
        return "deckCard" in message ? `${does(active, "discard")} ${drew}.` : `${does(active, "discard")} ${drew} and ${mine(active) ? "use" : "uses"} its power.`;
      }
      return null;
    }
  },
  spectate(before, after, ctx) {
    const b = before?.state || {};
    const a = after?.state || {};
    const who = (i) => ctx.label((a.players || [])[i]);
    const lines = [];
    if (a.round !== b.round) lines.push(`Round ${a.round} begins.`);
    if (a.activePlayerIndex != null && a.activePlayerIndex !== b.activePlayerIndex) lines.push(`${who(a.activePlayerIndex)} to play.`);
    if (a.discardedValue != null && a.discardedValue !== b.discardedValue) lines.push(`${a.discardedValue} is discarded.`);
    if (a.stopperIndex != null && b.stopperIndex == null) lines.push(`${who(a.stopperIndex)} calls stop: last turns.`);
    if (JSON.stringify(a.totalScores) !== JSON.stringify(b.totalScores) && a.totalScores) {
      lines.push(`Scores: ${a.totalScores.map((s, i) => `${who(i)} ${s}`).join(", ")}.`);
    }
    return lines;
  },
  render(view, actions, ctx) {
    const state = view?.state || {};
    const players = state.players || view?.seats || [];
    const me = state.playerIndex;
    return el(
      "div",
      { class: "sixtysix" },
      el(
        "p",
        { class: "status" },
        `The 66 game (${state.protocol === "v1" ? "first" : "second"} protocol generation), round ${state.round ?? "?"}, turn ${state.turn ?? "?"}. ` +
          (state.stopperIndex != null || state.stopCounter != null ? "Stop was called: last turns. " : "") +
          "Lowest total wins.",
      ),
      el(
        "div",
        { class: "piles" },
        el("div", { class: "pile" }, el("span", {}, `Deck (${state.deckSize ?? "?"})`), ssCard(null)),
        el("div", { class: "pile" }, el("span", {}, "Discard"), state.discardedValue != null ? ssCard(state.discardedValue) : el("div", { class: "card empty" })),
        state.deckCard != null ? el("div", { class: "pile drawn" }, el("span", {}, "You drew"), ssCard(state.deckCard)) : null,
      ),
      el(
        "div",
        { class: "seats" },
        ...players.map((player, i) =>
          el(
            "div",
            { class: `seat${i === state.activePlayerIndex ? " active" : ""}${i === me ? " mine" : ""}` },
            ctx.seatChip(player, {
              detail: `${(state.totalScores || [])[i] ?? 0} pts${state.roundScores ? ` (+${state.roundScores[i]})` : ""}`,
              active: i === state.activePlayerIndex,
            }),
            el(
              "div",
              { class: "cards" },
              ...((state.hands || [])[i] || Array((state.handSizes || [])[i] || 0).fill(null)).map((value, k) => {
                const card = ssCard(value, { extra: { title: `card ${k + 1}` } });
                return el("div", { class: "slot" }, card, el("small", {}, `${k + 1}`));
              }),
            ),
          ),
        ),
      ),
      actions.length
        ? el(
            "div",
            { class: "choices" },
            ...actions.map((a) => el("button", { class: "action", onclick: () => ctx.act(a) }, ssActionLabel(a, ctx))),
          )
        : null,
    );
  },
};

// -- papas ----------------------------------------------------------------------------------
const papasName = (name) => words(name || "card");

function papasCard(card, extra = {}) {
  return el(
    "div",
    { class: `card papas kind-${card.kind}${card.alarm ? " alarm" : ""}`, title: `${papasName(card.name)} (${card.kind}, value ${card.value})`, ...extra },
    el("span", { class: "name" }, papasName(card.name)),
    el("span", { class: "value" }, card.kind === "potato" ? "●" : card.kind === "wildcard" ? "★" : `${card.value}`),
    el("span", { class: "kind" }, card.kind),
    card.alarm ? el("span", { class: "flag", title: "alarm" }, "!") : null,
  );
}

function papasActionLabel(action, ctx, hand) {
  const name = (id) => papasName(hand.get(id)?.name ?? `card ${id}`);
  switch (action.type) {
    case "PlayCard":
      return `Play ${name(action.card)}`;
    case "PlayInterrupt":
      return `Interrupt with ${name(action.card)}`;
    case "PlayThreesome":
      return `Play three: ${action.cards.map(name).join(", ")}`;
    case "SelectTargets":
      return `Target ${action.targets.map((p) => ctx.label(p)).join(", ")}`;
    case "SelectCard":
      return `Pick a hidden card (${action.token.slice(0, 4)})`;
    case "SelectCardName":
      return `Name "${papasName(action.name)}"`;
    case "SkipReaction":
      return "Let it pass";
    case "EndTurn":
      return "End turn (draw)";
    case "DiscardCard": {
      // one button per face: wildcards of one name may have different values
      const card = hand.get(action.card);
      return `Discard ${name(action.card)}${card?.kind === "wildcard" ? ` (${card.value})` : ""}`;
    }
    default:
      return words(action.type);
  }
}

const PAPAS_PUBLIC = ["state", "active", "order", "potatoes", "hand_counts", "deck_count", "discard_count", "reaction", "winner", "named"];

// a seat whose keys the tab's storage could not take plays on, but not past a reload
export const MACAUA_UNSAVED =
  "This tab's storage is full, so your seat's keys are kept in memory only: do not reload or close this tab until the game is over, or your seat is lost.";

// the key of a reaction window's countdown: a sync sets it to the server's count (syncedClocks)
const reactionClock = (reaction) => `papas-${reaction.window}`;

const papas = {
  // the countdowns of a view that run out when the game moves by itself
  clocks: (view) => (view?.state?.reaction?.window !== undefined ? [reactionClock(view.state.reaction)] : []),
  patch(view, message) {
    const state = view?.state;
    if (!state) return view;
    // every papas message carries the table's public fields under the view's own names
    for (const key of PAPAS_PUBLIC) if (key in message) state[key] = message[key];
    if (Array.isArray(message.hand)) state.hand = message.hand;
    return view;
  },
  describe(message, ctx) {
    const who = (p) => ctx.label(p);
    const card = (c) => (c ? papasName(c.name) : "a card");
    switch (message.type) {
      case "GameStart":
        return `The game starts: ${message.hand_size} cards each; first to ${message.threshold} potatoes wins. ${who(message.active)} begins.`;
      case "PlayCard":
        return `${who(message.player)} plays ${card(message.card)}.`;
      case "SelectTargets":
        return `${who(message.player)} targets ${message.targets.map(who).join(", ")}${message.reaction ? ` — ${message.reaction.seconds} s to react` : ""}.`;
      case "NoInterrupt":
        return `Nobody interrupts; ${message.play?.name ? papasName(message.play.name) : "the play"} goes ahead${message.awarded ? ` (+${message.awarded} potatoes)` : ""}.`;
      case "InterruptPlayed":
        return `${who(message.player)} interrupts with ${card(message.card)}!`;
      case "ActionResolved":
        return `${papasName(message.name)} resolved${message.targets?.length ? ` on ${message.targets.map(who).join(", ")}` : ""}.`;
      case "DrawCard":
        return `${who(message.player)} draws ${message.drawn ? message.drawn.map(card).join(", ") : `${message.drawn_count} card(s)`}.`;
      case "EndTurn":
        return `${who(message.player)} ends the turn and draws ${message.drawn_count}.`;
      case "NextTurn":
        return `${who(message.player)}'s turn.`;
      case "SkipReaction":
        return `${who(message.player)} lets it pass.`;
      case "PlayThreesome":
        return `${who(message.player)} plays three ${papasName(message.kind)} for ${message.reward} potatoes${message.reaction ? ` — ${message.reaction.seconds} s to react` : ""}.`;
      case "CardSelection":
        return `${who(message.player)} picks one of ${who(message.target)}'s ${message.count} cards.`;
      case "CardSelected":
        return `${who(message.player)} took a card from ${who(message.target)}.`;
      case "CardNameSelected":
        return `${who(message.player)} names "${papasName(message.name)}" at ${who(message.target)}.`;
      case "EndScore":
        return `${who(message.winner)} wins! Potatoes: ${Object.entries(message.scores).map(([p, s]) => `${who(p)} ${s}`).join(", ")}.`;
      default:
        return `${words(message.type)}${message.player ? ` (${who(message.player)})` : ""}.`;
    }
  },
  spectate(before, after, ctx) {
    const b = before?.state || {};
    const a = after?.state || {};
    const lines = [];
    if (a.play && JSON.stringify(a.play) !== JSON.stringify(b.play)) {
      const cards = (a.play.cards || []).map((c) => papasName(c.name)).join(", ");
      const targets = (a.play.targets || []).map((p) => ctx.label(p)).join(", ");
      lines.push(`${ctx.label(a.play.player)} plays ${cards}${targets ? ` at ${targets}` : ""}.`);
    }
    for (const [p, n] of Object.entries(a.potatoes || {})) {
      const old = (b.potatoes || {})[p];
      if (old != null && n !== old) lines.push(`${ctx.label(p)} now has ${n} potatoes.`);
    }
    if (a.active && a.active !== b.active && a.state === "PlayerTurn") lines.push(`${ctx.label(a.active)}'s turn.`);
    if (a.winner && !b.winner) lines.push(`${ctx.label(a.winner)} wins!`);
    return lines;
  },
  render(view, actions, ctx) {
    const state = view?.state || {};
    const hand = new Map((state.hand || []).map((c) => [c.id, c]));
    const playable = new Map();
    for (const a of actions) if ((a.type === "PlayCard" || a.type === "PlayInterrupt") && !playable.has(a.card)) playable.set(a.card, a);
    const reaction = state.reaction;
    return el(
      "div",
      { class: "papas" },
      el(
        "div",
        { class: "players" },
        ...(state.order || view?.seats || []).map((p) =>
          ctx.seatChip(p, {
            detail: `${state.potatoes?.[p] ?? 0} potatoes · ${state.hand_counts?.[p] == null ? "? cards" : count(state.hand_counts[p], "card")}`,
            active: p === state.active,
          }),
        ),
      ),
      el(
        "p",
        { class: "status" },
        `${words(state.state || "")}. First to ${state.threshold ?? "?"} potatoes wins. Deck ${state.deck_count ?? "?"}, discard ${state.discard_count ?? "?"}.`,
      ),
      state.state === "ReactionPhase" && reaction?.players?.length
        ? el("p", { class: "reaction" }, `Reaction window: ${reaction.players.map((p) => (p === ctx.me ? "you" : ctx.label(p))).join(", ")} may interrupt. `, ctx.countdown(reaction.seconds, reactionClock(reaction)))
        : null,
      state.play
        ? el("div", { class: "played" }, el("span", {}, `${state.play.player === ctx.me ? "You" : ctx.label(state.play.player)} played: `), ...(state.play.cards || []).map((c) => papasCard(c)))
        : null,
      (state.discard || []).length
        ? el("div", { class: "discard" }, el("span", {}, "Discard: "), papasCard(state.discard[state.discard.length - 1]))
        : null,
      yourHand(state.hand, ctx, (c) => playable.get(c.id), papasCard, (c, action) => papasActionLabel(action, ctx, hand)),
      actions.length
        ? el(
            "div",
            { class: "choices" },
            ...actions
              .filter((a) => a.type !== "PlayCard")
              .map((a) => el("button", { class: "action", onclick: () => ctx.act(a) }, papasActionLabel(a, ctx, hand))),
          )
        : null,
    );
  },
};

// -- macaua ---------------------------------------------------------------------------------
// A seat's page draws from its own checked copy of the game (ctx.seat: the keys and the copy
// stay in the page); a spectator's from the public view.
const SUIT_SIGNS = { S: "♠", H: "♥", D: "♦", C: "♣" };

function macauaCard(code, extra = {}) {
  if (!code) return el("div", { class: "card macaua back", ...extra }, "?");
  const joker = code === "BJ" || code === "RJ";
  const suit = joker ? null : code.slice(-1);
  const red = code === "RJ" || suit === "H" || suit === "D";
  return el(
    "div",
    { class: `card macaua${red ? " red" : ""}`, "data-card": code, ...extra },
    joker ? `${code === "RJ" ? "Red" : "Black"} Joker` : `${code.slice(0, -1)}${SUIT_SIGNS[suit]}`,
  );
}

const macauaText = (code) =>
  code === "BJ" || code === "RJ" ? `the ${code === "RJ" ? "red" : "black"} Joker` : `${code.slice(0, -1)}${SUIT_SIGNS[code.slice(-1)] || ""}`;

/** The public facts of the table: from the seat's checked copy, else the view. */
function macauaTable(view, ctx) {
  const s = ctx.seat?.state;
  if (!s) return view?.state || {};
  return {
    phase: s.phase,
    seats: s.seats,
    top: s.discard[s.discard.length - 1] ?? null,
    declared: s.declared,
    challenge: s.challenge,
    fresh: s.fresh.length,
    hand_counts: Object.fromEntries(s.seats.map((p) => [p, (s.hands[p] || []).length])),
    turn: s.phase === "play" || s.phase === "draw" ? s.seats[s.turn] : null,
    waiting: s.waiting,
    winner: s.winner,
    result: s.result,
    deck: s.decks.length - 1,
  };
}

const PHASES = {
  keys: "Every player publishes its keys for the deck",
  shuffle: "Every player shuffles the deck, masked, with a proof",
  mask: "Every player locks each card with a key of its own",
  deal: "Dealing: every player publishes the keys for the others' cards",
  play: "Play",
  draw: "Drawing: the others publish the keys of the drawn cards",
  audit: "The game is decided: every player publishes its remaining keys for the audit",
  over: "Game over",
};

// a halt's codes for an acknowledgement without a valid signature (the gamemaster's own)
const UNSIGNED = new Set(["bad_signature", "unsigned"]);

/** A halt (``macaua.rejected``) in words: who halted the table, the code, and that the seat
 * which halted it ranks last. A halt in this player's name that its own page refused
 * (``false_halt``: the page signed every transition) is the server's doing, and says so. */
function macauaHalt(message, ctx) {
  const halt = message.rejected || {};
  const player = halt.player ?? message.player;
  const code = halt.code || "?";
  if (player != null && player === ctx.me) {
    if (ctx.seat?.rejected?.code === "false_halt") {
      return `The server halted the table in your name (${code}), though this page signed every transition: the server is at fault. It ranks you last.`;
    }
    const did = UNSIGNED.has(code) ? "did not sign a transition validly" : "rejected a transition";
    return `The table halted: this page ${did} (${code}), so you rank last.`;
  }
  const who = player == null ? "a seat" : ctx.label(player);
  const did = UNSIGNED.has(code) ? "did not sign a transition validly" : "rejected a transition";
  return `The table halted: ${who} ${did} (${code}), so ${who} ranks last.`;
}

/** This seat's own refusal of a transition, as the page shows it beside the table. */
function macauaRefusal(failed, ctx) {
  if (failed.code === "false_halt") {
    return "The server halted the table in your name, though this page signed every transition: the server is at fault (false_halt).";
  }
  const blamed = failed.blame === "server" ? "the server" : failed.blame === ctx.me ? "you" : ctx.label(failed.blame);
  return `This page rejected a transition (${failed.code}, blaming ${blamed}): ${failed.reason}`;
}

/** Why a Macaua game ended as it did, from its outcome, for the final ranking. */
function macauaOutcome(outcome, ctx) {
  const details = outcome?.details;
  const me = (p) => p === ctx.me;
  const who = (p, start = false) => (me(p) ? (start ? "You" : "you") : ctx.label(p));
  const [first] = outcome?.ranking || [];
  const stalled = details?.stalled;
  const withheld = details?.withheld || [];
  switch (details?.result) {
    case "won":
      return first?.length === 1 ? `${who(first[0], true)} emptied ${me(first[0]) ? "your" : "their"} hand first.` : null;
    case "rejected":
      return macauaHalt({ rejected: details.rejected || {} }, ctx);
    case "aborted":
      return stalled
        ? `${who(stalled, true)} did not move in time: the game was stopped, and ${who(stalled)} ${me(stalled) ? "rank" : "ranks"} last.`
        : null;
    case "forfeited":
      return withheld.length
        ? `${withheld.map((p, i) => who(p, i === 0)).join(", ")} did not publish the keys the audit needs, so ${withheld.length > 1 ? "they rank" : me(withheld[0]) ? "you rank" : `${who(withheld[0])} ranks`} last.`
        : null;
    case "void":
      return "The audit found a deck that is not a whole deck: the game is void, and everyone ties.";
    case "turn_limit":
      return "The turn limit was reached: everyone ties.";
    default:
      return null;
  }
}

const macaua = {
  outcomeNote: macauaOutcome,
  patch(view, message) {
    const state = view?.state;
    if (state && message.type === "MacauaUpdate") {
      state.phase = message.phase;
      state.waiting = message.waiting;
      if (message.top) state.top = message.top;
      if (message.cards?.length) state.top = message.cards[message.cards.length - 1];
    }
    return view;
  },
  describe(message, ctx) {
    if (message.type !== "MacauaUpdate") return words(message.type || "update");
    const who = message.player === ctx.me ? "You" : ctx.label(message.player);
    switch (message.event) {
      case "started":
        return "The deck is dealt by mental poker: no server ever sees a hidden card.";
      case "reveal":
        return message.top ? `The cards are dealt; the first card is ${macauaText(message.top)}.` : null;
      case "played":
        return `${who} ${message.player === ctx.me ? "play" : "plays"} ${message.cards.map(macauaText).join(", ")}${message.suit ? `, asking for ${SUIT_SIGNS[message.suit]}` : ""}.`;
      case "draw":
        return `${who} ${message.player === ctx.me ? "draw" : "draws"} ${message.count} card${message.count === 1 ? "" : "s"}.`;
      case "reshuffled":
        return "The discard pile is shuffled into a new deck.";
      case "audited":
        return message.audit?.ok ? "Audit: every deck held exactly its cards." : "Audit: a deck was not what it should be: the game is void.";
      case "rejected":
        return macauaHalt(message, ctx);
      default:
        return null;
    }
  },
  spectate(before, after, ctx) {
    const b = before?.state || {};
    const a = after?.state || {};
    const lines = a.top && a.top !== b.top ? [`${ctx.label(a.turn)}: the top card is now ${macauaText(a.top)}.`] : [];
    if (a.rejected && !b.rejected) lines.push(macauaHalt({ rejected: a.rejected }, ctx));
    return lines;
  },
  render(view, actions, ctx) {
    const t = macauaTable(view, ctx);
    const seat = ctx.seat;
    const canPlay = actions.some((a) => a.kind === "play");
    const draw = actions.find((a) => a.kind === "draw");
    const plays = canPlay && seat ? seat.legalPlays() : [];
    const playable = new Map();
    for (const play of plays) if (play.length === 1) playable.set(`${play[0].deck}/${play[0].position}`, play);
    // several cards of one rank go together: for each legal first card, all of its rank
    const longest = new Map();
    for (const play of plays) {
      const first = `${play[0].deck}/${play[0].position}`;
      if (play.length > 1 && play.length > (longest.get(first)?.length ?? 0)) longest.set(first, play);
    }
    const ace = seat?.pendingAce;
    const hand = seat ? seat.hand() : null;
    const send = (play) => (play[0].card.startsWith("A") ? () => ((seat.pendingAce = play), ctx.refresh()) : () => ctx.act(() => seat.play(play)));
    return el(
      "div",
      { class: "macaua" },
      el(
        "div",
        { class: "players" },
        ...(t.seats || view?.seats || []).map((p) =>
          ctx.seatChip(p, { detail: t.hand_counts?.[p] == null ? "? cards" : count(t.hand_counts[p], "card"), active: p === t.turn || (t.phase !== "play" && (t.waiting || []).includes(p)) }),
        ),
      ),
      el(
        "p",
        { class: "status" },
        `${PHASES[t.phase] || words(t.phase || "")}. Deck ${t.deck ?? 0}, ${t.fresh ?? "?"} cards to draw.` +
          (t.challenge ? ` Pending: draw ${t.challenge}.` : "") +
          (t.declared ? ` Asked for: ${SUIT_SIGNS[t.declared]}.` : ""),
      ),
      t.top ? el("div", { class: "discard" }, el("span", {}, "Top card: "), macauaCard(t.top)) : null,
      seat?.rejected ? el("p", { class: "error refusal" }, macauaRefusal(seat.rejected, ctx)) : null,
      seat?.unsaved ? el("p", { class: "error unsaved" }, MACAUA_UNSAVED) : null,
      hand
        ? yourHand(
            hand,
            ctx,
            (c) => (ace ? null : playable.get(`${c.deck}/${c.position}`)),
            (c) => macauaCard(c.card),
            (c) => `Play ${macauaText(c.card)}`,
            (c, play) => send(play),
          )
        : null,
      longest.size && !ace
        ? el(
            "div",
            { class: "choices" },
            ...[...longest.values()].map((play) =>
              el("button", { class: "action together", onclick: send(play) }, `Play ${play.map((c) => macauaText(c.card)).join(", ")}`),
            ),
          )
        : null,
      ace
        ? el(
            "div",
            { class: "choices" },
            el("span", {}, `Play ${ace.map((c) => macauaText(c.card)).join(", ")} and ask for: `),
            ...Object.entries(SUIT_SIGNS).map(([suit, sign]) =>
              el("button", { class: "action suit", onclick: () => ((seat.pendingAce = null), ctx.act(() => seat.play(ace, suit))) }, sign),
            ),
          )
        : null,
      draw && !ace
        ? el("div", { class: "choices" }, el("button", { class: "action draw", onclick: () => ctx.act(() => seat.draw()) }, `Draw ${draw.count}`))
        : null,
    );
  },
};

export const GAMES = { take5, sixtysix, papas, macaua };

const NAMES = { take5: "Take 5", sixtysix: "The 66 game", papas: "Papas", macaua: "Macaua" };

export function gameName(type) {
  return NAMES[type] || words(type);
}

/** The countdowns a sync reply sets, as ``[key, due]`` (ms since the epoch): each of the
 * view's own clocks that end when the game moves by itself runs out at the time the server
 * says is left (``turn_due_in_ms``, counted from ``received``), not from its full length
 * again after a reload. */
export function syncedClocks(type, reply, received) {
  const left = reply?.turn_due_in_ms;
  if (typeof left !== "number") return [];
  return (GAMES[type]?.clocks?.(reply.view) || []).map((key) => [key, received + left]);
}

export function gameOf(type) {
  return GAMES[type] || null;
}

export { clone, words };
