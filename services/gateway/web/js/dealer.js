// The dealer console: one page per table (`dealer.html?table=<id>`). Open a round, call no
// more bets, enter the outcome on a picture of the device (or draw it in RNG mode), run the
// game's own round, place or cancel a bet for a player, and see the settlement.

import { cents, fill, h, money, startPage } from "./ui.js";
import {
  TableContext, betsTable, followTable, gameModule, lastSettlement, redraw, settledBet, settlements, settlementTable,
} from "./table.js";

const conn = startPage("dealer", { title: "Dealer console", roles: ["dealer"] });
const main = document.getElementById("main");

function chooser() {
  const tables = conn.claims.tables || [];
  fill(main, h("section", {},
    h("h2", {}, "Your tables"),
    tables.length
      ? h("ul", {}, tables.map((t) => h("li", {}, h("a", { href: `dealer.html?table=${encodeURIComponent(t)}` }, t))))
      : h("p", { class: "empty" }, "this token names no table")));
}

async function console_(tableId) {
  const ctx = new TableContext(conn, tableId);
  ctx.player = "";
  document.getElementById("title").textContent = `Dealer · ${tableId}`;
  const head = h("section", { "aria-label": "table" });
  const controls = h("section", { "aria-label": "round controls" });
  const device = h("section", { "aria-label": "outcome" });
  const round = h("section", { "aria-label": "the game's round" });
  const betting = h("section", { "aria-label": "bet for a player" });
  const bets = h("section", { "aria-label": "bets of the round" });
  const settled = h("section", { "aria-label": "settlement" });
  fill(main, head, controls, device, round, betting, bets, settled);
  main.classList.add("wide");

  const reply = await followTable(ctx);
  if (!reply.ok) {
    fill(main, h("p", { class: "empty", role: "alert" }, `${reply.error.code}: ${reply.error.message}`));
    return;
  }
  const game = await gameModule(ctx.view.game);
  let shape = null;

  const players = h("datalist", { id: "known-players" });
  const playerInput = h("input", { id: "bet-player", "data-k": "bet-player", autocomplete: "off", placeholder: "p-1", list: "known-players" });
  playerInput.addEventListener("input", () => { ctx.player = playerInput.value.trim(); });
  const amountInput = h("input", { id: "bet-amount", "data-k": "bet-amount", inputmode: "decimal", value: "1.00", size: 6 });
  amountInput.addEventListener("input", () => { ctx.amount = cents(amountInput.value) ?? 0; });
  // Optional in a game module (js/games/generic.js): `entersOutcome = false` when the
  // game's round panel takes the outcome (rolls, cards) and there is no device to tap.
  const entersOutcome = game.entersOutcome !== false;
  device.hidden = !entersOutcome;

  function draw() {
    const v = ctx.view;
    redraw(head, () => [
      h("h2", {}, `${v.table} · ${v.game.replace(/_/g, " ")}`),
      h("p", {}, h("strong", { id: "phase", class: `phase ${v.phase}` }, v.closed ? "closed" : v.phase.replace(/_/g, " ")),
        ` · round ${v.round ?? "–"} · ${v.outcome_mode} mode`),
      v.recent_outcomes && v.recent_outcomes.length
        ? h("p", { class: "muted" }, "last outcomes: ", v.recent_outcomes.slice(0, 10).join(" · "))
        : null,
    ]);
    redraw(controls, () => [
      h("h2", {}, "Round"),
      h("div", { class: "row" },
        h("button", { class: "primary", "data-k": "open", disabled: v.closed || v.phase !== "idle",
          onclick: () => ctx.send("open_round", {}, "round open") }, "Open round"),
        h("button", { class: "primary", "data-k": "nmb", disabled: v.phase !== "betting",
          onclick: () => ctx.send("no_more_bets", {}, "no more bets") }, "No more bets"),
        h("button", { class: "danger", "data-k": "close", disabled: v.closed || v.phase !== "idle",
          onclick: () => { if (confirm(`Close ${v.table} for the night?`)) ctx.send("close_table", {}, "table closed"); } }, "Close table")),
    ]);
    const k = game.key(v);
    if (k !== shape) {
      shape = k;
      if (entersOutcome) {
        const entry = v.phase === "no_more_bets" && !v.closed ? game.outcomeEntry(ctx) : h("p", { class: "empty" }, "after no more bets");
        device.hidden = entry === null;
        redraw(device, () => [h("h2", {}, v.outcome_mode === "rng" ? "Outcome (RNG)" : "Outcome"), entry]);
      }
      redraw(betting, () => [h("h2", {}, "Bet for a player"),
        h("div", { class: "row" },
          h("div", {}, h("label", { for: "bet-player" }, "player"), playerInput, players),
          h("div", {}, h("label", { for: "bet-amount" }, "stake ($)"), amountInput)),
        v.phase === "betting" && !v.closed ? game.layout(ctx) : h("p", { class: "empty" }, "bets open with the round")]);
    }
    const seen = new Set([...ctx.known.values()].map((b) => b.player));
    if (seen.size !== players.children.length) fill(players, [...seen].sort().map((p) => h("option", { value: p })));
    const own = game.round(ctx);
    round.hidden = own === null;
    if (own !== null) redraw(round, () => own);
    const total = (v.bets || []).reduce((n, b) => n + b.amount, 0);
    redraw(bets, () => [h("h2", {}, `Bets of round ${v.round ?? "–"}`),
      (v.bets || []).length ? h("p", { class: "muted", id: "bets-total" }, `${v.bets.length} ${v.bets.length === 1 ? "bet" : "bets"} · ${money(total)} staked`) : null,
      betsTable(ctx, (b) => game.describeBet(b, v.config), { cancel: v.phase === "betting" })]);
    redraw(settled, () => [h("h2", {}, "Settlement"), lastSettlement(ctx, game),
      settlementTable(settlements(ctx), settledBet(ctx, game))]);
  }
  ctx.listeners.add(draw);
  draw();
}

if (conn) {
  const table = new URLSearchParams(location.search).get("table");
  if (table) console_(table); else chooser();
}
