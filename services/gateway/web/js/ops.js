// The ops dashboard (`ops.html`, for ops and auditors): every table at a glance, the cage,
// the night's total raised and the house result over the night, the occasion's clock, the
// merchandise wheels against their limits, the raffles, the server's alerts and a ticker of
// the notable events, and the regulator's forms that are due. Everything comes from the `dashboard` view (pushed by the server at
// most four times a second) and the `log` stream followed from the view's `log_id`; the
// page sends no command (docs/CONSOLES.md, "Ops dashboard").

import { lineChart } from "./chart.js";
import { clock, fill, h, money, startPage } from "./ui.js";

const EVENTS_SHOWN = 30;   // the ticker's length
const ALERTS_SHOWN = 50;   // as many as the view carries
const CLOCK_TICK_MS = 1000;

// The events the ticker shows, each with its line.
const NOTABLE = {
  TableClosed: (ev, d) => `${tableOf(ev)} closed: ${d.reason}`,
  PrizeLimitReached: (ev, d) => `${tableOf(ev)} reached its aggregate prize limit (${money(d.aggregate)} of ${money(d.limit)})`,
  RoundVoided: (ev, d) => `${tableOf(ev)} round ${d.round} voided: ${d.reason}`,
  DrawingHeld: (ev, d) => `${nameOf(ev)}: drawing ${d.drawing} of round ${d.round} held (${d.eligible} tickets eligible)`,
  PrizeAwarded: (ev, d) => `${nameOf(ev)}: ${d.prize} prize ${money(d.amount)} to ticket ${d.serial}`,
  CardRevealed: (ev, d) => `${nameOf(ev)}: position ${d.position} is the ${d.card}`,
  ChestCarriedOver: (ev, d) => `${nameOf(ev)}: the chest (${money(d.chest)}) carries over, ${d.keys_left} keys left`,
  AnnouncementRaised: (ev, d) => `${nameOf(ev)}: announcement due (${String(d.kind).replace(/_/g, " ")})`,
  RaffleSalesClosed: (ev, d) => `${nameOf(ev)}: sales closed for round ${d.round}`,
  RaffleEnded: (ev, d) => `${nameOf(ev)} ended: ${d.reason}`,
  DealClosed: (ev, d) => `${nameOf(ev)} closed: ${d.reason} (${d.unsold} unsold)`,
};

const conn = startPage("ops", { title: "Ops dashboard", roles: ["ops", "auditor"] });
const main = document.getElementById("main");

function tableOf(ev) { return ev.stream.replace(/^table:/, ""); }
function nameOf(ev) { return ev.stream.replace(/^(raffle|deal):/, ""); }
function words(text) { return String(text ?? "–").replace(/_/g, " "); }
function minute(ms) { return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }
function holdText(hold) { return hold === null || hold === undefined ? "–" : `${(hold * 100).toFixed(1)} %`; }
function moneyClass(cents) { return cents > 0 ? "good" : cents < 0 ? "bad" : null; }

/** A figure cell: the money as text, the cents in `data-cents` (what a test or a screen
 * scraper reads), its name in `data-k`. */
function cell(k, cents, { result = false } = {}) {
  const cls = ["num", result ? moneyClass(cents) : null].filter(Boolean).join(" ");
  return h("td", { class: cls, "data-k": k, "data-cents": cents }, money(cents));
}

function section(id, title, ...extra) {
  const body = h("div", { class: "dash-body" });
  const el = h("section", { id, "aria-labelledby": `${id}-h`, class: `dash-${id}` , tabindex: "-1" },
    h("h2", { id: `${id}-h` }, title), ...extra, body);
  el.body = body;
  return el;
}

const nav = h("nav", { class: "dash-nav", "aria-label": "dashboard sections" },
  ["tables", "cage", "raised", "clock", "sheets", "raffles", "forms", "alerts", "events"].map((id) =>
    h("a", { href: `#${id}`, class: "button" }, {
      tables: "Tables", cage: "Cage", raised: "Raised", clock: "Clock", sheets: "Wheels",
      raffles: "Raffles", forms: "Forms", alerts: "Alerts", events: "Events",
    }[id])));
const tablesSec = section("tables", "Tables");
const cageSec = section("cage", "Cage");
const raisedSec = section("raised", "Raised for the cause");
const clockSec = section("clock", "Occasion");
const sheetsSec = section("sheets", "Merchandise wheels");
const rafflesSec = section("raffles", "Raffles");
const formsSec = section("forms", "Forms due");
const alertList = h("ul", { class: "dash-alert-list", role: "log", "aria-live": "polite", "aria-relevant": "additions", "aria-label": "alerts, newest first" });
const alertsSec = section("alerts", "Alerts");
alertsSec.body.append(alertList);
const eventList = h("ol", { class: "dash-event-list", "aria-label": "notable events, newest first" });
const eventsSec = section("events", "Events");
eventsSec.body.append(eventList);
eventList.append(h("li", { class: "empty" }, "no notable event since the page opened"));

