// A table on a page: its view (pushed by the server as it changes), its events since the
// page opened (the stream, resumed with `since` after a lost connection), and the game's
// own module that draws the device, the layout and the round (docs/CONSOLES.md).

import { fill, h, money, notify, report } from "./ui.js";

/** The module of each game family; a game not listed gets the generic one. Every module
 * exports the same functions (see games/generic.js for what each one draws). */
const FAMILY = {
  roulette: "roulette",
  big_six: "wheel", big_nine: "wheel", money_wheel: "wheel", color_wheel: "wheel",
  horse_race_wheel: "wheel", fruit_wheel: "wheel", card_wheel: "wheel",
  merchandise_wheel: "wheel",
  joker_seven: "joker_seven",
  black_jack: "black_jack",
  chuck_a_luck: "dice", hazard: "dice", under_and_over_seven: "dice",
  beat_the_dealer: "dice_rounds", bang: "dice_rounds",
};

const KNOWN_BETS_KEPT = 5000;  // bets remembered to name a settled one (the newest)

export async function gameModule(game) {
  const family = FAMILY[game] || "generic";
  try {
    return await import(`./games/${family}.js`);
  } catch (e) {
    console.error(e);
    return await import("./games/generic.js");
  }
}

/** What a game module is handed: the page's connection, the table, the latest view, who
 * bets (a player page's own account, the player a dealer bets for) and the commands. */
export class TableContext {
  constructor(conn, tableId) {
    this.conn = conn;
    this.table = tableId;
    this.view = null;
    this.events = [];           // this page's events of the table, in order, each once
    this.player = conn.claims.player || "";
    this.amount = 100;          // the stake a tap places, in cents
    this.listeners = new Set();
    this.known = new Map();     // bet_id -> the bet (from the view and BetPlaced), to name a settled bet
    this.state = {};            // a game module's half-entered input that must survive a redraw
  }

  get role() { return this.conn.claims.role; }
  get isDealer() { return this.role === "dealer"; }

  /** A table command, its refusal shown; resolves with the reply. */
  async send(op, fields = {}, done = null) {
    const reply = await this.conn.send(op, { table: this.table, ...fields });
    return report(reply, done);
  }

  /** Place `bet` (a bet object of the game, as in docs/PROTOCOL.md) for `this.player`. */
  bet(bet, amount = this.amount) {
    if (!this.player) {
      notify("choose the player to bet for first", "error");
      return Promise.resolve(null);
    }
    return this.send("place_bet", { player: this.player, bet, amount }, `bet placed: ${money(amount)}`);
  }

  /** The bet a `bet_id` names, as the view or the stream showed it (null when unseen). */
  betOf(betId) {
    return this.known.get(betId) || null;
  }

  changed() {
    if (this.view) for (const b of this.view.bets || []) this.known.set(b.bet_id, b);
    for (const listener of this.listeners) listener(this);
  }
}

/** Keep the focused control focused across a redraw: controls carry `data-k`. */
export function redraw(container, draw) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.k : null;
  let caret = null;
  if (key && active.tagName === "INPUT" && typeof active.selectionStart === "number") {
    try { caret = [active.selectionStart, active.selectionEnd]; } catch { caret = null; }
  }
  fill(container, draw());
  if (!key) return;
  const keyed = [...container.querySelectorAll("[data-k]")];
  const again = keyed.find((el) => el.dataset.k === key);
  if (!again) return;
  if (!again.disabled) {
    again.focus();
    if (caret) { try { again.setSelectionRange(caret[0], caret[1]); } catch { /* not a text input */ } }
    return;
  }
  // The control just got disabled (Open round once the round is open): focus the next
  // enabled one, so a keyboard user carries on where the round goes next.
  const i = keyed.indexOf(again);
  const next = [...keyed.slice(i + 1), ...keyed.slice(0, i).reverse()].find((el) => !el.disabled);
  if (next) next.focus();
}

/** Start following a table: its view, then its stream from the view's seq (so the events
 * after the view are all seen, once). Calls `ctx.changed()` on every change. */
export async function followTable(ctx) {
  const first = await ctx.conn.watch({ view: "table", table: ctx.table }, (data) => {
    if (data) {
      ctx.view = data;
      ctx.changed();
    }
  });
  if (!first.ok) return first;
  const since = first.result.data ? first.result.data.seq : 0;
  ctx.conn.follow(`table:${ctx.table}`, since, (ev) => {
    if (ev.type === "BetPlaced") {
      ctx.known.set(ev.data.bet_id, ev.data);
      if (ctx.known.size > KNOWN_BETS_KEPT) ctx.known.delete(ctx.known.keys().next().value);
    }
    ctx.events.push(ev);
    if (ctx.events.length > 500) ctx.events.splice(0, ctx.events.length - 500);
    ctx.changed();
  });
  return first;
}

