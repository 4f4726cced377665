// app.js starts the console: it signs the browser in (a one-time link's
// token from the URL fragment, a pasted JWT, or the trusted proxy), then
// routes #/… to the views.
import { h, clear, append } from "./dom.js";
import { call, signInWith, whoami, state, ApiError } from "./api.js";
import * as views from "./views.js";
import { Transcript } from "./transcript.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
let open = null; // the open Transcript

function go(hash) {
  if (location.hash === hash) route(); else location.hash = hash;
}

async function start() {
  const m = location.hash.match(/^#login=([A-Za-z0-9_-]+)$/);
  if (m) {
    // Drop the token from the address bar and history before anything.
    history.replaceState(null, "", location.pathname + "#/workspaces");
    try { await signInWith({ token: m[1] }); } catch (e) { return signInPage(e); }
  } else {
    try { await whoami(); } catch (e) { return signInPage(e); }
  }
  signedIn();
}

function signedIn() {
  nav.hidden = false;
  clear(who);
  append(who, [h("span", { id: "caller" }, state.caller), " ",
    h("button", { type: "button", class: "link", id: "new-link", title: "a one-time link that signs another browser in as you", onclick: newLink }, "sign in another browser"), " ",
    state.via === "cookie" ? h("button", { type: "button", class: "link", onclick: signOut }, "sign out") : null]);
  window.addEventListener("hashchange", route);
  route();
}

async function newLink() {
  const l = await call("POST", "/console/links");
  const field = h("input", { type: "text", readonly: true, value: l.url, size: 60, id: "link-url" });
  main.prepend(h("div", { class: "notice" }, "Open this link once, in the other browser (valid until " + new Date(l.expires).toLocaleTimeString() + "): ", field));
  field.select();
}

async function signOut() {
  await fetch("/console/logout", { method: "POST", credentials: "same-origin", headers: { "X-Rein-CSRF": state.csrf } });
  location.hash = "";
  location.reload();
}

function signInPage(e) {
  nav.hidden = true;
  const how = e instanceof ApiError && e.body && e.body.sign_in;
  clear(main);
  const box = h("section", { id: "signin", class: "card" }, h("h2", {}, "Sign in"));
  if (how === "token") {
    const tok = h("textarea", { id: "jwt", rows: 3, placeholder: "paste a JWT (Bearer token) from your identity provider" });
    const msg = h("p", { class: "error" });
    const form = h("form", {}, tok, h("button", { type: "submit", class: "primary" }, "Sign in"), msg);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try { await signInWith({ jwt: tok.value.trim() }); tok.value = ""; location.hash = "#/workspaces"; signedIn(); } catch (err) { msg.textContent = err.message; }
    });
    append(box, [h("p", {}, "This server authenticates callers with tokens. The token is exchanged for a session cookie of this server and is not kept by the page."), form]);
  } else if (how === "proxy") {
    append(box, [h("p", {}, "This server learns who you are from its trusted proxy, and the proxy did not name you: open the console through the proxy.")]);
  } else {
    append(box, [h("p", {}, "Open the one-time login link rein serve printed when it started (it signs one browser in once). " +
      "A signed-in console, or a local client, makes another: curl -X POST " + location.origin + "/console/links")]);
  }
  if (e && e.message) box.appendChild(h("p", { class: "muted", id: "signin-why" }, e.message));
  main.appendChild(box);
}

async function route() {
  if (open) { open.close(); open = null; }
  const [path, qs] = (location.hash.slice(1) || "/workspaces").split("?");
  const query = new URLSearchParams(qs || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const a of nav.querySelectorAll("a")) a.classList.toggle("on", a.getAttribute("href") === "#/" + parts[0]);
  try {
    switch (parts[0]) {
      case "sessions": return await views.sessions(main, go, query);
      case "s": {
        const s = await call("GET", "/sessions/" + encodeURIComponent(parts[1]));
        open = new Transcript(main, s);
        return;
      }
      case "w":
        if (parts[2] === "memory") return await views.memory(main, parts[1]);
        if (parts[2] === "kb") return await views.kb(main, parts[1]);
        break;
      case "audit": return await views.audit(main);
      case "jobs": return await views.jobs(main);
      case "ops": return await views.ops(main);
    }
    return await views.workspaces(main, go);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return signInPage(e);
    clear(main).appendChild(h("div", { class: "error" }, e.message));
  }
}

start();