let state = null;        // the last dashboard data
let offset = 0;          // server clock − this tablet's, from the last push
let following = false;
const seenEvents = new Set();
const alertItems = new Map();   // "id@at" -> its <li>, oldest first

if (conn) {
  main.classList.add("dash");
  fill(main, nav, tablesSec, cageSec, raisedSec, clockSec, sheetsSec, rafflesSec, formsSec, alertsSec, eventsSec);
  tablesSec.body.append(h("p", { class: "empty" }, "waiting for the dashboard…"));
  conn.watch({ view: "dashboard", key: "night" }, onData).then((reply) => {
    if (!reply.ok) {
      fill(tablesSec.body, h("p", { class: "empty", role: "alert" }, `${reply.error.code}: ${reply.error.message}`));
    }
  });
  setInterval(drawClock, CLOCK_TICK_MS);
}

function onData(data) {
  if (!data) return;
  state = data;
  offset = data.now - Date.now();
  if (!following) {
    // The ticker starts where the view's figures are: every later event once, resumed
    // with `since` after a lost connection (client.js).
    following = true;
    // Only the events the ticker shows: the server filters the log (PROTOCOL.md).
    conn.follow("log", data.log_id, onEvent, { types: Object.keys(NOTABLE) });
  }
  drawTables(data);
  drawCage(data);
  drawRaised(data);
  drawClock();
  drawSheets(data);
  drawRaffles(data);
  drawForms(data.reports || []);
  drawAlerts(data.alerts);
  main.dataset.logId = data.log_id;
}

function drawTables(d) {
  if (!d.tables.length) {
    fill(tablesSec.body, h("p", { class: "empty" }, "the night has no table"));
    return;
  }
  fill(tablesSec.body, h("div", { class: "dash-scroll" }, h("table", { class: "dash-grid" },
    h("caption", { class: "muted" }, "The round's bets and stake now; handle, paid out and house result over every round"),
    h("thead", {}, h("tr", {},
      ["Table", "Game", "Phase", "Round", "Bets", "Staked", "Handle", "Paid out", "House result", "Hold", "Rounds", "Last outcomes"]
        .map((t, i) => h("th", { scope: "col", class: i >= 3 && i <= 10 ? "num" : null }, t)))),
    h("tbody", {}, d.tables.map((t) => h("tr", { "data-table": t.table, class: t.closed ? "closed" : null },
      h("th", { scope: "row" }, t.table),
      h("td", {}, words(t.game), h("span", { class: "muted" }, ` · ${t.outcome_mode}`)),
      h("td", { "data-k": "phase" }, t.closed ? h("strong", { class: "bad" }, "closed") : words(t.phase)),
      h("td", { class: "num", "data-k": "round" }, t.round
        ? h("a", { href: `recall.html?${new URLSearchParams({ table: t.table, round: t.round })}`, title: "recall this round" }, t.round)
        : t.round),
      h("td", { class: "num", "data-k": "bets" }, t.bets),
      cell("staked", t.staked),
      cell("handle", t.handle),
      cell("paid_out", t.paid_out),
      cell("house_win", t.house_win, { result: true }),
      h("td", { class: "num", "data-k": "hold" }, holdText(t.hold)),
      h("td", { class: "num", "data-k": "rounds" }, t.rounds),
      h("td", { "data-k": "outcomes" }, outcomes(t)),
    ))))));
}

function outcomes(t) {
  const list = t.recent_outcomes ?? (t.last_outcome !== null && t.last_outcome !== undefined ? [t.last_outcome] : []);
  if (!list.length) return h("span", { class: "muted" }, "–");
  return list.map((o, i) => h("span", { class: i === 0 ? "dash-outcome latest" : "dash-outcome" }, words(o)));
}

/** A large figure; `result`: coloured by its sign (a house result, the total raised). */
function figure(k, label, cents, note = null, result = false) {
  return h("div", { class: "dash-figure" },
    h("div", { class: "muted" }, label),
    h("div", { class: ["figure", result ? moneyClass(cents) : null].filter(Boolean).join(" "), "data-k": k, "data-cents": cents }, money(cents)),
    note ? h("div", { class: "muted small" }, note) : null);
}

