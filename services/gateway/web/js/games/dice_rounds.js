// Beat the Dealer and Bang (docs/PROTOCOL.md "Beat the Dealer and Bang"): rounds of several
// rolls. There is no single outcome to enter: the round panel holds the rolls (`roll`,
// dealer mode with the faces and who threw), Bang's seats (`seat_player`, `unseat_player`)
// and `pass_dice`, and what the game's view shows (the dealer's roll, the point, the stakes,
// the bets on the layout).

import { h, money, notify } from "../ui.js";
import { dicePicker, face, throwerSelect } from "./dice.js";

const BANG_KINDS = [
  ["field", "Field · 2-4, 9-12", "inside"],
  ["under_seven", "Under 7", "inside"],
  ["any_seven", "Any 7 · 4 to 1", "inside"],
  ["over_seven", "Over 7", "inside"],
  ["big_six", "Big 6", "inside"],
  ["big_eight", "Big 8", "inside"],
  ["hi_dice", "Hi Dice · beat the point", "outside"],
];

/** The shell draws no separate outcome entry for these games: the rolls are in `round`. */
export const entersOutcome = false;

export function describeBet(bet) {
  if (!bet || typeof bet !== "object") return String(bet);
  return String(bet.kind || JSON.stringify(bet)).replace(/_/g, " ");
}

function rollText(roll) {
  if (!roll) return "–";
  return `${roll.dice.map(face).join(" ")} ${roll.total}${roll.thrown_by ? ` (${roll.thrown_by})` : ""}`;
}

export function describeOutcome(outcome) {
  if (outcome && Array.isArray(outcome.dice)) return rollText(outcome);
  return JSON.stringify(outcome);
}

export function key(view) {
  return `${view.phase}|${view.round}|${view.closed}|${view.stage ?? ""}|${view.hi_dice_open ?? ""}`;
}

export function outcomeEntry() {
  return null;
}

export function layout(ctx) {
  const v = ctx.view;
  const limits = h("p", { class: "muted" }, `bets ${money(v.config.min_bet)}-${money(v.config.max_bet)}`);
  if (v.game === "beat_the_dealer") {
    return h("div", {}, limits, h("p", { class: "muted" }, "one bet per player: your roll must beat the dealer's"),
      h("button", { class: "primary", "data-k": "bet-btd", onclick: () => ctx.bet({ kind: "beat_the_dealer" }) }, "Beat the Dealer · even money"));
  }
  const insideOnly = v.stage === "inside_bets";
  return h("div", {}, limits,
    insideOnly ? h("p", { class: "muted" }, `point ${v.point}: inside bets only`) : null,
    h("div", { class: "row", role: "group", "aria-label": "Bang bets" },
      BANG_KINDS.map(([kind, label, where]) => h("button", {
        "data-k": `bet-${kind}`, disabled: where === "outside" && !v.hi_dice_open,
        onclick: () => ctx.bet({ kind }),
      }, label))));
}

/** The picker of the next roll (dealer mode), kept in ctx.state across redraws. */
function rollState(ctx) {
  if (!ctx.state.roll) ctx.state.roll = { dice: [null, null], thrown_by: null, for: null };
  return ctx.state.roll;
}

function rollControls(ctx, whose, player) {
  const v = ctx.view;
  const state = rollState(ctx);
  if (state.for !== whose) {  // a new roll: fresh faces, its thrower's default
    state.for = whose;
    state.dice = [null, null];
    state.thrown_by = null;
  }
  const label = player ? `Roll for ${player}` : "Roll for the dealer";
  const send = () => {
    const fields = player ? { player } : {};
    if (v.outcome_mode !== "rng") {
      if (state.dice.some((d) => d === null)) { notify("choose both dice's faces first", "error"); return; }
      fields.dice = [...state.dice];
      fields.thrown_by = state.thrown_by;
    }
    ctx.send("roll", fields, "rolled").then((reply) => {
      if (reply.ok) { state.for = null; }
    });
  };
  if (v.outcome_mode === "rng") {
    return h("button", { class: "primary big", "data-k": `roll-${whose}`, onclick: send }, `${label} (RNG)`);
  }
  const throwers = player ? ["player", "cage"] : ["dealer", "cage"];
  return h("div", { class: "roll-entry" },
    dicePicker(state, 2, () => {}, "roll"),
    h("div", { class: "row" }, throwerSelect(state, throwers, "roll-thrown-by"),
      h("button", { class: "primary big", "data-k": `roll-${whose}`, onclick: send }, label)));
}

