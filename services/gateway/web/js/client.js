// The connection every console page shares: its token, the websocket protocol of
// docs/PROTOCOL.md, commands that are safe to retry, and subscriptions that resume after a
// lost connection with `since`, without a gap and without a double (docs/CONSOLES.md).

const TOKEN_KEY = "casino-night.token";
const SUBPROTOCOL = "casino-night.v1";

// The replies a command is sent again for, with the same id (PROTOCOL.md, Idempotency).
export const TRANSIENT = new Set([
  "unavailable", "internal", "busy",
  "board_unreadable", "shoe_unavailable", "shoe_mismatch", "roll_unavailable",
]);
const RETRY_LIMIT = 8;            // attempts of one command before its refusal is shown
const BACKOFF_FIRST_MS = 250;     // reconnect and retry waits double from here ...
const BACKOFF_MOST_MS = 5000;     // ... up to here
const REPLY_TIMEOUT_MS = 15000;   // no reply on an open socket: reconnect and send again

/** The tab's token: read once from the link's fragment (`#token=…`, never sent to the
 * server), kept in session storage, and taken off the address bar at once. */
export function takeToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get("token");
  if (fromLink) {
    sessionStorage.setItem(TOKEN_KEY, fromLink);
    fragment.delete("token");
    const rest = fragment.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** A token's claims (`role`, `sub`, `exp`, `tables`, `player`): its payload, unchecked. */
export function claimsOf(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const text = atob(part + "=".repeat((4 - (part.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

function randomHex(bytes) {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** An org-log id as a pair of numbers, to compare two of them ("<ms>-<n>"). */
function logPosition(id) {
  const [ms, n] = String(id).split("-");
  return [Number(ms) || 0, Number(n) || 0];
}

export function logIdAfter(a, b) {
  const [am, an] = logPosition(a);
  const [bm, bn] = logPosition(b);
  return am > bm || (am === bm && an > bn);
}

/** A watched view's key in `Connection.views`: the view's name and what it is of. */
function viewKey(fields) {
  const key = fields.table ?? fields.raffle ?? fields.deal ?? fields.player ?? fields.key ?? "";
  return `${fields.view}|${key}`;
}

/**
 * One websocket to the server for one page. Subscriptions and commands survive a lost
 * connection: on reconnect, each stream is subscribed again from the last seq (or log id)
 * handed to the page, each view again (its reply is the current data), and each command
 * still waiting for its reply is sent again with the same id, which the server answers
 * with the first reply if it was applied (so nothing applies twice).
 */
export class Connection {
  constructor({ token, page, onStatus = () => {}, onEnded = () => {} }) {
    this.token = token;
    this.claims = claimsOf(token) || {};
    this.page = page;
    this.onStatus = onStatus;
    this.onEnded = onEnded;
    this.session = randomHex(6);
    this.counter = 0;
    this.ws = null;
    this.status = "connecting";
    this.ended = null;
    this.backoff = BACKOFF_FIRST_MS;
    this.streams = new Map();   // stream -> {since, onEvent, types}
    this.views = new Map();     // "view|key" -> {fields, onData, first}
    this.pending = new Map();   // id -> {msg, resolve, attempts, sentAt}
    this.connects = 0;
    // What each stream handed the page, for the browser tests: no gap (every seq after the
    // first is the one before plus one) and the frames dropped as already handed over.
    this.delivered = new Map();  // stream -> {first, last, count, gaps, doubles}
    window.casinoNight = { connection: this };
  }

  _count(stream, seq) {
    let d = this.delivered.get(stream);
    if (!d) {
      d = { first: seq, last: seq - 1, count: 0, gaps: 0, doubles: 0 };
      this.delivered.set(stream, d);
    }
    if (typeof seq === "number" && seq !== d.last + 1) d.gaps += 1;
    d.last = seq;
    d.count += 1;
  }

  get role() { return this.claims.role; }

  start() {
    this._open();
    setInterval(() => this._checkReplies(), 1000);
    return this;
  }

  _url() {
    return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  }

  _setStatus(status, detail = "") {
    this.status = status;
    this.onStatus(status, detail);
  }

  _open() {
    if (this.ended) return;
    this._setStatus("connecting");
    const ws = new WebSocket(this._url(), [SUBPROTOCOL, "bearer." + this.token]);
    this.ws = ws;
    ws.onopen = () => {
      this.backoff = BACKOFF_FIRST_MS;
      this.connects += 1;
      this._setStatus("open");
      for (const [stream, sub] of this.streams) this._sendSubscribe(stream, sub);
      for (const view of this.views.values()) this._sendView(view);
      for (const [id, p] of this.pending) {
        if (p.msg) this._transmit(id, p);
      }
    };
    ws.onmessage = (e) => this._receive(e.data);
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const [id, p] of this.pending) {  // subscribes are sent again afresh on reconnect
        if (!p.msg) this.pending.delete(id);
      }
      if (e.code === 1008) {  // the token expired or was revoked: a new link is needed
        this.ended = e.reason || "token ended";
        this._setStatus("ended", this.ended);
        this.onEnded(this.ended);
        for (const p of this.pending.values()) {
          p.resolve({ ok: false, error: { code: "unauthorized", message: this.ended } });
        }
        this.pending.clear();
        return;
      }
      this._setStatus("reconnecting", e.reason || `closed (${e.code})`);
      const wait = this.backoff * (0.75 + Math.random() / 2);
      this.backoff = Math.min(this.backoff * 2, BACKOFF_MOST_MS);
      setTimeout(() => this._open(), wait);
    };
  }

  _raw(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  _sendSubscribe(stream, sub) {
    const id = this._nextId("sub");
    this.pending.set(id, {
      msg: null,
      resolve: () => {},  // the events that follow are what the page wants
      attempts: 1,
      sentAt: Date.now(),
    });
    const filter = sub.types ? { types: sub.types } : {};
    this._raw({ op: "subscribe", id, stream, since: sub.since, ...filter });
  }

  _nextId(kind) {
    this.counter += 1;
    return `${this.page}-${this.session}-${kind}-${this.counter}`;
  }

  _receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.ev) {
      const ev = msg.ev;
      const log = this.streams.get("log");
      if (log && ev.log_id && log.since !== undefined) {
        if (logIdAfter(ev.log_id, log.since)) {
          log.since = ev.log_id;
          log.onEvent(ev);
        }
      }
      const sub = this.streams.get(ev.stream);
      if (sub && ev.seq > sub.since) {  // never the same event twice
        this._count(ev.stream, ev.seq);
        sub.since = ev.seq;
        sub.onEvent(ev);
      } else if (sub) {
        const d = this.delivered.get(ev.stream);
        if (d) d.doubles += 1;
      }
      return;
    }
    if (msg.view !== undefined && msg.re === undefined) {
      const view = this.views.get(`${msg.view}|${msg.key}`);
      if (view) view.onData(msg.data);
      return;
    }
    if ("re" in msg) {
      const p = this.pending.get(msg.re);
      if (!p) return;
      if (!msg.ok && TRANSIENT.has(msg.error.code) && p.msg && p.attempts < RETRY_LIMIT) {
        p.attempts += 1;
        p.retrying = true;
        const wait = BACKOFF_FIRST_MS * 2 ** Math.min(p.attempts, 4);
        setTimeout(() => { p.retrying = false; this._transmit(msg.re, p); }, wait);
        return;
      }
      this.pending.delete(msg.re);
      p.resolve(msg);
    }
  }

  _transmit(id, p) {
    p.sentAt = Date.now();
    this._raw(p.msg);
  }

  _checkReplies() {
    // A reply that never came on an open socket: the connection is not what it seems.
    const now = Date.now();
    for (const p of this.pending.values()) {
      if (p.msg && !p.retrying && now - p.sentAt > REPLY_TIMEOUT_MS && this.ws) {
        this.ws.close(4000, "no reply");
        return;
      }
    }
  }

  /** Send a command; resolves with its one reply (`ok`, `result` or `error`). The id is
   * the page's own, unique for this tab; a transient refusal or a lost connection sends
   * the same command again with the same id. */
  send(op, fields = {}) {
    if (this.ended) {
      return Promise.resolve({ ok: false, error: { code: "unauthorized", message: this.ended } });
    }
    const id = this._nextId(op);
    const msg = { op, id, ...fields };
    return new Promise((resolve) => {
      const p = { msg, resolve, attempts: 1, sentAt: Date.now() };
      this.pending.set(id, p);
      this._transmit(id, p);
    });
  }

  /** Follow an aggregate stream (or `log`) from `since`: `onEvent(ev)` gets every later
   * event once, in order, across reconnects. On `log`, `types` (a list of event types)
   * asks the server for those events only. */
  follow(stream, since, onEvent, { types = null } = {}) {
    const sub = { since, onEvent, types };
    this.streams.set(stream, sub);
    this._sendSubscribe(stream, sub);
    return sub;
  }

  /** Watch a view (`{view, table}`, `{view, raffle}`, …): `onData(data)` gets the current
   * data at once, then each change; after a reconnect the current data again. Resolves
   * with the first subscribe's reply. */
  watch(fields, onData) {
    return new Promise((resolve) => {
      const view = { fields, onData, first: resolve };
      this.views.set(viewKey(fields), view);
      this._sendView(view);
    });
  }

  /** Stop watching a view (the fields given to `watch`): no more pushes, and it is not
   * subscribed again after a reconnect. */
  unwatch(fields) {
    if (!this.views.delete(viewKey(fields))) return;
    this._raw({ op: "unsubscribe", ...fields });
  }

  _sendView(view) {
    // Each (re)subscription has an id of its own, so that its reply finds its way back.
    const id = this._nextId("view");
    this.pending.set(id, {
      msg: null,
      resolve: (reply) => {
        if (reply.ok) view.onData(reply.result.data);
        if (view.first) { view.first(reply); view.first = null; }
      },
      attempts: 1,
      sentAt: Date.now(),
    });
    this._raw({ op: "subscribe", id, ...view.fields });
  }

  /** A GET of the HTTP API with the token in its header: the parsed body, or a thrown
   * error carrying the server's code and message. */
  async get(path) {
    const response = await fetch(path, {
      headers: { Authorization: `Bearer ${this.token}` },
      cache: "no-store",
    });
    const body = await response.json();
    if (!response.ok) {
      const error = new Error(body?.error?.message || `HTTP ${response.status}`);
      error.code = body?.error?.code || "http_" + response.status;
      throw error;
    }
    return body;
  }
}
