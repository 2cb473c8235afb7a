// Game recall (`recall.html?table=<id>&round=<n>`, for auditors, ops, members in charge and
// a table's dealers): one round as it happened, from `GET /api/tables/{id}/rounds/{n}`
// (docs/AUDIT.md, "Game recall"): its bets, what decided it and its source, the settlement,
// and every step with who did it and when. The ops dashboard links here from each table's
// round number.

import { fill, h, money, startPage } from "./ui.js";

const READERS = ["auditor", "ops", "member_in_charge", "dealer"];
const conn = startPage("recall", { title: "Game recall", roles: READERS });
const main = document.getElementById("main");
const query = new URLSearchParams(location.search);

function words(text) { return String(text ?? "–").replace(/_/g, " "); }
// To the millisecond, 24 h, the tablet's time zone: two steps of one command differ in ms.
function when(step) {
  const time = new Date(step.ts).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return `${time}.${String(step.ts % 1000).padStart(3, "0")}`;
}
function json(value) { return JSON.stringify(value); }

function chooser(table, round) {
  const tableIn = h("input", { name: "table", value: table, required: true, "aria-label": "table", size: 14 });
  const roundIn = h("input", { name: "round", value: round, required: true, inputmode: "numeric", "aria-label": "round", size: 6 });
  return h("form", {
    class: "row",
    onsubmit: (e) => {
      e.preventDefault();
      location.search = new URLSearchParams({ table: tableIn.value.trim(), round: roundIn.value.trim() }).toString();
    },
  }, h("label", {}, "Table ", tableIn), h("label", {}, "Round ", roundIn), h("button", { type: "submit" }, "Recall"),
  h("a", { href: "ops.html" }, "dashboard"));
}

function link(table, round, text) {
  return h("a", { href: `recall.html?${new URLSearchParams({ table, round })}` }, text);
}

function betsSection(r) {
  if (!r.bets.length) return h("p", { class: "empty" }, "no bet in this round");
  return h("table", { class: "dash-grid settlement" },
    h("thead", {}, h("tr", {}, ["Bet", "Player", "Bet on", "Amount", "Placed by", "At", "Result", "Paid"]
      .map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, r.bets.map((b) => h("tr", { "data-bet": b.bet_id },
      h("th", { scope: "row" }, b.bet_id),
      h("td", {}, b.player),
      h("td", {}, json(b.bet), b.wagers.map((w) => h("div", { class: "muted" }, `+ ${words(w.kind)} ${money(w.amount)}`))),
      h("td", { class: "num" }, money(b.amount)),
      h("td", {}, b.placed.actor),
      h("td", {}, when(b.placed)),
      h("td", { "data-k": "result" }, b.cancelled ? `cancelled by ${b.cancelled.actor}`
        : b.settlement.map((s) => words(s.result)).join(", ") || "unsettled"),
      h("td", { class: "num" }, money(b.settlement.reduce((sum, s) => sum + s.paid, 0))),
    ))));
}

function stepsSection(r) {
  return h("table", { class: "dash-grid settlement" },
    h("thead", {}, h("tr", {}, ["Seq", "Time", "Who", "Event", "Data"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, r.steps.map((s) => h("tr", { "data-seq": s.seq, class: s.after_end ? "closed" : null },
      h("td", { class: "num" }, s.seq),
      h("td", {}, when(s)),
      h("td", {}, s.actor),
      h("th", { scope: "row" }, s.type),
      h("td", {}, h("code", {}, json(s.data))),
    ))));
}

function draw(r) {
  const s = r.settlement;
  fill(main,
    chooser(r.table, r.round),
    h("section", { "aria-label": "round" },
      h("h2", { id: "round-head" }, `${r.table} · round ${r.round} · ${words(r.status)}`),
      h("p", {}, `${words(r.game)} · ${r.outcome_mode} mode · events ${r.first_seq}–${r.last_seq}`,
        r.complete ? null : h("strong", { class: "bad" }, " · cut short")),
      r.voided ? h("p", { class: "bad" }, `voided by ${r.voided.actor} at ${when(r.voided)}: ${r.voided.reason}`) : null,
      h("p", { id: "round-money" }, `wagered ${money(s.wagered)} · paid ${money(s.paid)} · house ${money(s.wagered - s.paid)}`),
      h("p", {}, r.round > 1 ? link(r.table, r.round - 1, "← previous round") : null, " ",
        link(r.table, r.round + 1, "next round →"))),
    h("section", { "aria-label": "bets" }, h("h2", {}, "Bets"), betsSection(r)),
    h("section", { "aria-label": "outcome" }, h("h2", {}, "Outcome"),
      r.outcomes.length
        ? h("ul", {}, r.outcomes.map((o) => h("li", {}, `seq ${o.seq} · ${json(o.outcome)} · source ${o.source} · by ${o.actor} at ${when(o)}`)))
        : h("p", { class: "empty" }, "no outcome yet")),
    h("section", { "aria-label": "steps" }, h("h2", {}, "Every step"), stepsSection(r)));
}

async function show(table, round) {
  fill(main, chooser(table, round), h("p", { class: "empty" }, "reading the round…"));
  try {
    draw(await conn.get(`/api/tables/${encodeURIComponent(table)}/rounds/${encodeURIComponent(round)}`));
  } catch (e) {
    fill(main, chooser(table, round), h("p", { class: "empty", role: "alert" }, `${e.code}: ${e.message}`));
  }
}

if (conn) {
  const table = query.get("table") || "";
  const round = query.get("round") || "";
  if (table && round) show(table, round);
  else fill(main, chooser(table, round));
}
