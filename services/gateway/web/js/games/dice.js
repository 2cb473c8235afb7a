// The dice games of one roll (docs/PROTOCOL.md "Dice games of one roll"): Chuck-A-Luck,
// Hazard, Under and Over Seven. Bets as the layout shows them; the dealer enters the faces
// as they lie (one picker per die) and who threw, or draws them in RNG mode.

import { h, money, notify } from "../ui.js";

export const FACES = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];

const THROWERS = {
  chuck_a_luck: ["cage", "dealer"],
  hazard: ["cage", "dealer"],
  under_and_over_seven: ["dealer", "player", "cage"],
  over_and_under_seven: ["dealer", "player", "cage"],
};

function diceCount(game) {
  return game === "under_and_over_seven" || game === "over_and_under_seven" ? 2 : 3;
}

export function face(n) {
  return FACES[n - 1] || String(n);
}

/** Pickers for `count` dice, six face buttons each; `state.dice[i]` is die i's face (or
 * null) and survives a redraw. `onChange` is called after each tap. */
export function dicePicker(state, count, onChange = () => {}, prefix = "die") {
  while (state.dice.length < count) state.dice.push(null);
  return h("div", { class: "dice-pickers" }, Array.from({ length: count }, (_, i) =>
    h("div", { class: "die-picker", role: "group", "aria-label": `die ${i + 1}` },
      h("span", { class: "muted" }, `die ${i + 1}`),
      [1, 2, 3, 4, 5, 6].map((f) => h("button", {
        class: "die-face", "data-k": `${prefix}-${i}-${f}`, "aria-pressed": state.dice[i] === f ? "true" : "false",
        "aria-label": `die ${i + 1}: ${f}`, title: String(f),
        onclick: (e) => {
          state.dice[i] = f;
          for (const b of e.currentTarget.parentElement.querySelectorAll("button")) {
            b.setAttribute("aria-pressed", b === e.currentTarget ? "true" : "false");
          }
          onChange(state);
        },
      }, h("span", { class: "die", "aria-hidden": "true" }, face(f)))))));
}

/** Who threw: a select of the values the roll takes, the first one the default. */
export function throwerSelect(state, values, id = "thrown-by") {
  if (!values.includes(state.thrown_by)) state.thrown_by = values[0];
  const select = h("select", { id, "data-k": id },
    values.map((t) => h("option", { value: t, selected: t === state.thrown_by }, t)));
  select.addEventListener("change", () => { state.thrown_by = select.value; });
  return h("div", {}, h("label", { for: id }, "thrown by"), select);
}

const HAZARD_NUMBER_ODDS = { 4: 59, 17: 59, 5: 29, 16: 29, 6: 17, 15: 17, 7: 11, 14: 11, 8: 7, 13: 7 };

export function describeBet(bet) {
  if (!bet || typeof bet !== "object") return String(bet);
  if (bet.space) return { under_7: "under 7", seven: "7", over_7: "over 7" }[bet.space] || bet.space;
  if (bet.kind === undefined && bet.number !== undefined) return `number ${bet.number} ${face(bet.number)}`;
  switch (bet.kind) {
    case "specific_triple": return `raffle: triple ${bet.face} ${face(bet.face).repeat(3)}`;
    case "any_triple": return "any triple";
    case "number": return `total ${bet.total}`;
    case "chuck": return `chuck ${bet.number} ${face(bet.number)}`;
    default: return String(bet.kind);
  }
}

export function describeOutcome(outcome) {
  if (!outcome || !Array.isArray(outcome.dice)) return JSON.stringify(outcome);
  const total = outcome.total ?? outcome.dice.reduce((a, b) => a + b, 0);
  const by = outcome.thrown_by ? `, thrown by ${outcome.thrown_by}` : "";
  return `${outcome.dice.map(face).join(" ")} (${outcome.dice.join("-")}, total ${total}${by})`;
}

export function key(view) {
  return `${view.phase}|${view.round}|${view.closed}`;
}

export function round() {
  return null;
}

function betButton(ctx, bet, label, extra = {}) {
  const k = Object.values(bet).join("-");
  return h("button", { "data-k": `bet-${k}`, onclick: () => ctx.bet(bet), ...extra }, label);
}

