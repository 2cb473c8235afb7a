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

  changed() {
    for (const listener of this.listeners) listener(this);
  }
}

/** Keep the focused control focused across a redraw: controls carry `data-k`. */
export function redraw(container, draw) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.k : null;
  fill(container, draw());
  if (key) {
    const again = container.querySelector(`[data-k="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
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

export function settlementTable(rows, describe = (s) => s.bet_id) {
  if (!rows.length) return h("p", { class: "empty" }, "no settlement yet");
  return h("table", {},
    h("thead", {}, h("tr", {}, h("th", {}, "round"), h("th", {}, "bet"), h("th", {}, "player"),
      h("th", {}, "result"), h("th", { class: "num" }, "stake"), h("th", { class: "num" }, "paid"))),
    h("tbody", {}, rows.slice(0, 40).map((s) => h("tr", {},
      h("td", {}, s.round), h("td", {}, describe(s)), h("td", {}, s.player),
      h("td", { class: s.result === "won" ? "good" : s.result === "lost" ? "bad" : "" }, s.result),
      h("td", { class: "num" }, money(s.amount)), h("td", { class: "num" }, money(s.paid))))));
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
