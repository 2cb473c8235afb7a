// Joker Seven (docs/PROTOCOL.md "Joker Seven", docs/RULES.md "Joker Seven (4620.16)"): the
// 28 squares a player taps (`{"square": name}`), the seven cards of a hand entered on a
// card picker (dealer mode, `record_outcome {"cards": [...]}`) or drawn (RNG mode,
// `draw_outcome`), and the last hand drawn as cards.

import { h, money } from "../ui.js";
import { redraw } from "../table.js";
import { cardRow, isRed, JOKER, picker, short, words } from "./cards.js";

const HAND_SIZE = 7;    // 4620.16(c): seven cards dealt face up
const MOST_JOKERS = 2;  // 4620.16(a): one deck and two jokers
const PAIR_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

/** The squares as the layout groups them, each with its odds "to 1" (4620.16(d)-(e); the
 * server's table in services/games/joker_seven.py is the one that pays). */
const GROUPS = [
  ["Red", [["red_4_or_more", "4 or more", 1], ["red_exactly_4", "exactly 4", 2],
    ["red_exactly_5", "exactly 5", 5], ["red_exactly_6", "exactly 6", 15], ["red_exactly_7", "exactly 7", 25]]],
  ["Black", [["black_4_or_more", "4 or more", 1], ["black_exactly_4", "exactly 4", 2],
    ["black_exactly_5", "exactly 5", 5], ["black_exactly_6", "exactly 6", 15], ["black_exactly_7", "exactly 7", 25]]],
  ["Pairs and jokers", [["no_pairs", "no pairs", 3], ["two_pairs", "two pairs", 3],
    ["prial", "prial (three of a kind)", 12], ["one_joker", "one joker", 3], ["two_jokers", "two jokers", 20]]],
  ["A specific pair", PAIR_RANKS.map((r) => [`pair_${r}`, `pair of ${r}`, 9])],
];
const LABEL = Object.fromEntries(GROUPS.flatMap(([group, squares]) =>
  squares.map(([sq, label]) => [sq, group === "Red" || group === "Black" ? `${group.toLowerCase()} ${label}` : label])));

export function describeBet(bet) {
  return bet && bet.square ? LABEL[bet.square] || bet.square : JSON.stringify(bet);
}

function cardsOf(outcome) {
  if (!outcome) return [];
  if (Array.isArray(outcome)) return outcome;
  if (typeof outcome === "string") return outcome.split(/\s+/).filter(Boolean);
  return Array.isArray(outcome.cards) ? outcome.cards : [];
}

/** The seven cards with suit signs: "A♠ 3♣ 7♥ 10♥ Q♦ Q♠ Joker". */
export function describeOutcome(outcome) {
  const cards = cardsOf(outcome);
  return cards.length ? cards.map(short).join(" ") : JSON.stringify(outcome);
}

/** The squares: one button per square, with its odds and what is staked on it (the
 * player's own bets on the player page, every bet on the dealer console). */
export function layout(ctx) {
  const v = ctx.view;
  const staked = new Map();
  for (const b of v.bets || []) {
    if (!ctx.isDealer && b.player !== ctx.player) continue;
    staked.set(b.bet.square, (staked.get(b.bet.square) || 0) + b.amount);
  }
  return h("div", { class: "j7-layout" },
    h("p", { class: "muted" }, `Each square pays once a hand; ${money(v.config.min_bet)}–${money(v.config.max_bet)} a bet.`),
    GROUPS.map(([group, squares]) => h("div", { class: "j7-group", role: "group", "aria-label": group },
      h("h3", {}, group),
      h("div", { class: "j7-squares" }, squares.map(([sq, label, odds]) => {
        const on = staked.get(sq);
        return h("button", {
          type: "button",
          class: on ? "j7-square staked" : "j7-square",
          "data-k": `j7-${sq}`,
          "aria-label": `bet on ${LABEL[sq]}, pays ${odds} to 1${on ? `, ${money(on)} on it` : ""}`,
          disabled: v.phase !== "betting",
          onclick: () => ctx.bet({ square: sq }),
        }, h("span", { class: "j7-name" }, label), h("span", { class: "j7-odds" }, `${odds} to 1`),
        on ? h("span", { class: "j7-staked" }, money(on)) : null);
      })))));
}

/** RNG mode: the draw. Dealer mode: the seven cards dealt, tapped on a card picker (52
 * cards and the jokers), then recorded as one outcome. */
export function outcomeEntry(ctx) {
  if (ctx.view.outcome_mode === "rng") {
    return h("button", { type: "button", class: "primary", "data-k": "j7-draw",
      onclick: () => ctx.send("draw_outcome", {}, "the seven cards drawn") }, "Draw the seven cards");
  }
  let chosen = [];
  const box = h("div", { class: "j7-entry" });
  const draw = () => {
    const jokers = chosen.filter((c) => c === JOKER).length;
    const full = chosen.length >= HAND_SIZE;
    return [
      h("p", { id: "j7-count" }, `${chosen.length} of ${HAND_SIZE} cards`),
      h("div", { class: "row", role: "group", "aria-label": "the cards entered" },
        chosen.length ? chosen.map((c, i) => h("button", {
          type: "button", class: isRed(c) ? "pick-card red-suit" : c === JOKER ? "pick-card joker" : "pick-card",
          "data-k": `j7-chosen-${i}`,
          "aria-label": `remove ${words(c)}`,
          onclick: () => { chosen.splice(i, 1); redraw(box, draw); },
        }, short(c))) : h("span", { class: "muted" }, "tap the cards as they lie")),
      picker({
        prefix: "j7-card",
        label: "the seven cards",
        jokers: true,
        pressed: (c) => chosen.includes(c),
        disabled: (c) => (c === JOKER ? jokers >= MOST_JOKERS || full : full && !chosen.includes(c)),
        onPick: (c) => {
          const at = chosen.indexOf(c);
          if (c !== JOKER && at >= 0) chosen.splice(at, 1);
          else if (chosen.length < HAND_SIZE) chosen.push(c);
          redraw(box, draw);
        },
      }),
      h("div", { class: "row" },
        h("button", {
          type: "button", class: "primary", "data-k": "j7-record", disabled: !full,
          onclick: async () => {
            const reply = await ctx.send("record_outcome", { outcome: { cards: chosen } }, "the hand recorded");
            if (reply.ok) chosen = [];
          },
        }, "Record the hand"),
        h("button", { type: "button", "data-k": "j7-clear", disabled: !chosen.length,
          onclick: () => { chosen = []; redraw(box, draw); } }, "Clear")),
    ];
  };
  redraw(box, draw);
  return box;
}

/** The last hand, drawn as cards (the table's last result). */
export function round(ctx) {
  const v = ctx.view;
  const cards = cardsOf(v.last_outcome);
  if (!cards.length) return null;
  return h("div", { class: "j7-round" },
    h("h2", {}, "Last hand"),
    cardRow(cards, "the last hand's seven cards"),
    h("p", { class: "muted", id: "j7-last" }, describeOutcome(cards)));
}

export function key(view) {
  const bets = (view.bets || []).map((b) => b.bet_id).join(",");
  return `${view.phase}|${view.round}|${view.closed}|${bets}`;
}