function faceLabel(n, text) {
  return [h("span", { class: "die", "aria-hidden": "true" }, face(n)), " ", text];
}

export function layout(ctx) {
  const { game, config } = ctx.view;
  const limits = h("p", { class: "muted" }, `bets ${money(config.min_bet)}-${money(config.max_bet)}`);
  if (game === "chuck_a_luck") {
    return h("div", { class: "dice-layout" }, limits,
      h("div", { class: "faces", role: "group", "aria-label": "numbers (1, 2 or 3 to 1)" },
        [1, 2, 3, 4, 5, 6].map((n) => betButton(ctx, { number: n }, faceLabel(n, String(n)), { "aria-label": `number ${n}` }))));
  }
  if (game === "hazard") {
    return h("div", { class: "dice-layout" }, limits,
      h("h3", {}, "Raffle: a specific triple · 180 to 1 (at most $1.50)"),
      h("div", { class: "faces", role: "group", "aria-label": "raffle" },
        [1, 2, 3, 4, 5, 6].map((f) => betButton(ctx, { kind: "specific_triple", face: f }, faceLabel(f, `×3`), { "aria-label": `raffle ${f}` }))),
      h("div", { class: "row", role: "group", "aria-label": "even money and any triple" },
        betButton(ctx, { kind: "any_triple" }, "Any triple · 30 to 1"),
        betButton(ctx, { kind: "low" }, "Low 4-10"), betButton(ctx, { kind: "high" }, "High 11-17"),
        betButton(ctx, { kind: "odd" }, "Odd"), betButton(ctx, { kind: "even" }, "Even")),
      h("h3", {}, "Numbers: the total"),
      h("div", { class: "totals", role: "group", "aria-label": "totals" },
        Array.from({ length: 14 }, (_, i) => i + 4).map((t) =>
          betButton(ctx, { kind: "number", total: t }, `${t} · ${HAZARD_NUMBER_ODDS[t] ?? 5} to 1`, { "aria-label": `total ${t}` }))),
      h("h3", {}, "Chuck: a number on 1, 2 or 3 dice"),
      h("div", { class: "faces", role: "group", "aria-label": "chuck" },
        [1, 2, 3, 4, 5, 6].map((n) => betButton(ctx, { kind: "chuck", number: n }, faceLabel(n, String(n)), { "aria-label": `chuck ${n}` }))));
  }
  return h("div", { class: "dice-layout" }, limits,
    config.allow_several_spaces ? null : h("p", { class: "muted" }, "one space per player per roll"),
    h("div", { class: "row", role: "group", "aria-label": "spaces" },
      betButton(ctx, { space: "under_7" }, "Under 7 · 1 to 1"),
      betButton(ctx, { space: "seven" }, "7 · 4 to 1"),
      betButton(ctx, { space: "over_7" }, "Over 7 · 1 to 1")));
}

export function outcomeEntry(ctx) {
  const v = ctx.view;
  if (v.outcome_mode === "rng") {
    return h("button", { class: "primary big", "data-k": "draw", onclick: () => ctx.send("draw_outcome", {}, "dice rolled") }, "Roll the dice (RNG)");
  }
  const count = diceCount(v.game);
  const state = { dice: [], thrown_by: null };
  const confirm = h("button", { class: "primary big", "data-k": "record", disabled: true }, "Record the dice");
  const update = () => {
    const done = state.dice.every((d) => d !== null);
    confirm.disabled = !done;
    confirm.textContent = done ? `Record ${state.dice.map(face).join(" ")} (${state.dice.join("-")})` : "Record the dice";
  };
  confirm.addEventListener("click", () => {
    if (state.dice.some((d) => d === null)) { notify("choose every die's face first", "error"); return; }
    ctx.send("record_outcome", { outcome: { dice: [...state.dice], thrown_by: state.thrown_by } }, `recorded ${state.dice.join("-")}`);
  });
  return h("div", {}, dicePicker(state, count, update),
    h("div", { class: "row" }, throwerSelect(state, THROWERS[v.game] || ["cage", "dealer"]), confirm));
}
