// The big screen: the room's display of the raffles, read from across the hall. Every
// raffle's headline figure, live from the `raffle` view (and its stream for the settings
// and what happened): the 50/50 pool growing, the Queen of Hearts board and jackpot, the
// Treasure Chest and its keys still in play. `screen.html?raffle=<id>` shows one raffle.

import { fill, h, money, startPage } from "./ui.js";
import { RaffleFeed, cardName, fiftyFiftyPrize, kindName, raffleIds, redCard, roundName } from "./raffle_feed.js";

const BOARD_POSITIONS = 54;

const conn = startPage("screen", { title: "Raffles" });
const main = document.getElementById("main");

function headline(label, value, key) {
  return h("div", { class: "headline" }, h("p", { class: "headline-label" }, label),
    h("p", { class: "figure", "data-figure": key }, value));
}

const LATEST = 2;  // happenings a panel shows under its figures, newest first

function latest(feed) {
  return feed.recent.slice(0, LATEST).map((r) => h("p", { class: `screen-latest ${r.kind}` }, r.text));
}

const DRAW = {
  fifty_fifty(v, feed) {
    const config = feed.config;
    const percent = config && config.prize_percent ? config.prize_percent : 50;
    const winner = v.prizes.find((p) => p.prize === "fifty_fifty");
    return [
      headline("the pot", money(v.sales), "pool"),
      h("p", { class: "screen-sub" }, "the winner takes ", h("strong", { "data-figure": "prize" },
        money(winner ? winner.amount : fiftyFiftyPrize(v.sales, config))), ` (${percent} %)`),
      winner ? h("p", { class: "screen-latest prize" }, `winning ticket #${winner.serial}`) : null,
    ];
  },
  queen_of_hearts(v, feed) {
    const revealed = v.board ? v.board.revealed : {};
    const cells = [];
    for (let p = 1; p <= BOARD_POSITIONS; p++) {
      const card = revealed[String(p)];
      cells.push(h("span", {
        class: `board-cell${card ? " revealed" : ""}${redCard(card) ? " red-suit" : ""}${card === "QH" ? " queen" : ""}`,
        dataset: { position: p }, role: "img", "aria-label": card ? `position ${p}: ${cardName(card)}` : `position ${p}`,
      }, card ? cardName(card) : String(p)));
    }
    return [
      headline(v.ended ? "the jackpot was won" : "the jackpot", money(v.pool), "pool"),
      h("div", { class: "qoh-board", role: "group", "aria-label": "the board" }, cells),
      latest(feed),
    ];
  },
  treasure_chest(v, feed) {
    const keys = v.keys_in_play || [];
    const now = v.rounds[String(v.round)];
    return [
      headline(v.ended ? "the chest was won" : "the chest", money(v.pool), "pool"),
      h("p", { class: "screen-sub" }, "tonight's tickets: ", h("strong", { "data-figure": "round-sales" }, money(now ? now.sales : 0))),
      h("p", { class: "screen-sub" }, "keys still in play: ", h("strong", { "data-figure": "keys-in-play" }, String(keys.length))),
      h("ul", { class: "screen-keys", "aria-label": "keys in play" }, keys.map((k) => h("li", {}, String(k)))),
      latest(feed),
    ];
  },
  standard(v, feed) {
    return [headline("tickets sold", String(v.tickets), "tickets"), latest(feed)];
  },
};

function panel(feed) {
  const el = h("section", { class: "screen-raffle", dataset: { raffle: feed.id }, "aria-label": feed.id });
  feed.listeners.add(() => {
    const v = feed.view;
    if (!v) return;
    const round = roundName(v);
    const draw = DRAW[v.kind] || DRAW.standard;
    fill(el,
      h("h2", {}, v.name || v.raffle),
      h("p", { class: "muted" }, kindName(v.kind), round ? ` · ${round}` : "",
        ` · ${money(v.price)} a ticket`, v.ended ? " · ended" : v.sales_open ? "" : " · sales closed"),
      draw(v, feed));
  });
  return el;
}

async function start() {
  const only = new URLSearchParams(location.search).get("raffle");
  let ids;
  try {
    ids = await raffleIds(conn);
  } catch (e) {
    fill(main, h("p", { class: "empty", role: "alert" }, `${e.code}: ${e.message}`));
    return;
  }
  if (only) ids = ids.filter((id) => id === only);
  if (!ids.length) {
    fill(main, h("p", { class: "empty" }, only ? `no raffle ${only}` : "no raffle tonight"));
    return;
  }
  main.classList.add("screen-grid");
  const feeds = ids.map((id) => new RaffleFeed(conn, id));
  fill(main, feeds.map(panel));
  for (const feed of feeds) feed.start();
}

if (conn) start();