function drawCage(d) {
  const c = d.cage;
  const occ = c.occasion;
  fill(cageSec.body,
    h("div", { class: "dash-figures" },
      figure("issued", "Chips issued", c.issued),
      figure("redeemed", "Redeemed", c.redeemed),
      figure("outstanding", "Outstanding on the floor", c.outstanding)),
    occ ? h("p", { class: "muted" }, `This occasion: ${money(occ.issued)} issued, ${money(occ.redeemed)} redeemed, handle ${money(occ.handle)}, paid out ${money(occ.paid_out)}`) : null);
}

function drawRaised(d) {
  const r = d.raised;
  const points = d.house_result.points;
  fill(raisedSec.body,
    h("div", { class: "dash-figures" },
      figure("raised", "Raised so far", r.total, "before expenses: none are recorded yet", true),
      figure("raised_tables", "Tables' house result", r.tables, null, true),
      figure("raised_raffles", "Raffles' share kept", r.raffles, null, true)),
    h("figure", { class: "dash-chart" },
      lineChart(points, { label: "house result over the night", formatX: minute, formatY: money }),
      h("figcaption", { class: "muted" }, points.length
        ? `House result over the night, a point a minute: ${money(points[points.length - 1][1])} at ${minute(points[points.length - 1][0])}`
        : "House result over the night: no money moved yet")));
}

function drawClock() {
  if (!state) return;
  const o = state.occasion;
  const now = Date.now() + offset;
  const head = h("p", {}, h("strong", {}, o.name), h("span", { class: "muted" }, ` (${o.id})`), " · server time ",
    h("span", { "data-k": "now" }, clock(now)));
  if (o.starts_at === null || o.ends_at === null) {
    fill(clockSec.body, head, h("p", { class: "empty", "data-k": "window" }, "no window set: the night file gives no starts_at"));
    return;
  }
  const span = o.ends_at - o.starts_at;
  const done = Math.min(1, Math.max(0, (now - o.starts_at) / span));
  const where = now < o.starts_at ? `opens in ${duration(o.starts_at - now)}`
    : now >= o.ends_at ? "the window has ended: games are refused"
    : `${duration(o.ends_at - now)} left`;
  const bar = h("span", {});
  bar.style.width = `${(done * 100).toFixed(1)}%`;
  fill(clockSec.body, head,
    h("p", {}, `${minute(o.starts_at)} – ${minute(o.ends_at)} · `, h("strong", { "data-k": "window" }, where)),
    h("div", { class: `bar-gauge${now >= o.ends_at ? " full" : ""}`, role: "progressbar", "aria-label": "the occasion's window",
      "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": Math.round(done * 100) }, bar));
}

function duration(ms) {
  const m = Math.floor(ms / 60000);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min`;
}

function drawSheets(d) {
  if (!d.control_sheets.length) {
    fill(sheetsSec.body, h("p", { class: "empty" }, "no merchandise wheel tonight"));
    return;
  }
  fill(sheetsSec.body, d.control_sheets.map((s) => {
    const share = s.limit ? s.aggregate / s.limit : 0;
    const level = share >= 1 || s.closed === "prize_limit" ? "full" : share >= 0.8 ? "warn" : "";
    const bar = h("span", {});
    bar.style.width = `${Math.min(100, share * 100).toFixed(1)}%`;
    return h("div", { class: `dash-sheet ${level}`, "data-table": s.table },
      h("h3", {}, s.table, s.closed ? h("span", { class: "bad" }, ` · ${s.closed === "prize_limit" ? "closed at its limit" : "closed"}`) : null),
      h("p", {}, h("span", { "data-k": "aggregate", "data-cents": s.aggregate }, money(s.aggregate)), ` of ${money(s.limit)} awarded `,
        h("span", { class: "muted" }, `(${(share * 100).toFixed(0)} %, ${money(s.distance_to_limit)} to the limit, ${s.awarded} prizes)`)),
      h("div", { class: `bar-gauge ${level}`, role: "progressbar", "aria-label": `${s.table} against its aggregate prize limit`,
        "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": Math.round(Math.min(100, share * 100)) }, bar));
  }));
}

/** The forms that are or will be due, soonest first: each with its deadline, overdue ones
 * marked; its PDF is fetched with the page's token (never put in a URL). */
function drawForms(reports) {
  if (!reports.length) {
    fill(formsSec.body, h("p", { class: "empty" }, "no form due"));
    return;
  }
  fill(formsSec.body, h("table", { class: "dash-forms" },
    h("thead", {}, h("tr", {}, ["Form", "Covers", "Due", ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, reports.map((r) => h("tr", { "data-form": r.code, "data-key": r.key, class: r.overdue ? "bad" : null },
      h("th", { scope: "row" }, r.code),
      h("td", {}, r.period),
      h("td", { "data-k": "due" }, r.due, " ", h("span", { class: r.overdue ? "bad" : "muted" },
        r.overdue ? `overdue by ${-r.days_left} days` : `in ${r.days_left} days`)),
      h("td", {}, h("button", { type: "button", class: "button", "aria-label": `${r.code} ${r.key} as PDF`, onclick: () => openPdf(r.pdf) }, "PDF")))))));
}

async function openPdf(path) {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${conn.token}` } });
  if (!res.ok) return;
  window.open(URL.createObjectURL(await res.blob()), "_blank");
}

