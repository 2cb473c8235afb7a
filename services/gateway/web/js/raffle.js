// The raffle console, for sellers and the member in charge: every raffle's figures live
// (the `raffle` view and the raffle's stream), door sales (seller), and the drawing steps
// (member in charge): the drawing method, closing sales, holding a drawing, a Queen of
// Hearts winner's pick on the board, a Treasure Chest winner's key on the lock.

import { fill, h, money, notify, report, startPage } from "./ui.js";
import { redraw } from "./table.js";
import { RaffleFeed, cardName, fiftyFiftyPrize, kindName, raffleIds, redCard, roundName } from "./raffle_feed.js";

const BOARD_POSITIONS = 54;  // a Queen of Hearts board: 52 cards and two jokers, 4620.23(a)

const conn = startPage("raffle", { title: "Raffle console", roles: ["seller", "member_in_charge"] });
const main = document.getElementById("main");
const seller = conn && conn.role === "seller";
const member = conn && conn.role === "member_in_charge";

/** Whole serials typed as "3, 7 12": a list of numbers, or null when something else is there. */
function serialList(text) {
  const parts = String(text).split(/[\s,]+/).filter(Boolean);
  if (!parts.every((p) => /^\d{1,10}$/.test(p))) return null;
  return parts.map(Number);
}

/** One raffle's panel: its figures, the commands this token may send, what happened. */
class RafflePanel {
  constructor(feed) {
    this.feed = feed;
    this.id = feed.id;
    const k = (name) => `${this.id}-${name}`;
    this.el = h("section", { class: "raffle-panel", "aria-label": this.id, dataset: { raffle: this.id } });
    // Inputs live across redraws, so that what is typed stays.
    this.count = h("input", { id: k("count"), "data-k": k("count"), inputmode: "numeric", value: "1", size: 4 });
    this.serial = h("input", { id: k("serial"), "data-k": k("serial"), inputmode: "numeric", size: 6, placeholder: "next" });
    this.method = h("select", { id: k("method"), "data-k": k("method") },
      h("option", { value: "rng" }, "the server's random draw"), h("option", { value: "hand" }, "by hand from the drum"));
    this.description = h("input", { id: k("description"), "data-k": k("description"), size: 28,
      value: "drawn in plain view at the hall" });
    this.handSerials = h("input", { id: k("hand-serials"), "data-k": k("hand-serials"), size: 14, placeholder: "12, 40" });
    this.handKeys = h("input", { id: k("hand-keys"), "data-k": k("hand-keys"), size: 14, placeholder: "3, 9" });
    this.card = h("input", { id: k("card"), "data-k": k("card"), size: 5, placeholder: "QH", autocomplete: "off" });
    this.position = null;  // the position a Queen of Hearts winner chose, before the reveal
    feed.listeners.add(() => this.draw());
  }

  async send(op, fields, done) {
    const reply = await conn.send(op, { raffle: this.id, ...fields });
    report(reply, typeof done === "function" ? (reply.ok ? done(reply.result) : null) : done);
    return reply;
  }

  draw() {
    if (this.feed.view) redraw(this.el, () => this.parts());
  }

  parts() {
    const v = this.feed.view;
    return [
      h("h2", {}, `${v.name || v.raffle}`, h("span", { class: "muted" }, ` · ${kindName(v.kind)}`)),
      this.figures(v),
      seller ? this.doorSale(v) : null,
      member ? this.drawingSteps(v) : null,
      v.kind === "queen_of_hearts" ? this.board(v) : null,
      v.kind === "treasure_chest" ? this.keys(v) : null,
      this.happenings(v),
    ];
  }

  figures(v) {
    const state = v.ended ? "ended" : v.sales_open ? "sales open" : "sales closed";
    const dl = [
      ["price", money(v.price), "price"],
      ["tickets sold", String(v.tickets), "tickets"],
      ["sales", money(v.sales), "sales"],
    ];
    if (v.kind === "fifty_fifty") dl.push(["prize if drawn now", money(fiftyFiftyPrize(v.sales, this.feed.config)), "prize"]);
    if (v.kind === "queen_of_hearts") dl.push(["grand prize pool", money(v.pool), "pool"]);
    if (v.kind === "treasure_chest") {
      const now = v.rounds[String(v.round)];
      dl.push(["chest", money(v.pool), "pool"], ["this occasion's sales", money(now ? now.sales : 0), "round-sales"]);
    }
    dl.push(["prizes paid", money(v.prizes_paid), "prizes-paid"], ["drawings", String(v.drawings), "drawings"]);
    const round = roundName(v);
    return h("div", {},
      h("p", {}, h("strong", { class: v.sales_open ? "good" : "bad", "data-figure": "state" }, state),
        round ? ` · ${round}` : "", ` · drawing method: ${v.method || "not recorded"}`),
      h("dl", { class: "raffle-figures" }, dl.map(([label, value, key]) =>
        h("div", {}, h("dt", {}, label), h("dd", { "data-figure": key }, value)))));
  }

