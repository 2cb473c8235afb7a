// Black Jack (docs/PROTOCOL.md "Black Jack", docs/RULES.md "Black Jack (4620.5)"): the
// betting spaces, every hand with its cards, count, wagers, state and turn, the dealer's
// cards, the insurance offer, and the commands of the round: deal, peek, the cards entered
// from the physical shoe (dealer mode), shuffle, burn, and each hand's actions.
//
// Everything shown comes from the table view (the game's public view: `stage`, `turn`,
// `hands`, `dealer`, `awaiting` …) and the stream's `PartSettled` events. Which actions a
// hand is offered is worked out from the view's cards by the rules the server applies
// (4620.5(k), (l)); the server decides, and a refusal is shown with its message.

import { h, money } from "../ui.js";
import { cardEl, cardRow, picker, rank, SUITS, words } from "./cards.js";

const TEN_COUNTS = new Set(["10", "J", "Q", "K"]);

/** A burn on the next card picked (dealer mode, a dead card the player refused): the
 * dealer's choice on this page only, until the card is picked or the toggle is undone. */
let burnNext = false;

function cardValue(card) {
  const r = rank(card);
  if (r === "A") return 1;
  return TEN_COUNTS.has(r) ? 10 : Number(r);
}

function isPair(cards) {
  if (cards.length !== 2) return false;
  const [a, b] = [rank(cards[0]), rank(cards[1])];
  return a === b || (TEN_COUNTS.has(a) && TEN_COUNTS.has(b));
}

export function describeBet(bet) {
  return bet && bet.space !== undefined ? `space ${bet.space}` : JSON.stringify(bet);
}

/** Black Jack has no single outcome: the round is its hands. */
export function describeOutcome(outcome) {
  return outcome && Object.keys(outcome).length ? JSON.stringify(outcome) : "played through the hands";
}

/** The betting spaces: one button per space, a taken one says whose it is. */
export function layout(ctx) {
  const v = ctx.view;
  const spaces = (v.config && v.config.spaces) || 7;
  const taken = new Map((v.bets || []).map((b) => [Number(b.bet.space), b]));
  const buttons = [];
  for (let n = 1; n <= spaces; n += 1) {
    const bet = taken.get(n);
    const mine = bet && !ctx.isDealer && bet.player === ctx.player;
    buttons.push(h("button", {
      type: "button",
      class: bet ? (mine ? "bj-space taken mine" : "bj-space taken") : "bj-space",
      "data-k": `bj-space-${n}`,
      disabled: Boolean(bet) || v.phase !== "betting",
      "aria-label": bet ? `space ${n}, taken by ${bet.player}` : `bet on space ${n}`,
      onclick: () => ctx.bet({ space: n }),
    }, h("span", { class: "bj-space-n" }, `${n}`),
    h("span", { class: "bj-space-who" }, bet ? `${bet.player} · ${money(bet.amount)}` : "open")));
  }
  return h("div", {},
    h("p", { class: "muted" }, `Spaces from the dealer's left; an even stake, ${money(v.config.min_bet)}–${money(v.config.max_bet)}.`),
    h("div", { class: "bj-spaces", role: "group", "aria-label": "betting spaces" }, buttons));
}

/** The shell shows this after no more bets: at Black Jack the round is played through the
 * hands (the game's round below), not entered as one outcome. */
export function outcomeEntry() {
  return h("p", { class: "muted", id: "bj-outcome-note" },
    "Black Jack has no single outcome: the round is played through the hands below.");
}

export function key(view) {
  const taken = (view.bets || []).map((b) => `${b.bet.space}:${b.player}:${b.amount}`).join(",");
  return `${view.phase}|${view.round}|${view.closed}|${taken}`;
}

const STAGE_TEXT = {
  idle: "no round yet",
  betting: "bets open",
  dealing: "dealing",
  insurance: "insurance offered (an ace up) until the dealer peeks",
  peek: "the dealer peeks (a 10-count up)",
  players: "players' turn",
  dealer: "the dealer's hand",
  over: "round over",
};

/** The parts of this round settled so far (from the stream), by part name. */
function partsOfRound(ctx) {
  const out = new Map();
  for (const ev of ctx.events) {
    if (ev.type === "PartSettled" && ev.data.round === ctx.view.round) out.set(ev.data.part, ev.data);
  }
  return out;
}

function partText(part) {
  const results = [...new Set(part.settlements.map((s) => s.result))].join(", ");
  return `${results} · paid ${money(part.paid)}`;
}

/** Whom the next card entered goes to, in words. */
function target(v, to) {
  if (to === "dealer") return "the dealer (face up)";
  if (to === "hole") return "the dealer's hole card, turned up";
  if (to === "shuffle") return "none: the box is empty, shuffle the discards";
  const hand = (v.hands || []).find((x) => x.hand === to);
  return hand ? `hand ${to} (space ${hand.space}, ${hand.player})` : `hand ${to}`;
}

