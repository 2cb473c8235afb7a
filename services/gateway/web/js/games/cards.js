// Playing cards on the pages (Black Jack and Joker Seven): a card as the server writes it
// (rank then suit, `10H`, `AS`, or `JOKER`; docs/PROTOCOL.md) drawn as a card, read out in
// words, and the dealer's card picker (ranks × suits), one button per card.

import { h } from "../ui.js";

export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const SUITS = ["S", "H", "D", "C"];
export const JOKER = "JOKER";

const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAME = { A: "ace", J: "jack", Q: "queen", K: "king" };

/** A card's rank and suit ("10H" -> ["10", "H"]); a joker has no suit. */
export function parts(card) {
  const c = String(card).toUpperCase();
  if (c === JOKER) return [JOKER, ""];
  return [c.slice(0, -1), c.slice(-1)];
}

export function rank(card) {
  return parts(card)[0];
}

/** "10H" -> "10♥"; "JOKER" -> "Joker". */
export function short(card) {
  const [r, s] = parts(card);
  return r === JOKER ? "Joker" : `${r}${SUIT_SYMBOL[s] || s}`;
}

/** "10H" -> "10 of hearts"; "QS" -> "queen of spades"; "JOKER" -> "joker". */
export function words(card) {
  const [r, s] = parts(card);
  if (r === JOKER) return "joker";
  return `${RANK_NAME[r] || r} of ${SUIT_NAME[s] || s}`;
}

export function isRed(card) {
  const s = parts(card)[1];
  return s === "H" || s === "D";
}

/** A card face up, or (`card` null) a card face down. */
export function cardEl(card) {
  if (card === null || card === undefined) {
    return h("span", { class: "card down", role: "img", "aria-label": "a card face down" }, "🂠");
  }
  const cls = ["card"];
  if (isRed(card)) cls.push("red-suit");
  if (rank(card) === JOKER) cls.push("joker");
  return h("span", { class: cls.join(" "), role: "img", "aria-label": words(card) }, short(card));
}

/** Cards in a row, read out as one list. */
export function cardRow(cards, label = "cards") {
  return h("span", { class: "card-row", role: "group", "aria-label": label },
    cards.length ? cards.map(cardEl) : h("span", { class: "muted" }, "no card"));
}

/**
 * The dealer's card picker: one button per card, a row per suit. `onPick(card)` is called
 * with the card's code; `pressed(card)` marks a card chosen (aria-pressed); `disabled(card)`
 * greys one out. `prefix` keeps the buttons' `data-k` (focus across redraws) unique.
 */
export function picker({ onPick, pressed = () => false, disabled = () => false, prefix = "pick", label = "card picker", jokers = false }) {
  const rows = SUITS.map((s) => h("div", { class: "pick-suit", role: "group", "aria-label": SUIT_NAME[s] },
    RANKS.map((r) => {
      const card = `${r}${s}`;
      return h("button", {
        type: "button",
        class: isRed(card) ? "pick-card red-suit" : "pick-card",
        "data-k": `${prefix}-${card}`,
        "aria-label": words(card),
        "aria-pressed": pressed(card) ? "true" : null,
        disabled: disabled(card),
        onclick: () => onPick(card),
      }, short(card));
    })));
  if (jokers) {
    rows.push(h("div", { class: "pick-suit", role: "group", "aria-label": "jokers" },
      h("button", {
        type: "button",
        class: "pick-card joker",
        "data-k": `${prefix}-${JOKER}`,
        "aria-label": "joker",
        disabled: disabled(JOKER),
        onclick: () => onPick(JOKER),
      }, "Joker")));
  }
  return h("div", { class: "picker", role: "group", "aria-label": label }, rows);
}
