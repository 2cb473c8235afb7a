// What every page draws with: elements, money, the connection's status, refusals and
// notices read out to screen readers (docs/CONSOLES.md).

import { Connection, takeToken } from "./client.js";

/** An element: `h("button", {class: "big", onclick: f}, "Open round")`. Attributes
 * starting with `on` are listeners; `null` and `false` attributes are left out. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Cents as dollars: 1250 -> "$12.50", -300 -> "−$3.00". */
export function money(cents) {
  if (cents === null || cents === undefined) return "–";
  const sign = cents < 0 ? "−" : "";
  const abs = Math.abs(cents);
  const dollars = Math.floor(abs / 100).toLocaleString("en-US");
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, "0")}`;
}

/** Dollars typed by a user ("12.5", "$3") as cents, or null when not an amount. */
export function cents(text) {
  const m = String(text).trim().replace(/^\$/, "").match(/^(\d{1,9})(?:\.(\d{1,2}))?$/);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] || "0").padEnd(2, "0"));
}

export function clock(ms) {
  if (!ms) return "–";
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** A notice in the page's live region: `kind` "error" for a refusal, else "info". */
export function notify(text, kind = "info") {
  const region = document.getElementById("notices");
  if (!region) return;
  const item = h("li", { class: `notice ${kind}`, role: kind === "error" ? "alert" : null }, text);
  region.prepend(item);
  while (region.children.length > 6) region.lastChild.remove();
  setTimeout(() => item.remove(), kind === "error" ? 20000 : 6000);
}

/** Show a command's refusal (its code and the server's message); returns the reply. */
export function report(reply, done = null) {
  if (!reply.ok) notify(`${reply.error.code}: ${reply.error.message}`, "error");
  else if (done) notify(done);
  return reply;
}

/** A page's start: its token (or a message saying how to get one), its connection, and
 * the header's status badge. Returns the connection, or null when there is no token. */
export function startPage(page, { title, roles } = {}) {
  const token = takeToken();
  const main = document.querySelector("main");
  if (!token) {
    fill(main, h("p", { class: "empty", role: "alert" },
      "No token: open this page with the link `make run` printed (…#token=…)."));
    return null;
  }
  const badge = document.getElementById("status");
  const conn = new Connection({
    token,
    page,
    onStatus: (status, detail) => {
      if (!badge) return;
      badge.textContent = { open: "live", connecting: "connecting…", reconnecting: "reconnecting…", ended: "ended" }[status] || status;
      badge.className = `status ${status}`;
      badge.title = detail || "";
    },
    onEnded: (reason) => notify(`${reason}: open a new link`, "error"),
  });
  const who = document.getElementById("who");
  if (who) who.textContent = `${conn.claims.role || "?"}: ${conn.claims.sub || "?"}`;
  if (title) document.title = `${title} · Casino Night`;
  if (roles && !roles.includes(conn.claims.role)) {
    notify(`this page is for ${roles.join(" or ")}; this token is a ${conn.claims.role}'s`, "error");
  }
  return conn.start();
}
