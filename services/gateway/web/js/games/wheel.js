// The wheel games (docs/PROTOCOL.md "Wheel games"): Big Six, Big Nine, Money, Color,
// Horse Race, Fruit, Card and Merchandise wheels. The table's config holds its sections in
// wheel order (`sections[i].shows`); a bet is `{"space": name}`, an outcome `{"section": i}`.

import { h, money, notify } from "../ui.js";

const COLOUR_NAMES = new Set(["red", "black", "blue", "gold", "yellow", "green", "purple", "orange", "white", "silver", "pink"]);

function sections(config) {
  return (config && config.sections) || [];
}

function showsOf(section) {
  return Array.isArray(section) ? section : section.shows || [];
}

/** The betting spaces, in the order the wheel first shows them. */
export function spaces(config) {
  const seen = [];
  for (const s of sections(config)) for (const name of showsOf(s)) if (!seen.includes(name)) seen.push(name);
  return seen;
}

function sectionText(config, i) {
  const s = sections(config)[i];
  if (!s) return `section ${i}`;
  let text = showsOf(s).join("-");
  if (s.odds) text += ` (${s.odds[0]} to ${s.odds[1]})`;
  if (s.prize) text += ` · ${s.prize} prize`;
  return text;
}

function spaceClass(name) {
  const lower = String(name).toLowerCase();
  return COLOUR_NAMES.has(lower) ? `space colour-${lower}` : "space";
}

export function describeBet(bet) {
  return bet && bet.space !== undefined ? `on ${bet.space}` : JSON.stringify(bet);
}

export function describeOutcome(outcome, config) {
  if (!outcome || outcome.section === undefined) return JSON.stringify(outcome);
  return `section ${outcome.section}: ${sectionText(config, outcome.section)}`;
}

export function key(view) {
  return `${view.phase}|${view.round}|${view.closed}`;
}

function oddsText(config, name) {
  const odds = config.odds && config.odds[name];
  if (!odds) return "";
  return Array.isArray(odds) ? ` · ${odds[0]} to ${odds[1]}` : ` · ${odds} to 1`;
}

/** One button per betting space. */
export function layout(ctx) {
  const config = ctx.view.config;
  const merchandise = ctx.view.game === "merchandise_wheel";
  return h("div", { class: "wheel-layout" },
    h("p", { class: "muted" }, `bets ${money(config.min_bet)}-${money(config.max_bet)}`,
      merchandise ? " · prizes are merchandise, never cash" : ""),
    h("div", { class: "spaces", role: "group", "aria-label": "betting spaces" },
      spaces(config).map((name) => h("button", {
        class: spaceClass(name), "data-k": `space-${name}`,
        onclick: () => ctx.bet({ space: name }),
      }, `${name}${oddsText(config, name)}`))));
}

/** A merchandise wheel's settlement reply: each award as a notice, and the wheel closing. */
function noteAwards(reply) {
  if (!reply.ok) return;
  for (const a of reply.result.awards || []) notify(`${a.player} wins ${a.item} (${a.prize}, ${money(a.value)})`);
  if (reply.result.closed === "prize_limit") notify("the wheel reached its aggregate prize limit: it is closed", "error");
}

/** The dealer's wheel: its sections by index, tap where the indicator rests, then record. */
export function outcomeEntry(ctx) {
  const v = ctx.view;
  if (v.outcome_mode === "rng") {
    return h("button", { class: "primary big", "data-k": "draw", onclick: () => ctx.send("draw_outcome", {}, "outcome drawn").then(noteAwards) }, "Spin: draw the section");
  }
  let chosen = null;
  const confirm = h("button", { class: "primary big", "data-k": "record", disabled: true }, "Record the section");
  const buttons = sections(v.config).map((s, i) => h("button", {
    class: `section ${spaceClass(showsOf(s)[0])}`, "data-k": `section-${i}`, "aria-pressed": "false",
    "aria-label": `section ${i}: ${sectionText(v.config, i)}`,
    onclick: (e) => {
      chosen = i;
      for (const b of buttons) b.setAttribute("aria-pressed", b === e.currentTarget ? "true" : "false");
      confirm.disabled = false;
      confirm.textContent = `Record section ${i}: ${sectionText(v.config, i)}`;
    },
  }, h("span", { class: "index" }, i), " ", showsOf(s).join("-"),
  s.odds ? h("span", { class: "odds" }, ` ${s.odds[0]}:${s.odds[1]}`) : null,
  s.prize ? h("span", { class: "odds" }, ` ${s.prize}`) : null));
  confirm.addEventListener("click", () => {
    if (chosen === null) { notify("tap the section first", "error"); return; }
    ctx.send("record_outcome", { outcome: { section: chosen } }, `recorded section ${chosen}`).then(noteAwards);
  });
  return h("div", {},
    h("div", { class: "sections", role: "group", "aria-label": "the wheel's sections, by index" }, buttons),
    h("div", { class: "row" }, confirm));
}

/** At a merchandise wheel: the shelf, the prize limit and the awards this page saw. */
export function round(ctx) {
  const v = ctx.view;
  if (v.game !== "merchandise_wheel") return null;
  const awards = ctx.events.filter((ev) => ev.type === "MerchandiseAwarded").map((ev) => ev.data).reverse();
  const mine = ctx.isDealer ? awards : awards.filter((a) => a.player === ctx.player);
  const prizes = v.prizes || {};
  return h("div", {},
    h("h2", {}, "Prizes"),
    prizes.limit !== undefined
      ? h("p", {}, `awarded ${money(prizes.aggregate)} of ${money(prizes.limit)} · on the shelf: `,
        Object.entries(prizes.on_shelf || {}).map(([c, n]) => `${c} ${n}`).join(", ") || "nothing")
      : null,
    mine.length
      ? h("table", { "aria-label": "awards" },
        h("thead", {}, h("tr", {}, h("th", {}, "round"), h("th", {}, "player"), h("th", {}, "item"), h("th", {}, "prize"), h("th", { class: "num" }, "value"))),
        h("tbody", {}, mine.slice(0, 30).map((a) => h("tr", {},
          h("td", {}, a.round), h("td", {}, a.player), h("td", {}, a.item), h("td", {}, a.prize), h("td", { class: "num" }, money(a.value))))))
      : h("p", { class: "empty" }, "no award yet"));
}
