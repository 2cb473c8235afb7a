// Roulette (docs/PROTOCOL.md "Roulette bets"): the layout a player taps, in the real
// colours, with only the bets the table offers (`config.offered`); the dealer's picture of
// the wheel (its pockets in wheel order) with the spun-from pocket; a Draw button in RNG mode.

import { h, money, notify } from "../ui.js";

const DOUBLE_ZERO = ("0 28 9 26 30 11 7 20 32 17 5 22 34 15 3 24 36 13 1 00 " +
  "27 10 25 29 12 8 19 31 18 6 21 33 16 4 23 35 14 2").split(" ");
const SINGLE_ZERO = ("0 32 15 19 4 21 2 25 17 34 6 27 13 36 11 30 8 23 10 5 24 16 33 1 20 14 " +
  "31 9 22 18 29 7 28 12 35 3 26").split(" ");
const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36].map(String));
const COLOURS = ["black", "blue", "gold", "red", "purple", "green"];
const SEVEN_NUMBERS = ["10", "11", "12", "13", "14", "15", "33"];

// The inside bets built from tapped numbers: how many numbers each takes.
const BUILT = [
  ["straight", 1, "Straight"], ["split", 2, "Split"], ["street", 3, "Street"],
  ["basket", 3, "Basket"], ["corner", 4, "Corner"], ["line", 6, "Line"],
];

export function wheelOf(config) {
  return config && config.wheel === "single_zero" ? SINGLE_ZERO : DOUBLE_ZERO;
}

export function colourOf(pocket) {
  if (pocket === "0" || pocket === "00") return "green";
  return RED.has(pocket) ? "red" : "black";
}

function rank(p) {
  return p === "0" ? -2 : p === "00" ? -1 : Number(p);
}

/** The colour sections of the options: six consecutive numbers of the wheel each. */
function colourSections(config) {
  const numbers = wheelOf(config).filter((p) => p !== "0" && p !== "00");
  return Object.fromEntries(COLOURS.map((c, i) => [c, numbers.slice(6 * i, 6 * i + 6)]));
}

const NAMES = {
  low: "1-18", high: "19-36", red: "red", black: "black", odd: "odd", even: "even",
  five: "five 0-00-1-2-3", seven_numbers: "seven numbers 10-15, 33",
};

export function describeBet(bet) {
  if (!bet || typeof bet !== "object") return String(bet);
  const k = bet.kind;
  if (bet.numbers && k !== "five" && k !== "seven_numbers") return `${k} ${bet.numbers.join("-")}`;
  if (k === "dozen") return `dozen ${bet.dozen} (${12 * bet.dozen - 11}-${12 * bet.dozen})`;
  if (k === "column") return `column ${bet.column}`;
  if (k === "five_adjacent") return `five adjacent around ${bet.center}`;
  if (k && k.startsWith("color_")) return `${k.replace("_", " ")} ${bet.color}`;
  return NAMES[k] || String(k);
}

export function describeOutcome(outcome) {
  if (!outcome || outcome.pocket === undefined) return JSON.stringify(outcome);
  const from = outcome.spun_from === null || outcome.spun_from === undefined ? "" : ` (spun from ${outcome.spun_from})`;
  return `${outcome.pocket} ${colourOf(outcome.pocket)}${from}`;
}

export function key(view) {
  return `${view.phase}|${view.round}|${view.closed}|${view.last_outcome}`;
}

export function round() {
  return null;
}

/** The layout: numbers to tap (a selection), then the bet kind that fits the selection;
 * the outside bets and the table's options as buttons that place at once. */
