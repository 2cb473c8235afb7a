// The module every game family provides, and what a game without its own draws: the
// bets and outcomes as text. A family module (roulette.js, wheel.js, …) exports the same
// names; the dealer console and the player page call them (js/table.js, js/dealer.js,
// js/player.js).
//
//   describeBet(bet, config)          -> string: a bet of this game in words
//   describeOutcome(outcome, config)  -> string: an outcome in words
//   layout(ctx)                       -> Element: what a player taps to bet; calls ctx.bet(bet)
//   outcomeEntry(ctx)                 -> Element: the dealer's picture of the device, which
//                                        sends record_outcome (dealer mode) or draw_outcome
//   round(ctx)                        -> Element | null: the game's own round (hands,
//                                        rolls, seats) with its actions; null when the
//                                        table's phase says it all
//   key(view)                         -> string: redraw layout and outcome entry only when
//                                        it changes (focus and half-entered input survive)
//
// Optional (the shells' default in brackets):
//   entersOutcome                     -> boolean [true]: false when the game's round panel
//                                        takes the outcome itself (rolls, cards): the dealer
//                                        console then shows no Outcome section
//   outcomeEntry(ctx) may return null -> no Outcome section for this view
//
// What ctx offers (js/table.js TableContext): view, events (this page's events of the
// table), player, amount, isDealer, send(op, fields, doneText), bet(bet), betOf(bet_id)
// (a bet as placed, to name a settled one), state (an object for input that must
// survive the redraws of round(ctx), which runs on every change), changed().

import { h } from "../ui.js";

export function describeBet(bet) {
  return Object.entries(bet).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join("-") : v}`).join(", ");
}

export function describeOutcome(outcome) {
  return JSON.stringify(outcome);
}

export function layout(ctx) {
  const input = h("textarea", { "aria-label": "bet as JSON", rows: 2, cols: 30 }, '{"kind": ""}');
  return h("div", { class: "row" }, input, h("button", {
    "data-k": "generic-bet",
    onclick: () => {
      try { ctx.bet(JSON.parse(input.value)); } catch { ctx.send("place_bet", { bet: input.value }); }
    },
  }, "Place bet"));
}

export function outcomeEntry(ctx) {
  if (ctx.view.outcome_mode === "rng") {
    return h("button", { class: "primary", "data-k": "draw", onclick: () => ctx.send("draw_outcome", {}, "outcome drawn") }, "Draw the outcome");
  }
  const input = h("textarea", { "aria-label": "outcome as JSON", rows: 2, cols: 30 }, "{}");
  return h("div", { class: "row" }, input, h("button", {
    class: "primary",
    "data-k": "record",
    onclick: () => {
      let outcome;
      try { outcome = JSON.parse(input.value); } catch { outcome = input.value; }
      ctx.send("record_outcome", { outcome }, "outcome recorded");
    },
  }, "Record the outcome"));
}

export function round() {
  return null;
}

export function key(view) {
  return `${view.phase}|${view.round}|${view.closed}`;
}