  doorSale(v) {
    if (v.ended || !v.sales_open) return h("p", { class: "empty" }, "no sales now");
    const k = (name) => `${this.id}-${name}`;
    const sell = (count, amount) => {
      const serial = this.serial.value.trim();
      if (serial && !/^\d{1,10}$/.test(serial)) {
        notify("the first serial is the number printed on the ticket, or empty for the next", "error");
        return;
      }
      const fields = { count, amount };
      if (serial) fields.serial = Number(serial);
      this.send("sell_ticket", fields, (r) => {
        this.serial.value = "";
        const s = r.serials;
        return `${v.name}: sold ${s.length === 1 ? `ticket #${s[0]}` : `tickets #${s[0]}–#${s[s.length - 1]}`} for ${money(r.amount)}`;
      });
    };
    const single = () => {
      const n = Number(this.count.value);
      if (!Number.isInteger(n) || n < 1) {
        notify("how many tickets: a whole number from 1", "error");
        return;
      }
      sell(n, n * v.price);
    };
    const bundles = (this.feed.config && this.feed.config.bundles) || [];
    return h("div", { class: "raffle-sale" },
      h("h3", {}, "Sell at the door"),
      h("div", { class: "row" },
        h("div", {}, h("label", { for: k("count") }, "tickets"), this.count),
        h("div", {}, h("label", { for: k("serial") }, "first serial (printed)"), this.serial),
        h("button", { class: "primary", "data-k": k("sell"), onclick: single }, `Sell at ${money(v.price)} each`),
        bundles.map((b) => h("button", { "data-k": k(`book-${b.tickets}`), onclick: () => sell(b.tickets, b.price) },
          `Sell a book: ${b.tickets} for ${money(b.price)}`))));
  }

