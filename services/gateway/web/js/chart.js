// A small line chart drawn as SVG, by hand (no library): the dashboard's house result over
// the night. Points are [x, y] numbers (here unix ms and cents); the chart scales them into
// its box, draws the zero line when it is in range, and labels the ends of both axes.

const SVG = "http://www.w3.org/2000/svg";
const PAD = { left: 84, right: 16, top: 14, bottom: 30 };

function el(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

/**
 * An SVG line chart of `points` ([[x, y], …], x increasing).
 * Options: `width`, `height` (the viewBox: the chart scales to its container), `label` (what
 * a screen reader hears, with the last value), `formatX(x)`, `formatY(y)` for the axis labels.
 * A single point is drawn as a dot; no point at all as an empty box saying so.
 */
export function lineChart(points, { width = 640, height = 220, label = "chart", formatX = String, formatY = String } = {}) {
  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "chart",
    role: "img",
  });
  const last = points.length ? points[points.length - 1] : null;
  svg.append(el("title", {}, last ? `${label}: ${formatY(last[1])} at ${formatX(last[0])}` : `${label}: no points yet`));
  const inner = { w: width - PAD.left - PAD.right, h: height - PAD.top - PAD.bottom };
  svg.append(el("rect", { x: PAD.left, y: PAD.top, width: inner.w, height: inner.h, class: "chart-box" }));
  if (!points.length) {
    svg.append(el("text", { x: PAD.left + inner.w / 2, y: PAD.top + inner.h / 2, class: "chart-empty", "text-anchor": "middle" }, "no money moved yet"));
    return svg;
  }
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const x0 = xs[0];
  const x1 = xs[xs.length - 1] === x0 ? x0 + 1 : xs[xs.length - 1];
  let y0 = Math.min(0, ...ys);
  let y1 = Math.max(0, ...ys);
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const sx = (x) => PAD.left + ((x - x0) / (x1 - x0)) * inner.w;
  const sy = (y) => PAD.top + (1 - (y - y0) / (y1 - y0)) * inner.h;

  // The zero line (the house neither up nor down), then the series.
  svg.append(el("line", { x1: PAD.left, x2: PAD.left + inner.w, y1: sy(0), y2: sy(0), class: "chart-zero" }));
  if (points.length === 1) {
    svg.append(el("circle", { cx: sx(x0), cy: sy(ys[0]), r: 4, class: "chart-dot" }));
  } else {
    const d = points.map((p, i) => `${i ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    svg.append(el("path", { d, class: "chart-line" }));
    svg.append(el("circle", { cx: sx(last[0]), cy: sy(last[1]), r: 4, class: "chart-dot" }));
  }
  // Axis labels: the highest and lowest values, the first and last minute.
  svg.append(el("text", { x: PAD.left - 6, y: sy(y1) + 5, "text-anchor": "end", class: "chart-label" }, formatY(y1)));
  svg.append(el("text", { x: PAD.left - 6, y: sy(y0), "text-anchor": "end", class: "chart-label" }, formatY(y0)));
  svg.append(el("text", { x: PAD.left, y: height - 8, class: "chart-label" }, formatX(x0)));
  svg.append(el("text", { x: PAD.left + inner.w, y: height - 8, "text-anchor": "end", class: "chart-label" }, formatX(xs[xs.length - 1])));
  return svg;
}