/** The actions the rules allow on hand `x` when it is its turn (the server decides). */
function allowedActions(v, x) {
  if (v.stage !== "players" || v.turn !== x.hand || x.cards.length < 2 || v.awaiting === x.hand) return [];
  const split = v.hands.filter((o) => o.space === x.space).length > 1;
  const splitAces = split && rank(x.cards[0]) === "A";
  if (splitAces) return ["stand"];
  const out = ["hit", "stand"];
  const hard = x.cards.reduce((sum, c) => sum + cardValue(c), 0);
  if (x.cards.length === 2 && !split && (hard === 10 || hard === 11)) out.push("double");
  if (isPair(x.cards)) out.push("split");
  return out;
}

const ACTION_DONE = { hit: "hit", stand: "stood", double: "doubled", split: "split" };

function handEl(ctx, x, parts) {
  const v = ctx.view;
  const mine = !ctx.isDealer && x.player === ctx.player;
  const turn = v.turn === x.hand;
  const staked = x.wagers.reduce((sum, w) => sum + w.amount, 0);
  const part = parts.get(`hand:${x.hand}`);
  const mayAct = ctx.isDealer || mine;
  const actions = mayAct ? allowedActions(v, x) : [];
  const insurable = mayAct && v.insurance_offered && x.hand.endsWith(".0") && x.insurance === null;
  const half = Math.floor(x.wagers[0].amount / 2);
  const cls = ["bj-hand"];
  if (turn) cls.push("turn");
  if (mine) cls.push("mine");
  return h("li", { class: cls.join(" "), dataset: { hand: x.hand }, "aria-current": turn ? "true" : null },
    h("div", { class: "bj-hand-head" },
      h("strong", {}, `Hand ${x.hand}`), ` · space ${x.space} · ${x.player}`,
      turn ? h("span", { class: "bj-turn" }, " · to act") : null),
    cardRow(x.cards, `hand ${x.hand}'s cards`),
    h("div", { class: "bj-hand-facts" },
      h("span", { class: "bj-total" }, x.cards.length ? `${x.soft ? "soft " : ""}${x.total}` : "–"),
      h("span", {}, ` · ${money(staked)} staked`),
      x.insurance ? h("span", {}, ` · insured ${money(x.insurance)}`) : null,
      h("span", { class: "bj-state" }, ` · ${x.state}`)),
    part ? h("div", { class: `bj-result ${part.settlements.some((s) => s.result === "won") ? "good" : part.paid ? "" : "bad"}` },
      partText(part)) : null,
    actions.length || insurable ? h("div", { class: "row bj-actions" },
      actions.map((a) => h("button", {
        type: "button",
        class: a === "hit" || a === "stand" ? "primary" : "",
        "data-k": `bj-act-${x.hand}-${a}`,
        "aria-label": `${a} hand ${x.hand}`,
        onclick: () => ctx.send("act", { hand: x.hand, action: a }, `hand ${x.hand}: ${ACTION_DONE[a]}`),
      }, a[0].toUpperCase() + a.slice(1))),
      insurable ? h("button", {
        type: "button",
        "data-k": `bj-insure-${x.hand}`,
        "aria-label": `insure hand ${x.hand} for ${money(half)}`,
        onclick: () => ctx.send("insure", { hand: x.hand, amount: half }, `hand ${x.hand} insured`),
      }, `Insure ${money(half)}`) : null) : null);
}

function dealerEl(ctx, parts) {
  const d = ctx.view.dealer;
  const cards = [...d.cards.slice(0, 1).map(cardEl), d.hole === "face down" ? cardEl(null) : null,
    ...d.cards.slice(1).map(cardEl)];
  const ins = parts.get("insurance");
  return h("div", { class: "bj-dealer" },
    h("h3", {}, "Dealer"),
    h("span", { class: "card-row", role: "group", "aria-label": "the dealer's cards" },
      cards.some(Boolean) ? cards : h("span", { class: "muted" }, "no card")),
    h("div", { class: "bj-hand-facts" },
      d.total !== null && d.total !== undefined ? h("span", { class: "bj-total", id: "bj-dealer-total" }, `${d.total}`) : null,
      d.hole === "face down" ? h("span", { class: "muted" }, " hole card face down") : null),
    ins ? h("p", { class: "bj-result" }, `insurance: ${partText(ins)}`) : null);
}