function countsTable(title, counts) {
  const keys = Object.keys(counts);
  if (!keys.length) return null;
  keys.sort((a, b) => (Number(a) - Number(b)) || a.localeCompare(b));
  return h("table", { class: "dash-counts" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, title), h("th", { scope: "col", class: "num" }, "Tickets"), h("th", { scope: "col", class: "num" }, "Sales"))),
    h("tbody", {}, keys.map((k) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "num" }, counts[k].tickets), h("td", { class: "num" }, money(counts[k].sales))))));
}

function drawRaffles(d) {
  if (!d.raffles.length) {
    fill(rafflesSec.body, h("p", { class: "empty" }, "no raffle"));
    return;
  }
  fill(rafflesSec.body, d.raffles.map((r) => {
    const status = r.ended ? "ended" : r.sales_open ? "sales open" : "sales closed";
    const byRound = r.kind === "queen_of_hearts" ? "Week" : r.kind === "treasure_chest" ? "Drawing" : "Round";
    const revealed = r.board ? Object.entries(r.board.revealed).sort((a, b) => Number(a[0]) - Number(b[0])) : null;
    return h("div", { class: "dash-raffle", "data-raffle": r.raffle },
      h("h3", {}, r.name || r.raffle, h("span", { class: "muted" }, ` · ${words(r.kind)} · ${status}`)),
      h("p", {}, `${r.tickets} tickets, ${money(r.sales)} sold · pool ${money(r.pool)} · prizes paid ${money(r.prizes_paid)} · kept ${money(r.profit_kept)}`),
      h("div", { class: "row" }, countsTable(byRound, r.rounds), countsTable("Occasion", r.occasions)),
      revealed ? h("div", {}, h("h3", {}, "Queen of Hearts board"),
        revealed.length
          ? h("p", { class: "dash-board" }, revealed.map(([pos, card]) => h("span", { class: `card${/[HD]$/.test(card) ? " red-suit" : ""}`, title: `position ${pos}` }, `${pos}: ${card}`)))
          : h("p", { class: "empty" }, "no card revealed yet")) : null,
      r.keys_in_play ? h("p", {}, h("strong", {}, "Keys in play: "), r.keys_in_play.length ? r.keys_in_play.join(", ") : "none") : null);
  }));
}

function drawAlerts(alerts) {
  if (!alerts.length && !alertItems.size) {
    if (!alertList.children.length) alertList.append(h("li", { class: "empty" }, "no alert"));
    return;
  }
  const empty = alertList.querySelector("li.empty");
  if (empty) empty.remove();
  // Oldest first, so that each new one goes on top: a screen reader hears only the new ones.
  // An alert is known by its id and time (a restarted server numbers its alerts afresh).
  for (const a of [...alerts].reverse()) {
    const key = `${a.id}@${a.at}`;
    if (alertItems.has(key)) continue;
    const item = h("li", { class: `dash-alert ${a.kind}`, "data-kind": a.kind, "data-id": a.id },
      h("span", { class: "muted" }, clock(a.at)), " ", h("strong", {}, words(a.kind)), " ", a.message);
    alertItems.set(key, item);
    alertList.prepend(item);
  }
  for (const [key, item] of alertItems) {  // the oldest first (insertion order)
    if (alertItems.size <= ALERTS_SHOWN) break;
    item.remove();
    alertItems.delete(key);
  }
}

function onEvent(ev) {
  const line = NOTABLE[ev.type];
  if (!line || seenEvents.has(ev.id)) return;
  seenEvents.add(ev.id);
  const empty = eventList.querySelector("li.empty");
  if (empty) empty.remove();
  if (seenEvents.size > 10 * EVENTS_SHOWN) seenEvents.delete(seenEvents.values().next().value);
  let text;
  try { text = line(ev, ev.data || {}); } catch { text = `${ev.type} on ${ev.stream}`; }
  eventList.prepend(h("li", { "data-type": ev.type }, h("span", { class: "muted" }, clock(ev.ts)), " ", text));
  while (eventList.children.length > EVENTS_SHOWN) eventList.lastChild.remove();
}
