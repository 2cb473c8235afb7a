// The cashier console: sell chips and cash them out for a player, the player's bankroll
// live (the `bankroll` view), the player's moves at the cage and the cage's totals (the
// `cage` stream, followed from its start and resumed with `since`).

import { cents, clock, fill, h, money, notify, report, startPage } from "./ui.js";

const HISTORY_ROWS = 50;  // the moves of a player the page lists, newest first

const conn = startPage("cashier", { title: "Cashier console", roles: ["cashier"] });
const main = document.getElementById("main");

const cage = {
  byPlayer: new Map(),   // player -> that player's cage events, in order
  issued: 0, redeemed: 0, moves: 0,
  mine: { issued: 0, redeemed: 0, moves: 0 },  // what this cashier (this token) did
};
let current = "";        // the player the console shows
let bankroll = null;     // that player's bankroll, as the view last pushed it

const playerInput = h("input", { id: "player", list: "players", autocomplete: "off", placeholder: "p-1", "aria-describedby": "player-help" });
const playerList = h("datalist", { id: "players" });
const amountInput = h("input", { id: "amount", inputmode: "decimal", autocomplete: "off", placeholder: "20.00", size: 8 });
const figures = h("section", { "aria-label": "bankroll", class: "cage-bankroll" });
const history = h("section", { "aria-label": "history" });
const totals = h("section", { "aria-label": "cage totals" });

function page() {
  const sell = h("button", { class: "primary", type: "button", onclick: () => move("buy_chips") }, "Sell chips");
  const cash = h("button", { type: "button", onclick: () => move("cash_out") }, "Cash out");
  playerInput.addEventListener("change", () => choose(playerInput.value.trim()));
  playerInput.addEventListener("keydown", (e) => { if (e.key === "Enter") choose(playerInput.value.trim()); });
  // No Enter shortcut on the amount: a cash-out must never become a sale by a key press.
  const form = h("section", { "aria-label": "sell or cash out", class: "cage-form" },
    h("h2", {}, "Chips"),
    h("div", { class: "row" },
      h("div", {}, h("label", { for: "player" }, "player"), playerInput, playerList),
      h("div", {}, h("label", { for: "amount" }, "amount ($)"), amountInput),
      sell, cash),
    h("p", { id: "player-help", class: "muted" }, "a player id (players seen at the cage are offered); the amount in dollars"));
  fill(main, form, figures, history, totals);
  main.classList.add("wide");
  drawFigures();
  drawHistory();
  drawTotals();
}

/** Show `player`: watch their bankroll (and stop watching the last one's). */
function choose(player) {
  if (player === current) return;
  if (current) conn.unwatch({ view: "bankroll", player: current });
  current = player;
  bankroll = null;
  drawFigures();
  drawHistory();
  if (!player) return;
  conn.watch({ view: "bankroll", player }, (data) => {
    if (player !== current) return;  // a late reply for the player shown before
    bankroll = data;
    drawFigures();
  }).then((reply) => { if (player === current) report(reply); });
}

async function move(op) {
  const player = playerInput.value.trim();
  if (!player) {
    notify("type the player's id first", "error");
    playerInput.focus();
    return;
  }
  choose(player);
  const amount = cents(amountInput.value);
  if (!amount) {
    notify("type an amount in dollars, e.g. 20 or 12.50", "error");
    amountInput.focus();
    return;
  }
  const reply = await conn.send(op, { player, amount });
  const verb = op === "buy_chips" ? "sold" : "cashed out";
  report(reply, `${money(amount)} ${verb} · ${player}`);
  if (reply.ok) amountInput.value = "";
}

