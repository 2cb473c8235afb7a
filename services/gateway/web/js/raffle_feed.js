// A raffle on a page (the raffle console, the big screen): its view (GET /api/raffles/{id},
// pushed by the server as it changes) and its stream from the start, resumed with `since`
// after a lost connection, for what the view leaves out: the settings the raffle was set
// up with, the last drawing's winners, the searches and keys tried since, and what happened.

import { money } from "./ui.js";

const RECENT = 12;  // happenings a raffle keeps, newest first

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

/** A card as written on the board ("QH", "10S", "JK1") for people: "Q♥", "10♠", "Joker". */
export function cardName(card) {
  if (!card) return "";
  if (card.startsWith("JK")) return "Joker";
  const suit = SUITS[card.slice(-1)];
  return suit ? card.slice(0, -1) + suit : card;
}

/** Whether a card is of a red suit (hearts, diamonds). */
export function redCard(card) {
  return /[HD]$/.test(card || "");
}

const KINDS = {
  standard: "raffle",
  fifty_fifty: "50/50",
  queen_of_hearts: "Queen of Hearts",
  treasure_chest: "Treasure Chest",
};

export function kindName(kind) {
  return KINDS[kind] || kind;
}

/** What a raffle's round is called: the week of a Queen of Hearts, the occasion of a
 * Treasure Chest; other raffles have one. */
export function roundName(view) {
  if (view.kind === "queen_of_hearts") return `week ${view.round}`;
  if (view.kind === "treasure_chest") return `occasion ${view.round}`;
  return null;
}

/** The 50/50's prize as the rules make it: its percent of all the ticket money, rounded
 * down to the cent (the licensee keeps the rest). */
export function fiftyFiftyPrize(sales, config) {
  const percent = config && config.prize_percent ? config.prize_percent : 50;
  return Math.floor((sales * percent) / 100);
}

export class RaffleFeed {
  constructor(conn, id) {
    this.conn = conn;
    this.id = id;
    this.view = null;      // the raffle view
    this.config = null;    // RaffleOpened's canonical settings
    this.drawing = null;   // the last DrawingHeld's data
    this.searched = [];    // Queen of Hearts: the serials that searched since that drawing
    this.tried = [];       // Treasure Chest: the keys tried since that drawing
    this.recent = [];      // what happened, newest first: {seq, ts, text, kind}
    this.listeners = new Set();
    this.pending = null;
  }

  /** Tell the page, once for a burst of frames (a long stream's catch-up comes at once). */
  changed() {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      for (const listener of this.listeners) listener(this);
    }, 30);
  }

  /** Watch the view and follow the stream; resolves with the view's first reply. */
  async start() {
    const first = await this.conn.watch({ view: "raffle", raffle: this.id }, (data) => {
      if (data) {
        this.view = data;
        this.changed();
      }
    });
    if (first.ok) this.conn.follow(`raffle:${this.id}`, 0, (ev) => this.onEvent(ev));
    return first;
  }

  /** Queen of Hearts: the winners of the last drawing still to pick a position, in order. */
  waiting() {
    if (!this.drawing || (this.view && this.view.ended)) return [];
    return this.drawing.winners.filter((w) => !this.searched.includes(w.serial));
  }

  /** Treasure Chest: the keys handed to the last drawing's winners not tried yet. */
  keysPending() {
    if (!this.drawing || (this.view && this.view.ended)) return [];
    return this.drawing.winners.filter((w) => w.key !== null && w.key !== undefined && !this.tried.includes(w.key));
  }

  _note(ev, text, kind = "info") {
    this.recent.unshift({ seq: ev.seq, ts: ev.ts, text, kind });
    if (this.recent.length > RECENT) this.recent.length = RECENT;
  }

  onEvent(ev) {
    const d = ev.data;
    switch (ev.type) {
      case "RaffleOpened":
        this.config = d.config;
        break;
      case "RaffleSalesClosed":
        this._note(ev, "sales closed");
        break;
      case "DrawingHeld": {
        this.drawing = d;
        this.searched = [];
        this.tried = [];
        const who = d.winners.map((w) => (w.key ? `#${w.serial} (key ${w.key})` : `#${w.serial}`)).join(", ");
        this._note(ev, `drawing ${d.drawing}: ${d.winners.length === 1 ? "ticket" : "tickets"} ${who}`, "draw");
        break;
      }
      case "PrizeAwarded":
        this._note(ev, `ticket #${d.serial} wins ${d.cash === false ? d.description : money(d.amount)} (${d.prize.replace(/_/g, " ")})`, "prize");
        break;
      case "CardRevealed":
        this.searched.push(d.serial);
        this._note(ev, `ticket #${d.serial} picked position ${d.position}: ${cardName(d.card)}`, d.queen_of_hearts ? "prize" : "card");
        break;
      case "KeyTried":
        this.tried.push(d.key);
        this._note(ev, `ticket #${d.serial}: key ${d.key} ${d.opened ? "opened the chest" : "did not open"}`, d.opened ? "prize" : "key");
        break;
      case "ChestCarriedOver":
        this._note(ev, `no key opened: ${money(d.chest)} carries over, ${d.keys_left} keys left`);
        break;
      case "AnnouncementRaised":
        this._note(ev, d.text || d.kind.replace(/_/g, " "));
        break;
      case "RaffleEnded":
        this._note(ev, "the raffle ended");
        break;
      default:
        return;  // a sale: the view carries its figures
    }
    this.changed();
  }
}

/** The raffles the server has, by id (`GET /api/raffles`). */
export async function raffleIds(conn) {
  const all = await conn.get("/api/raffles");
  return all.raffles.map((r) => r.raffle);
}