function beatTheDealer(ctx) {
  const v = ctx.view;
  const dealerCan = ctx.isDealer && v.phase === "no_more_bets";
  const stakes = v.stakes || [];
  const toRoll = v.to_roll || [];
  let controls = null;
  if (dealerCan && !v.dealer) controls = rollControls(ctx, "dealer", null);
  else if (dealerCan && toRoll.length) {
    const chosen = ctx.state.next && toRoll.includes(ctx.state.next) ? ctx.state.next : toRoll[0];
    ctx.state.next = chosen;
    const select = h("select", { id: "btd-next", "data-k": "btd-next" },
      toRoll.map((p) => h("option", { value: p, selected: p === chosen }, p)));
    select.addEventListener("change", () => { ctx.state.next = select.value; ctx.changed(); });
    controls = h("div", {}, h("label", { for: "btd-next" }, "next to roll"), select, rollControls(ctx, `player-${chosen}`, chosen));
  }
  return h("div", {},
    h("h2", {}, "Rolls"),
    h("p", {}, "dealer's roll: ", h("strong", { id: "dealer-roll" }, rollText(v.dealer))),
    stakes.length
      ? h("table", { "aria-label": "stakes" },
        h("thead", {}, h("tr", {}, h("th", {}, "player"), h("th", { class: "num" }, "stake"), h("th", {}, "roll"), h("th", {}, "result"))),
        h("tbody", {}, stakes.map((s) => h("tr", {},
          h("td", {}, s.player), h("td", { class: "num" }, money(s.amount)), h("td", {}, rollText(s.roll)),
          h("td", { class: s.result === "won" ? "good" : s.result === "lost" ? "bad" : "" }, s.result ?? (toRoll.includes(s.player) ? "to roll" : "–"))))))
      : h("p", { class: "empty" }, "no stake this round"),
    controls);
}

function bang(ctx) {
  const v = ctx.view;
  const seats = v.seats || [];
  const parts = [h("h2", {}, "Bang"),
    h("p", {}, `stage: `, h("strong", { id: "bang-stage" }, String(v.stage || "idle").replace(/_/g, " ")),
      ` · point `, h("strong", {}, v.point ?? "–"),
      ` · shooter `, h("strong", { id: "shooter" }, v.shooter ? `seat ${v.shooter.seat}: ${v.shooter.player}` : "–"))];
  if (ctx.isDealer && v.phase === "no_more_bets") {
    if (v.stage === "dealer_roll") parts.push(rollControls(ctx, "dealer", null));
    if (v.stage === "shooter_roll" && v.shooter) parts.push(rollControls(ctx, `shooter-${v.shooter.player}`, v.shooter.player));
  }
  if (ctx.isDealer && v.shooter) {
    parts.push(h("div", { class: "row" }, h("button", { "data-k": "pass-dice", onclick: () => ctx.send("pass_dice", {}, "dice passed") },
      `Pass the dice (${v.shooter.player} declines)`)));
  }
  const layout = v.layout || [];
  parts.push(h("h3", {}, "On the layout"), layout.length
    ? h("table", { "aria-label": "bets on the layout" },
      h("thead", {}, h("tr", {}, h("th", {}, "player"), h("th", {}, "bet"), h("th", { class: "num" }, "stake"), h("th", {}, ""))),
      h("tbody", {}, layout.map((b) => h("tr", {}, h("td", {}, b.player), h("td", {}, b.kind.replace(/_/g, " ")),
        h("td", { class: "num" }, money(b.amount)), h("td", { class: "muted" }, [b.in_action ? "in action" : "", b.riding ? "riding" : ""].filter(Boolean).join(", "))))))
    : h("p", { class: "empty" }, "nothing on the layout"));
  parts.push(h("h3", {}, `Seats (1-${v.config.seats}, clockwise from the dealer's left)`),
    seats.length
      ? h("ul", { class: "seats" }, seats.map((s) => h("li", {}, `seat ${s.seat}: ${s.player} `,
        ctx.isDealer ? h("button", { "data-k": `unseat-${s.seat}`, "aria-label": `unseat ${s.player} from seat ${s.seat}`,
          onclick: () => ctx.send("unseat_player", { seat: s.seat }, `seat ${s.seat} empty`) }, "Unseat") : null)))
      : h("p", { class: "empty" }, "no one seated"));
  if (ctx.isDealer) {
    const form = ctx.state.seat || (ctx.state.seat = { seat: "", player: "" });
    const seatInput = h("input", { id: "seat-no", "data-k": "seat-no", inputmode: "numeric", size: 3, value: form.seat });
    seatInput.addEventListener("input", () => { form.seat = seatInput.value; });
    const playerInput = h("input", { id: "seat-player", "data-k": "seat-player", autocomplete: "off", size: 8, value: form.player });
    playerInput.addEventListener("input", () => { form.player = playerInput.value; });
    parts.push(h("div", { class: "row" },
      h("div", {}, h("label", { for: "seat-no" }, "seat number"), seatInput),
      h("div", {}, h("label", { for: "seat-player" }, "player to seat"), playerInput),
      h("button", { "data-k": "seat", onclick: () => {
        const seat = Number(form.seat);
        if (!Number.isInteger(seat) || !form.seat.trim()) { notify("the seat is a number", "error"); return; }
        ctx.send("seat_player", { seat, player: form.player.trim() }, `seated at ${seat}`).then((r) => {
          if (r.ok) { form.seat = ""; form.player = ""; ctx.changed(); }
        });
      } }, "Seat the player")));
  }
  return h("div", {}, parts);
}

export function round(ctx) {
  return ctx.view.game === "bang" ? bang(ctx) : beatTheDealer(ctx);
}