export function layout(ctx) {
  const config = ctx.view.config;
  const offered = new Set(config.offered || []);
  const wheel = wheelOf(config);
  const selected = [];
  const kinds = h("div", { class: "row rl-kinds", role: "group", "aria-label": "inside bet of the numbers tapped" });
  const chosen = h("p", { class: "muted rl-chosen", "aria-live": "polite" });  // the numbers tapped
  const numberButtons = new Map();

  function place(bet) {
    return ctx.bet(bet).then((reply) => {
      if (reply && reply.ok) clear();
      return reply;
    });
  }

  function clear() {
    selected.splice(0);
    for (const b of numberButtons.values()) b.setAttribute("aria-pressed", "false");
    drawKinds();
  }

  // Only the bets the numbers tapped can make, so the bar stays one line on a phone.
  function drawKinds() {
    const sorted = [...selected].sort((a, b) => rank(a) - rank(b));
    const counts = BUILT.filter(([kind]) => offered.has(kind)).map(([, n, label]) => `${n} ${label.toLowerCase()}`);
    chosen.textContent = sorted.length ? `tapped: ${sorted.join(", ")}` : `tap numbers for an inside bet: ${counts.join(", ")}`;
    const buttons = [];
    for (const [kind, count, label] of BUILT) {
      if (!offered.has(kind) || sorted.length !== count) continue;
      buttons.push(h("button", {
        "data-k": `rl-${kind}`, class: "primary", onclick: () => place({ kind, numbers: sorted }),
      }, `${label} ${sorted.join("-")}`));
    }
    if (offered.has("five_adjacent") && sorted.length === 1) {
      buttons.push(h("button", {
        "data-k": "rl-five_adjacent", title: "five straights: the stake must be a multiple of 5",
        onclick: () => place({ kind: "five_adjacent", center: sorted[0] }),
      }, `Five around ${sorted[0]}`));
    }
    if (sorted.length && !buttons.length) buttons.push(h("span", { class: "muted" }, "no bet of that many numbers"));
    if (sorted.length) buttons.push(h("button", { "data-k": "rl-clear", onclick: clear }, "Clear"));
    kinds.replaceChildren(...buttons);
  }

  function numberButton(p) {
    const b = h("button", {
      class: `pocket ${colourOf(p)}`, "data-k": `rl-n-${p}`, "aria-pressed": "false",
      "aria-label": `${p} ${colourOf(p)}`,
      onclick: () => {
        const i = selected.indexOf(p);
        if (i >= 0) selected.splice(i, 1); else selected.push(p);
        b.setAttribute("aria-pressed", i >= 0 ? "false" : "true");
        drawKinds();
      },
    }, p);
    numberButtons.set(p, b);
    return b;
  }

  const zeros = wheel.includes("00") ? ["0", "00"] : ["0"];
  const grid = h("div", { class: "rl-grid", role: "group", "aria-label": "numbers" },
    h("div", { class: `rl-zeros rl-zeros-${zeros.length}` }, zeros.map(numberButton)),
    Array.from({ length: 12 }, (_, r) => [1, 2, 3].map((c) => numberButton(String(3 * r + c)))));

  const outside = (kind, label, extra = {}, cls = "") => offered.has(kind)
    ? h("button", { "data-k": `rl-${kind}-${Object.values(extra).join("-")}`, class: cls,
      onclick: () => place({ kind, ...extra }) }, label)
    : null;

  const columns = offered.has("column")
    ? h("div", { class: "rl-row3", role: "group", "aria-label": "columns" },
      [1, 2, 3].map((c) => outside("column", `Column ${c} · 2 to 1`, { column: c })))
    : null;
  const dozens = offered.has("dozen")
    ? h("div", { class: "rl-row3", role: "group", "aria-label": "dozens" },
      [1, 2, 3].map((d) => outside("dozen", `${12 * d - 11}-${12 * d}`, { dozen: d })))
    : null;
  const evens = h("div", { class: "rl-row3", role: "group", "aria-label": "even money" },
    outside("low", "1-18"), outside("even", "Even"), outside("red", "Red", {}, "pocket red"),
    outside("black", "Black", {}, "pocket black"), outside("odd", "Odd"), outside("high", "19-36"));

  const specials = [];
  if (offered.has("five")) specials.push(outside("five", "Five · 0-00-1-2-3"));
  if (offered.has("seven_numbers")) specials.push(outside("seven_numbers", `Seven numbers · ${SEVEN_NUMBERS.join(" ")}`));
  const sections = colourSections(config);
  for (const kind of ["color_six", "color_seven", "color_eight"]) {
    if (!offered.has(kind)) continue;
    const extra = kind === "color_six" ? "" : kind === "color_seven" ? " + 0" : " + 0, 00";
    specials.push(h("div", { class: "rl-row3", role: "group", "aria-label": kind.replace("_", " ") },
      COLOURS.map((c) => h("button", {
        "data-k": `rl-${kind}-${c}`, class: `colour-${c}`, title: sections[c].join(" ") + extra,
        onclick: () => place({ kind, color: c }),
      }, `${c}`))));
  }
  drawKinds();
  return h("div", { class: "roulette" },
    h("p", { class: "muted" }, `inside ${money(config.min_bet)}-${money(config.max_inside)} · outside up to ${money(config.max_outside)}`),
    grid, h("div", { class: "rl-pick" }, chosen, kinds), columns, dozens, evens,
    specials.length ? h("div", { class: "rl-specials" }, h("h3", {}, "Table options"), specials) : null);
}

/** The dealer's wheel: tap the winning pocket; the spun-from pocket is preset to the
 * previous winning pocket (required after the table's first spin, 4620.4(c)(3)). */
export function outcomeEntry(ctx) {
  const v = ctx.view;
  if (v.outcome_mode === "rng") {
    return h("div", {},
      h("p", { class: "muted" }, "the server draws the pocket; spun from ", v.last_outcome ?? "(first spin)"),
      h("button", { class: "primary big", "data-k": "draw", onclick: () => ctx.send("draw_outcome", {}, "outcome drawn") }, "Draw the pocket"));
  }
  const wheel = wheelOf(v.config);
  let pocket = null;
  const confirm = h("button", { class: "primary big", "data-k": "record", disabled: true }, "Record the pocket");
  const from = h("select", { id: "spun-from", "data-k": "spun-from" },
    v.last_outcome === null || v.last_outcome === undefined ? h("option", { value: "" }, "none: the first spin") : null,
    wheel.map((p) => h("option", { value: p, selected: p === v.last_outcome }, p)));
  const buttons = wheel.map((p) => h("button", {
    class: `pocket ${colourOf(p)}`, "data-k": `pocket-${p}`, "aria-pressed": "false", "aria-label": `pocket ${p} ${colourOf(p)}`,
    onclick: (e) => {
      pocket = p;
      for (const b of buttons) b.setAttribute("aria-pressed", b === e.currentTarget ? "true" : "false");
      confirm.disabled = false;
      confirm.textContent = `Record ${p} ${colourOf(p)}`;
    },
  }, p));
  confirm.addEventListener("click", () => {
    if (pocket === null) { notify("tap the winning pocket first", "error"); return; }
    const outcome = { pocket };
    if (from.value !== "") outcome.spun_from = from.value;
    ctx.send("record_outcome", { outcome }, `recorded ${pocket}`);
  });
  return h("div", {},
    h("div", { class: "pockets wheel", role: "group", "aria-label": "the wheel's pockets, in wheel order" }, buttons),
    h("div", { class: "row" }, h("div", {}, h("label", { for: "spun-from" }, "spun from"), from), confirm));
}