  drawingSteps(v) {
    if (v.ended) return null;
    const k = (name) => `${this.id}-${name}`;
    const hand = v.method === "hand";
    const hold = () => {
      const fields = {};
      if (hand) {
        const serials = serialList(this.handSerials.value);
        const keys = serialList(this.handKeys.value);
        if (!serials || (v.kind === "treasure_chest" && !keys)) {
          notify("type the serials drawn (and, at a Treasure Chest, the key tickets), separated by commas", "error");
          return;
        }
        fields.serials = serials;
        if (v.kind === "treasure_chest") fields.keys = keys;
      }
      this.send("hold_drawing", fields, (r) => `${v.name}: drawing ${r.drawing} held: ${r.winners.map((w) => `#${w.serial}${w.key ? ` (key ${w.key})` : ""}`).join(", ")}`)
        .then((reply) => { if (reply.ok) { this.handSerials.value = ""; this.handKeys.value = ""; } });
    };
    return h("div", { class: "raffle-steps" },
      h("h3", {}, "The drawing"),
      v.drawings === 0 ? h("div", { class: "row" },
        h("div", {}, h("label", { for: k("method") }, "drawing method"), this.method),
        h("div", {}, h("label", { for: k("description") }, "as read out to the purchasers"), this.description),
        h("button", { "data-k": k("record-method"), onclick: () => this.send("record_drawing_method",
          { method: this.method.value, description: this.description.value.trim() }, `${v.name}: drawing method recorded`) },
        "Record the method")) : null,
      h("div", { class: "row" },
        hand ? h("div", {}, h("label", { for: k("hand-serials") }, "serials drawn"), this.handSerials) : null,
        hand && v.kind === "treasure_chest" ? h("div", {}, h("label", { for: k("hand-keys") }, "key tickets drawn"), this.handKeys) : null,
        h("button", { "data-k": k("close"), disabled: !v.sales_open,
          onclick: () => this.send("close_sales", {}, `${v.name}: sales closed`) }, "Close sales"),
        h("button", { class: "primary", "data-k": k("hold"), onclick: hold }, "Hold the drawing")));
  }

  board(v) {
    const k = (name) => `${this.id}-${name}`;
    const revealed = v.board ? v.board.revealed : {};
    const waiting = this.feed.waiting();
    const picking = member && waiting.length > 0;
    const physical = v.board && v.board.mode === "physical";
    if (this.position && revealed[String(this.position)]) this.position = null;
    const cells = [];
    for (let p = 1; p <= BOARD_POSITIONS; p++) {
      const card = revealed[String(p)];
      const face = card ? cardName(card) : String(p);
      const cls = `board-cell${card ? " revealed" : ""}${redCard(card) ? " red-suit" : ""}${card === "QH" ? " queen" : ""}`;
      cells.push(picking && !card
        ? h("button", { class: cls, "data-k": k(`pos-${p}`), "aria-label": `position ${p}`,
          "aria-pressed": this.position === p ? "true" : "false",
          onclick: () => { this.position = p; this.draw(); } }, face)
        : h("span", { class: cls, "aria-label": card ? `position ${p}: ${face}` : `position ${p}`, role: "img" }, face));
    }
    const reveal = () => {
      if (!this.position) {
        notify("choose the position the winner picked", "error");
        return;
      }
      const fields = { position: this.position };
      if (physical) {
        const card = this.card.value.trim().toUpperCase();
        if (!card) {
          notify("type the card turned up, e.g. QH, 10S, JK1", "error");
          return;
        }
        fields.card = card;
      }
      this.send("reveal_card", fields, (r) => `${v.name}: position ${r.position}: ${cardName(r.card)}${r.queen_of_hearts ? " — the Queen of Hearts!" : ""}`)
        .then((reply) => { if (reply.ok) { this.position = null; this.card.value = ""; } });
    };
    return h("div", { class: "raffle-board-part" },
      h("h3", {}, "The board"),
      waiting.length
        ? h("p", { "data-figure": "waiting" }, `ticket #${waiting[0].serial} picks a position`,
          waiting.length > 1 ? h("span", { class: "muted" }, ` (then ${waiting.slice(1).map((w) => `#${w.serial}`).join(", ")})`) : null)
        : null,
      h("div", { class: "qoh-board", role: "group", "aria-label": "the board" }, cells),
      picking ? h("div", { class: "row" },
        physical ? h("div", {}, h("label", { for: k("card") }, "card turned up"), this.card) : null,
        h("button", { class: "primary", "data-k": k("reveal"), disabled: !this.position, onclick: reveal },
          this.position ? `Reveal position ${this.position}` : "Reveal")) : null);
  }

  keys(v) {
    const pending = this.feed.keysPending();
    const inPlay = v.keys_in_play || [];
    return h("div", { class: "raffle-keys" },
      h("h3", {}, `Keys in play: `, h("span", { "data-figure": "keys-in-play" }, String(inPlay.length))),
      pending.length
        ? h("ul", { class: "key-list" }, pending.map((w) => h("li", {},
          h("span", {}, `key ${w.key} · ticket #${w.serial}`),
          member ? [
            h("button", { "data-k": `${this.id}-key-${w.key}-no`, "aria-label": `key ${w.key} did not open`,
              onclick: () => this.tryKey(v, w.key, false) }, "Did not open"),
            h("button", { class: "primary", "data-k": `${this.id}-key-${w.key}-yes`, "aria-label": `key ${w.key} opened the lock`,
              onclick: () => this.tryKey(v, w.key, true) }, "Opened"),
          ] : null)))
        : h("p", { class: "empty" }, "no key waiting to be tried"));
  }

  tryKey(v, key, opened) {
    if (opened && !confirm(`Key ${key} opened the lock: pay the chest?`)) return;
    this.send("try_key", { key, opened }, (r) => r.opened
      ? `${v.name}: key ${key} opened the chest`
      : `${v.name}: key ${key} did not open${r.chest !== undefined && r.chest !== null ? `; the chest of ${money(r.chest)} carries over` : ""}`);
  }

  happenings(v) {
    const recent = this.feed.recent;
    return h("div", { class: "raffle-results" },
      h("h3", {}, "What happened"),
      recent.length
        ? h("ul", { class: "raffle-recent", "aria-label": `what happened at ${v.name || v.raffle}` },
          recent.map((r) => h("li", { class: `happening ${r.kind}` }, r.text)))
        : h("p", { class: "empty" }, "no drawing yet"));
  }
}

async function start() {
  let ids;
  try {
    ids = await raffleIds(conn);
  } catch (e) {
    fill(main, h("p", { class: "empty", role: "alert" }, `${e.code}: ${e.message}`));
    return;
  }
  if (!ids.length) {
    fill(main, h("p", { class: "empty" }, "no raffle is set up"));
    return;
  }
  // `raffle.html?raffle=<id>`: one raffle only (a seller at one drum, the drawing's table).
  const only = new URLSearchParams(location.search).get("raffle");
  const nav = h("nav", { class: "panel raffle-nav", "aria-label": "raffles" },
    h("a", { class: only ? "button" : "button chosen", href: "raffle.html", "aria-current": only ? null : "page" }, "all raffles"),
    ids.map((id) => h("a", { class: id === only ? "button chosen" : "button", href: `raffle.html?raffle=${encodeURIComponent(id)}`,
      "aria-current": id === only ? "page" : null }, id)));
  const shown = only ? ids.filter((id) => id === only) : ids;
  main.classList.add("wide");
  const panels = shown.map((id) => new RafflePanel(new RaffleFeed(conn, id)));
  fill(main, nav, panels.length ? panels.map((p) => p.el) : h("p", { class: "empty" }, `no raffle ${only}`));
  for (const p of panels) {
    p.feed.start().then((reply) => {
      if (!reply.ok) fill(p.el, h("p", { role: "alert" }, `${p.id}: ${reply.error.code}: ${reply.error.message}`));
    });
  }
}

if (conn) start();
