// dom.js builds elements from data without ever parsing HTML: text is set
// as text, so nothing a model, a tool or a remote caller wrote can become
// markup or script (SPEC API-10).

// h makes an element: attrs sets attributes ("on*" keys add listeners,
// "class", "hidden" and data-* too); children are nodes, strings (as
// text), arrays, or null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings, arrays) to el.
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

// clear empties el and returns it.
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// ago says how long ago an RFC 3339 time was.
export function ago(t) {
  if (!t) return "";
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 60) return Math.round(s) + "s ago";
  if (s < 3600) return Math.round(s / 60) + "m ago";
  if (s < 86400) return Math.round(s / 3600) + "h ago";
  return Math.round(s / 86400) + "d ago";
}

// usd formats a cost.
export function usd(n) {
  return n ? "$" + n.toFixed(n < 0.01 ? 4 : 2) : "—";
}

// pretty formats JSON for display.
export function pretty(v) {
  if (v === undefined) return "";
  try { return JSON.stringify(v, null, 2); } catch { return String(v); }
}