/** The round's settlements this page saw (`Settled` and `PartSettled`), newest first. */
export function settlements(ctx, player = null) {
  const rows = [];
  for (const ev of ctx.events) {
    if (ev.type !== "Settled" && ev.type !== "PartSettled") continue;
    for (const s of ev.data.settlements) {
      if (player && s.player !== player) continue;
      rows.push({ round: ev.data.round, part: ev.data.part || "", seq: ev.seq, ...s });
    }
  }
  return rows.reverse();
}

export function settlementTable(rows, describe = (s) => s.bet_id, { label = "settlement" } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, "no settlement yet");
  return h("table", { "aria-label": label, class: "settlement" },
    h("thead", {}, h("tr", {}, h("th", {}, "round"), h("th", {}, "bet"), h("th", {}, "player"),
      h("th", {}, "result"), h("th", { class: "num" }, "stake"), h("th", { class: "num" }, "paid"))),
    h("tbody", {}, rows.slice(0, 40).map((s) => h("tr", { dataset: { bet: s.bet_id } },
      h("td", {}, s.part ? `${s.round} · ${s.part}` : s.round), h("td", {}, describe(s)), h("td", {}, s.player),
      h("td", { class: s.result === "won" ? "good" : s.result === "lost" ? "bad" : "" }, s.result),
      h("td", { class: "num" }, money(s.amount)), h("td", { class: "num" }, money(s.paid))))));
}

/** A settled bet in words: the bet as placed (from the view or the stream), else its id. */
export function settledBet(ctx, game) {
  return (s) => {
    const placed = ctx.betOf(s.bet_id);
    if (placed) return game.describeBet(placed.bet, ctx.view ? ctx.view.config : {});
    // A wager added to a bet (a split hand, say) is named by the part it settled in.
    return s.part ? s.part.replace(/^hand:/, "hand ") : s.bet_id;
  };
}

/** The newest settlement this page saw (`Settled` or `PartSettled`) in one line: the
 * round, the outcome, what was wagered and paid (for `player`: the newest with a bet of
 * theirs, their own part only). */
export function lastSettlement(ctx, game, player = null) {
  for (let i = ctx.events.length - 1; i >= 0; i--) {
    const ev = ctx.events[i];
    if (ev.type !== "Settled" && ev.type !== "PartSettled") continue;
    const d = ev.data;
    const own = player ? d.settlements.filter((s) => s.player === player) : d.settlements;
    if (player && !own.length) continue;  // a round the player had no bet in
    const wagered = own.reduce((n, s) => n + s.amount, 0);
    const paid = own.reduce((n, s) => n + s.paid, 0);
    const what = ev.type === "Settled"
      ? (d.outcome && Object.keys(d.outcome).length ? game.describeOutcome(d.outcome, ctx.view.config) : "voided")
      : d.part;
    return h("p", { class: "settled-line", id: "last-settlement" },
      h("strong", {}, `Round ${d.round}: ${what}`), " · wagered ",
      h("span", { class: "wagered" }, money(wagered)), " · paid ", h("strong", { class: "paid" }, money(paid)));
  }
  return null;
}

export function betsTable(ctx, describe, { cancel = false } = {}) {
  const bets = ctx.view ? ctx.view.bets : [];
  if (!bets.length) return h("p", { class: "empty" }, "no bet in this round yet");
  return h("table", { "aria-label": "bets of the round" },
    h("thead", {}, h("tr", {}, h("th", {}, "player"), h("th", {}, "bet"),
      h("th", { class: "num" }, "stake"), cancel ? h("th", {}, "") : null)),
    h("tbody", {}, bets.map((b) => h("tr", { dataset: { bet: b.bet_id } },
      h("td", {}, b.player), h("td", {}, describe(b.bet)), h("td", { class: "num" }, money(b.amount)),
      cancel ? h("td", {}, h("button", {
        "data-k": `cancel-${b.bet_id}`,
        "aria-label": `cancel ${b.player}'s ${describe(b.bet)}`,
        onclick: () => ctx.send("cancel_bet", { bet_id: b.bet_id }, "bet cancelled"),
      }, "Cancel")) : null))));
}
