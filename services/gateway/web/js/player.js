// The player page, made for a phone: the player's own balance, a table's layout to tap
// bets on, the round's state and the player's own results (`player.html?table=<id>`).

import { cents, fill, h, money, startPage } from "./ui.js";
import {
  TableContext, followTable, gameModule, lastSettlement, redraw, settledBet, settlements, settlementTable,
} from "./table.js";

const conn = startPage("player", { title: "Player", roles: ["player"] });
const main = document.getElementById("main");

async function page(tableId) {
  const player = conn.claims.player || "";
  const balance = h("section", { "aria-label": "balance" });
  const tables = h("nav", { class: "panel", "aria-label": "tables" });
  const state = h("section", { "aria-label": "round" });
  const layout = h("section", { "aria-label": "layout" });
  const round = h("section", { "aria-label": "the game's round" });
  const mine = h("section", { "aria-label": "my bets" });
  const results = h("section", { "aria-label": "my results" });
  // On a phone the table being played comes first; the other tables at the foot.
  if (tableId) fill(main, balance, state, layout, round, mine, results, tables);
  else fill(main, balance, tables, state);
  main.classList.add("player");

  fill(balance, h("h2", {}, "Balance"), h("p", { class: "figure", id: "balance" }, "–"));
  if (player) {
    conn.watch({ view: "bankroll", player }, (data) => {
      document.getElementById("balance").textContent = data ? money(data.balance) : money(0);
    });
  } else {
    fill(balance, h("p", { class: "empty" }, "this token has no player account: it may watch, not bet"));
  }

  const all = await conn.get("/api/tables").catch(() => ({ tables: [] }));
  fill(tables, h("h2", {}, "Tables"), h("div", { class: "row" }, all.tables.map((t) =>
    h("a", { class: t.table === tableId ? "button chosen" : "button", href: `player.html?table=${encodeURIComponent(t.table)}`,
      "aria-current": t.table === tableId ? "page" : null }, t.table))));
  if (!tableId) {
    fill(state, h("p", { class: "empty" }, "choose a table"));
    return;
  }
  const ctx = new TableContext(conn, tableId);
  const reply = await followTable(ctx);
  if (!reply.ok) {
    fill(state, h("p", { role: "alert" }, `${reply.error.code}: ${reply.error.message}`));
    return;
  }
  document.getElementById("title").textContent = tableId;
  const game = await gameModule(ctx.view.game);
  const amount = h("input", { id: "stake", "data-k": "stake", inputmode: "decimal", value: "1.00", size: 6 });
  amount.addEventListener("input", () => { ctx.amount = cents(amount.value) ?? 0; markChip(); });
  // Quick stakes: a tap sets the stake field (what a tap on the layout then places).
  const chips = h("div", { class: "row chips", role: "group", "aria-label": "quick stakes" },
    [25, 100, 200, 500].map((c) => h("button", { class: "chip", "data-k": `chip-${c}`, "aria-pressed": "false", dataset: { cents: c }, onclick: () => {
      amount.value = (c / 100).toFixed(2);
      ctx.amount = c;
      markChip();
    } }, money(c))));
  function markChip() {
    for (const b of chips.children) b.setAttribute("aria-pressed", Number(b.dataset.cents) === ctx.amount ? "true" : "false");
  }
  markChip();
  let shape = null;

  function draw() {
    const v = ctx.view;
    redraw(state, () => [
      h("h2", {}, `${v.table} · ${v.game.replace(/_/g, " ")}`),
      h("p", { class: `figure phase ${v.phase}`, id: "phase" }, v.closed ? "closed" : { betting: "place your bets", idle: "waiting for the next round" }[v.phase] || v.phase.replace(/_/g, " ")),
      h("p", { class: "muted" }, `round ${v.round ?? "–"}`,
        v.last_outcome !== undefined && v.last_outcome !== null ? ` · last: ${v.last_outcome}` : ""),
      lastSettlement(ctx, game, player),
    ]);
    const k = game.key(v);
    if (k !== shape) {
      shape = k;
      redraw(layout, () => [h("h2", {}, "Bet"),
        h("div", { class: "row" }, h("div", {}, h("label", { for: "stake" }, "stake ($)"), amount), chips),
        v.phase === "betting" && !v.closed ? game.layout(ctx) : h("p", { class: "empty" }, "bets open with the next round")]);
    }
    const own = game.round(ctx);
    round.hidden = own === null;
    if (own !== null) redraw(round, () => own);
    const bets = (v.bets || []).filter((b) => b.player === player);
    redraw(mine, () => [h("h2", {}, "My bets"),
      bets.length ? h("ul", { class: "my-bets" }, bets.map((b) => h("li", {}, `${game.describeBet(b.bet, v.config)} · ${money(b.amount)} `,
        v.phase === "betting" ? h("button", { "data-k": `cancel-${b.bet_id}`, "aria-label": `cancel ${game.describeBet(b.bet, v.config)}`,
          onclick: () => ctx.send("cancel_bet", { bet_id: b.bet_id }, "bet cancelled") }, "Cancel") : null)))
        : h("p", { class: "empty" }, "no bet in this round")]);
    redraw(results, () => [h("h2", {}, "My results"),
      settlementTable(settlements(ctx, player), settledBet(ctx, game), { label: "my results" })]);
  }
  ctx.listeners.add(draw);
  draw();
}

if (conn) page(new URLSearchParams(location.search).get("table"));