/** The dealer's commands of the round (deal, peek, the shoe). */
function dealerControls(ctx) {
  const v = ctx.view;
  const dealerMode = v.outcome_mode === "dealer";
  const nothingDealt = !v.dealer.cards.length && !(v.hands || []).some((x) => x.cards.length);
  const items = [];
  const noHand = !(v.hands || []).length;
  // After the shell's "no more bets": RNG mode deals; with no bet on the layout the deal
  // ends the round (either mode). A dealer-mode deal of bets is the cards entered.
  if (v.stage === "betting" || (v.stage === "dealing" && nothingDealt && (!dealerMode || noHand))) {
    const label = v.stage === "betting" ? "Deal (no more bets)" : noHand ? "End the round (no bet)" : "Deal";
    items.push(h("button", {
      type: "button", class: "primary", "data-k": "bj-deal",
      disabled: v.stage === "betting" && !(v.bets || []).length,
      onclick: () => ctx.send("deal", {}, noHand && v.stage !== "betting" ? "round ended" : "dealt"),
    }, label));
  }
  if (v.stage === "insurance" || v.stage === "peek") {
    if (!dealerMode) {
      items.push(h("button", { type: "button", class: "primary", "data-k": "bj-peek",
        onclick: () => ctx.send("peek", {}, "the dealer peeked") }, "Peek"));
    } else {
      items.push(h("button", { type: "button", class: "primary", "data-k": "bj-peek-no",
        onclick: () => ctx.send("peek", { natural: false }, "peeked: no natural") }, "Peek: no natural"));
    }
  }
  const row = [h("div", { class: "row" }, items)];
  if (dealerMode && (v.stage === "insurance" || v.stage === "peek")) {
    // A natural: the hole card is one that makes 21 with the up-card.
    const upAce = rank(v.dealer.up) === "A";
    const ranks = upAce ? ["10", "J", "Q", "K"] : ["A"];
    row.push(h("div", { class: "bj-natural", role: "group", "aria-label": "peek: a natural, the hole card is" },
      h("span", { class: "muted" }, "Natural, the hole card is: "),
      ranks.flatMap((r) => SUITS.map((s) => {
        const card = `${r}${s}`;
        return h("button", {
          type: "button", class: "pick-card", "data-k": `bj-natural-${card}`,
          "aria-label": `natural: hole card ${words(card)}`,
          onclick: () => ctx.send("peek", { natural: true, hole: card }, "dealer natural"),
        }, cardEl(card));
      }))));
  }
  if (dealerMode) row.push(cardEntry(ctx));
  return h("div", { class: "bj-controls" }, row);
}

/** Why no card is due (dealer mode), for the line above the picker. */
function idleReason(v) {
  if (v.stage === "insurance" || v.stage === "peek") return ": the dealer peeks first";
  if (v.stage === "players") return `: hand ${v.turn}'s decision first`;
  if (v.stage === "dealing" && !(v.hands || []).length) return ": no bet on the layout";
  return "";
}

/** Dealer mode: the card the game waits for, picked from ranks × suits; a dead card burnt;
 * the discards shuffled when the box is empty. */
function cardEntry(ctx) {
  const v = ctx.view;
  const live = !["idle", "betting", "over"].includes(v.stage);
  const due = v.awaiting && v.awaiting !== "shuffle";
  const parts = [
    h("p", { class: "bj-awaiting", id: "bj-awaiting" },
      burnNext ? "Next card picked: burnt as a dead card"
        : v.awaiting ? `Next card: ${target(v, v.awaiting)}` : `No card due${idleReason(v)}`),
  ];
  if (live && (due || burnNext)) {
    parts.push(picker({
      prefix: "bj-card",
      label: "enter a card",
      onPick: (card) => {
        if (burnNext) {
          burnNext = false;
          ctx.send("burn_card", { card }, `${words(card)} burnt`).then(() => ctx.changed());
        } else {
          const to = { dealer: "the dealer", hole: "the hole card" }[v.awaiting] || `hand ${v.awaiting}`;
          ctx.send("enter_cards", { cards: [card] }, `${words(card)} to ${to}`);
        }
      },
    }));
  }
  parts.push(h("div", { class: "row" },
    live ? h("button", {
      type: "button", "data-k": "bj-burn", "aria-pressed": burnNext ? "true" : "false",
      onclick: () => { burnNext = !burnNext; ctx.changed(); },
    }, "Burn a dead card") : null,
    h("button", {
      type: "button", "data-k": "bj-shuffle", class: v.awaiting === "shuffle" ? "primary" : "",
      onclick: () => ctx.send("shuffle", {}, "the discards shuffled"),
    }, "Shuffle the discards")));
  return h("div", { class: "bj-entry" }, parts);
}

export function round(ctx) {
  const v = ctx.view;
  if (!v || v.stage === undefined) return null;
  const parts = partsOfRound(ctx);
  const hands = v.hands || [];
  const turn = hands.find((x) => x.hand === v.turn);
  let stage = STAGE_TEXT[v.stage] || v.stage;
  if (v.stage === "players" && turn) {
    stage = !ctx.isDealer && turn.player === ctx.player ? `your turn: hand ${turn.hand}` : `hand ${turn.hand} to act`;
  }
  return h("div", { class: "bj-round" },
    h("h2", {}, `Black Jack · round ${v.round ?? "–"}`),
    h("p", {},
      h("strong", { id: "bj-stage" }, stage),
      h("span", { class: "muted" }, ` · natural pays ${v.natural_pays[0]} to ${v.natural_pays[1]} · tie option ${v.tie_option}`
        + ` · ${v.decks} decks · box ${v.box} left`)),
    dealerEl(ctx, parts),
    h("h3", {}, "Hands"),
    hands.length ? h("ol", { class: "bj-hands", "aria-label": "hands in order of play" },
      hands.map((x) => handEl(ctx, x, parts)))
      : h("p", { class: "empty" }, v.stage === "betting" ? "hands come with the deal" : "no hand this round"),
    ctx.isDealer ? dealerControls(ctx) : null);
}