function drawFigures() {
  if (!current) {
    fill(figures, h("h2", {}, "Balance"), h("p", { class: "empty" }, "choose a player"));
    return;
  }
  const b = bankroll;
  const row = (label, value, id) => h("tr", {}, h("th", { scope: "row" }, label), h("td", { class: "num", id }, money(value)));
  fill(figures,
    h("h2", {}, `Balance · ${current}`),
    h("p", { class: "figure", id: "balance", "aria-live": "polite" }, b ? money(b.balance) : money(0)),
    b ? null : h("p", { class: "empty" }, "no chips sold to this player yet"),
    h("table", { "aria-label": "bankroll figures" }, h("tbody", {},
      row("bought", b ? b.bought : 0, "bought"),
      row("cashed out", b ? b.redeemed : 0, "redeemed"),
      row("wagered", b ? b.wagered : 0, "wagered"),
      row("paid back", b ? b.paid : 0, "paid"),
      row("net at the tables", b ? b.net : 0, "net"))));
}

function drawHistory() {
  if (!current) {
    fill(history, h("h2", {}, "History"), h("p", { class: "empty" }, "choose a player"));
    return;
  }
  const moves = (cage.byPlayer.get(current) || []).slice(-HISTORY_ROWS).reverse();
  fill(history, h("h2", {}, `History · ${current}`),
    moves.length
      ? h("table", { "aria-label": "history" },
        h("thead", {}, h("tr", {}, h("th", {}, "time"), h("th", {}, "move"),
          h("th", { class: "num" }, "amount"), h("th", {}, "by"))),
        h("tbody", {}, moves.map((ev) => h("tr", { class: "cage-move", dataset: { seq: ev.seq } },
          h("td", {}, clock(ev.ts)),
          h("td", { class: ev.type === "ChipsIssued" ? "good" : "" }, ev.type === "ChipsIssued" ? "chips sold" : "cashed out"),
          h("td", { class: "num" }, money(ev.data.amount)),
          h("td", { class: "muted" }, ev.actor)))))
      : h("p", { class: "empty" }, "no move at the cage yet"));
}

function drawTotals() {
  const line = (label, t) => h("tr", {}, h("th", { scope: "row" }, label),
    h("td", { class: "num" }, money(t.issued)), h("td", { class: "num" }, money(t.redeemed)),
    h("td", { class: "num" }, money(t.issued - t.redeemed)), h("td", { class: "num" }, t.moves));
  fill(totals, h("h2", {}, "Cage totals"),
    h("table", { "aria-label": "cage totals" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { class: "num" }, "sold"),
        h("th", { class: "num" }, "cashed out"), h("th", { class: "num" }, "outstanding"),
        h("th", { class: "num" }, "moves"))),
      h("tbody", {}, line("the cage", cage), line("this cashier", cage.mine))),
    h("p", { class: "muted" }, `${cage.byPlayer.size} ${cage.byPlayer.size === 1 ? "player" : "players"} at the cage`));
}

function onCageEvent(ev) {
  if (ev.type !== "ChipsIssued" && ev.type !== "ChipsRedeemed") return;
  const player = ev.data.player;
  let list = cage.byPlayer.get(player);
  if (!list) {
    list = [];
    cage.byPlayer.set(player, list);
    playerList.append(h("option", { value: player }));
  }
  list.push(ev);
  if (list.length > HISTORY_ROWS * 2) list.splice(0, list.length - HISTORY_ROWS);
  const mine = ev.actor === `${conn.claims.role}:${conn.claims.sub}`;
  for (const t of mine ? [cage, cage.mine] : [cage]) {
    if (ev.type === "ChipsIssued") t.issued += ev.data.amount; else t.redeemed += ev.data.amount;
    t.moves += 1;
  }
  if (player === current) historyStale = true;
  later();
}

// A long night's cage stream comes in many frames at once: draw once after them.
let historyStale = false;
let drawing = null;
function later() {
  if (drawing) return;
  drawing = setTimeout(() => {
    drawing = null;
    if (historyStale) drawHistory();
    historyStale = false;
    drawTotals();
  }, 50);
}

if (conn) {
  page();
  conn.follow("cage", 0, onCageEvent);
  const wanted = new URLSearchParams(location.search).get("player");
  if (wanted) {
    playerInput.value = wanted;
    choose(wanted);
  }
}
