// views.js holds the console's list and settings views: workspaces (with
// their catalog), sessions, audit, memory, the knowledge base, background
// jobs and operations. Each fetches what it shows; an endpoint this
// server lacks (404 "no route") is said to be not offered.
import { h, clear, append, ago, usd, pretty } from "./dom.js";
import { call, notOffered, state } from "./api.js";

// problem is a visible error line.
function problem(e, what) {
  return h("div", { class: "error" }, (what ? what + ": " : "") + e.message);
}

// unavailable is the message for an endpoint the server does not offer.
function unavailable(what, path) {
  return h("div", { class: "notice notoffered" }, "This server does not offer " + what + " (" + path + " answered 404). " +
    "A newer rein serve has it.");
}

// guarded runs load and shows its error, or "not offered" on a 404 of a
// missing route.
async function guarded(el, what, path, load) {
  try { await load(); } catch (e) {
    clear(el).appendChild(notOffered(e) ? unavailable(what, path) : problem(e, what));
  }
}

export async function workspaces(main, go) {
  const list = h("div", { id: "ws-list" });
  const kind = h("select", { id: "ws-kind" }, h("option", { value: "project" }, "project"), h("option", { value: "chat" }, "chat"));
  const dir = h("input", { id: "ws-dir", type: "text", placeholder: "/absolute/project/dir (under a --root)", size: 40 });
  const name = h("input", { id: "ws-name", type: "text", placeholder: "name (optional)" });
  const msg = h("span", { class: "muted" });
  kind.addEventListener("change", () => { dir.disabled = kind.value === "chat"; });
  const form = h("form", { id: "ws-form", class: "row" }, kind, dir, name, h("button", { type: "submit", class: "primary" }, "Open"), msg);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { kind: kind.value };
    if (kind.value === "project") body.dir = dir.value.trim();
    if (name.value.trim()) body.name = name.value.trim();
    try { await call("POST", "/workspaces", body); msg.textContent = ""; await load(); } catch (err) { msg.textContent = err.message; }
  });
  clear(main);
  append(main, [h("h2", {}, "Workspaces"), form, list]);
  const load = async () => {
    const data = await call("GET", "/workspaces");
    clear(list);
    if (!data.items.length) list.appendChild(h("p", { class: "muted" }, "No workspace yet: open a project directory or a chat."));
    for (const w of data.items) list.appendChild(wsRow(w, go));
  };
  await guarded(list, "workspaces", "/workspaces", load);
}

function wsRow(w, go) {
  const mode = h("select", { class: "mode" }, ["", "default", "accept-edits", "plan", "read-only", "strict"].map((m) => h("option", { value: m }, m || "server default")));
  const details = h("div", { class: "catalog", hidden: true });
  const start = async () => {
    const body = { workspace_id: w.id };
    if (mode.value) body.permission_mode = mode.value;
    const s = await call("POST", "/sessions", body);
    go("#/s/" + s.id);
  };
  return h("div", { class: "card ws-row", "data-ws": w.id },
    h("div", { class: "row" }, h("strong", {}, w.name || w.dir || w.id), h("span", { class: "badge" }, w.kind),
      h("span", { class: "muted" }, w.dir || ""), h("span", { class: "grow" }),
      mode, h("button", { type: "button", class: "primary ws-new-session", onclick: () => start().catch((e) => details.replaceChildren(problem(e, "new session"))) }, "New session"),
      h("a", { href: "#/sessions?workspace=" + encodeURIComponent(w.id) }, "sessions"),
      h("a", { href: "#/w/" + encodeURIComponent(w.id) + "/memory" }, "memory"),
      h("a", { href: "#/w/" + encodeURIComponent(w.id) + "/kb" }, "knowledge base"),
      h("button", { type: "button", class: "link ws-caps", onclick: () => { details.hidden = !details.hidden; if (!details.hidden) catalog(details, w.id); } }, "capabilities")),
    details);
}

// catalog shows what a workspace offers: trust, agents, skills, actions,
// commands, MCP servers and models.
async function catalog(el, id) {
  clear(el).appendChild(h("p", { class: "muted" }, "Loading…"));
  const path = "/workspaces/" + encodeURIComponent(id) + "/catalog";
  await guarded(el, "the workspace catalog", path, async () => {
    const c = await call("GET", path);
    const sect = (title, items, cols) => items && items.length ? [h("h4", {}, title + " (" + items.length + ")"),
      h("table", {}, items.map((it) => h("tr", {}, cols.map((k) => h("td", {}, it[k] === undefined ? "" : String(it[k]))))))] : null;
    clear(el);
    append(el, [h("p", {}, h("span", { class: "badge " + (c.trusted ? "ok" : "warn") }, c.trusted ? "trusted" : "not trusted"), " ",
      c.kind, c.default_model ? " · default model " + c.default_model : "",
      c.trusted ? "" : h("span", { class: "muted" }, " — what the workspace brings (rules, hooks, MCP servers) is ignored until the operator runs rein trust")),
      sect("Agents", c.agents, ["name", "model", "description"]), sect("Skills", c.skills, ["name", "description"]),
      sect("Actions", c.actions, ["name", "description"]), sect("Commands", c.commands, ["name", "description"]),
      sect("MCP servers", c.mcp_servers, ["name", "transport", "state", "tools", "error"]),
      sect("Models", c.models, ["id", "provider", "context_window"])]);
  });
}

export async function sessions(main, go, query) {
  const search = h("input", { id: "session-search", type: "search", placeholder: "search titles and first messages" });
  const table = h("table", { id: "session-list" });
  const ws = query.get("workspace") || "";
  clear(main);
  append(main, [h("h2", {}, "Sessions", ws ? h("span", { class: "muted" }, " of workspace " + ws) : null), search, table]);
  let items = [];
  const show = () => {
    const q = search.value.toLowerCase();
    clear(table).appendChild(h("tr", {}, ["session", "status", "last activity", "model", "runs", "cost", ""].map((c) => h("th", {}, c))));
    for (const s of items.filter((s) => !q || (s.title + " " + s.preview + " " + s.id).toLowerCase().includes(q))) {
      const status = h("span", { class: "badge status" }, "…");
      table.appendChild(h("tr", { class: "session-row", "data-session": s.id },
        h("td", {}, h("a", { href: "#/s/" + encodeURIComponent(s.id) }, s.title || s.preview || s.id), s.parent_id ? h("span", { class: "muted" }, " (fork)") : null),
        h("td", {}, status), h("td", {}, ago(s.updated_at)), h("td", {}, s.model || ""), h("td", {}, s.runs || 0), h("td", {}, usd(s.cost_usd)),
        h("td", { class: "actions" },
          h("button", { type: "button", class: "link", onclick: async () => { const f = await call("POST", "/sessions/" + s.id + "/fork", {}); go("#/s/" + f.id); } }, "fork"),
          h("a", { href: "/sessions/" + encodeURIComponent(s.id) + "/export", download: s.id + ".json" }, "export"),
          h("button", { type: "button", class: "link danger session-delete", onclick: async () => {
            if (!confirm("Delete session " + (s.title || s.id) + "?")) return;
            try { await call("DELETE", "/sessions/" + encodeURIComponent(s.id)); items = items.filter((x) => x !== s); show(); } catch (e) { status.textContent = e.message; }
          } }, "delete"))));
      runStatus(s.id, status);
    }
  };
  search.addEventListener("input", show);
  await guarded(table, "sessions", "/sessions", async () => {
    const data = await call("GET", "/sessions" + (ws ? "?workspace_id=" + encodeURIComponent(ws) : ""));
    items = data.items;
    show();
  });
}

// runStatus shows the status of a session's newest run.
async function runStatus(id, el) {
  try {
    const runs = await call("GET", "/sessions/" + encodeURIComponent(id) + "/runs");
    const r = runs.items[runs.items.length - 1];
    el.textContent = r ? r.status : "idle";
    el.classList.add(r && (r.status === "running" || r.status === "queued") ? "warn" : r && r.status === "failed" ? "bad" : "ok");
  } catch { el.textContent = "?"; }
}

export async function audit(main) {
  const kind = h("select", { id: "audit-kind" }, ["", "run", "tool_call", "permission", "hook"].map((k) => h("option", { value: k }, k || "any kind")));
  const sid = h("input", { type: "text", placeholder: "session id" });
  const since = h("input", { type: "datetime-local" });
  const table = h("table", { id: "audit-list" });
  const form = h("form", { class: "row" }, kind, sid, since, h("button", { type: "submit" }, "Filter"));
  const load = async () => {
    const p = new URLSearchParams();
    if (kind.value) p.set("kind", kind.value);
    if (sid.value.trim()) p.set("session_id", sid.value.trim());
    if (since.value) p.set("since", new Date(since.value).toISOString());
    const data = await call("GET", "/audit?" + p);
    clear(table).appendChild(h("tr", {}, ["id", "time", "kind", "session", "record"].map((c) => h("th", {}, c))));
    for (const r of data.items) table.appendChild(h("tr", {}, h("td", {}, r.id), h("td", {}, new Date(r.time).toLocaleString()), h("td", {}, r.kind),
      h("td", {}, r.session_id ? h("a", { href: "#/s/" + encodeURIComponent(r.session_id) }, r.session_id.slice(0, 12)) : ""),
      h("td", {}, h("details", {}, h("summary", {}, summary(r.data)), h("pre", {}, pretty(r.data))))));
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); guarded(table, "the audit trail", "/audit", load); });
  clear(main);
  append(main, [h("h2", {}, "Audit"), form, table]);
  await guarded(table, "the audit trail", "/audit", load);
}

function summary(d) {
  if (!d || typeof d !== "object") return "";
  return [d.tool, d.decision, d.decided_by, d.outcome, d.status, d.reason].filter(Boolean).join(" · ") || Object.keys(d).slice(0, 4).join(", ");
}

export async function memory(main, wsID) {
  const path = "/workspaces/" + encodeURIComponent(wsID) + "/memory";
  const list = h("div", { id: "memory-list" });
  const text = h("textarea", { id: "memory-text", rows: 2, placeholder: "a note the agent keeps (screened like AGENTS.md)" });
  const scope = h("select", {}, h("option", { value: "" }, "default scope"), h("option", { value: "project" }, "project"), h("option", { value: "user" }, "user"));
  const msg = h("div", { class: "muted" });
  const form = h("form", { class: "row" }, text, scope, h("button", { type: "submit", class: "primary" }, "Remember"));
  const load = async () => {
    const data = await call("GET", path);
    clear(list);
    if (!data.notes.length) list.appendChild(h("p", { class: "muted" }, "No notes."));
    for (const n of data.notes) list.appendChild(h("div", { class: "card" }, h("span", { class: "badge" }, n.scope), " ", n.text, " ",
      h("span", { class: "muted" }, ago(n.created_at) + (n.verdict ? " · " + n.verdict : "")),
      h("button", { type: "button", class: "link danger", onclick: async () => { await call("DELETE", path + "/" + encodeURIComponent(n.id)); load(); } }, "forget")));
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { text: text.value };
    if (scope.value) body.scope = scope.value;
    try { await call("POST", path, body); text.value = ""; msg.textContent = ""; await load(); } catch (err) {
      msg.textContent = err.status === 422 ? "refused by the scanner: " + err.message : err.message;
    }
  });
  clear(main);
  append(main, [h("h2", {}, "Memory"), form, msg, list]);
  await guarded(list, "memory", path, load);
}

export async function kb(main, wsID) {
  const base = "/workspaces/" + encodeURIComponent(wsID) + "/kb";
  const docs = h("div", { id: "kb-docs" });
  const hits = h("div", { id: "kb-hits" });
  const q = h("input", { type: "search", placeholder: "search the knowledge base" });
  const mode = h("select", {}, h("option", { value: "keyword" }, "keyword"), h("option", { value: "hybrid" }, "hybrid"));
  const pathIn = h("input", { type: "text", value: ".", size: 20 });
  const msg = h("span", { class: "muted" });
  const index = h("form", { class: "row" }, "Index ", pathIn, h("button", { type: "submit" }, "Index"), msg);
  const search = h("form", { class: "row" }, q, mode, h("button", { type: "submit", class: "primary" }, "Search"));
  const load = async () => {
    const d = await call("GET", base);
    clear(docs).appendChild(h("p", { class: "muted" }, d.total + " document(s)"));
    docs.appendChild(h("table", {}, d.documents.map((x) => h("tr", {}, h("td", {}, x.path), h("td", {}, x.chunks + " chunks"), h("td", {}, ago(x.indexed_at))))));
  };
  index.addEventListener("submit", async (e) => {
    e.preventDefault();
    try { const r = await call("POST", base, { path: pathIn.value }); msg.textContent = r.added + " added, " + r.updated + " updated, " + r.skipped + " skipped"; load(); } catch (err) { msg.textContent = err.message; }
  });
  search.addEventListener("submit", (e) => {
    e.preventDefault();
    guarded(hits, "knowledge-base search", base + "/search", async () => {
      const r = await call("GET", base + "/search?" + new URLSearchParams({ q: q.value, mode: mode.value, limit: "20" }));
      clear(hits).appendChild(h("p", { class: "muted" }, r.hits.length + " hit(s), " + r.mode));
      for (const x of r.hits) hits.appendChild(h("div", { class: "card" }, h("strong", {}, x.path + ":" + x.start_line + "-" + x.end_line), " ",
        x.heading || "", h("pre", {}, x.snippet)));
    });
  });
  clear(main);
  append(main, [h("h2", {}, "Knowledge base"), index, search, hits, docs]);
  await guarded(docs, "the knowledge base", base, load);
}

export async function jobs(main) {
  const out = h("div", { id: "jobs" });
  clear(main);
  append(main, [h("h2", {}, "Background jobs"), h("p", { class: "muted" }, "Jobs of your 20 most recent sessions."), out]);
  await guarded(out, "sessions", "/sessions", async () => {
    const ss = await call("GET", "/sessions?limit=20");
    let any = false;
    for (const s of ss.items) {
      const js = await call("GET", "/sessions/" + encodeURIComponent(s.id) + "/jobs");
      if (js.held_by_worker) out.appendChild(h("p", { class: "muted" }, (s.title || s.id) + ": jobs are held by the worker that ran them"));
      if (!js.items.length) continue;
      any = true;
      out.appendChild(h("h4", {}, h("a", { href: "#/s/" + s.id }, s.title || s.preview || s.id)));
      out.appendChild(h("table", {}, js.items.map((j) => h("tr", {}, h("td", {}, j.id), h("td", {}, h("code", {}, j.command)), h("td", {}, j.state),
        h("td", {}, j.exit_code === undefined ? "" : "exit " + j.exit_code), h("td", {}, j.output_bytes + " B"), h("td", {}, ago(j.started))))));
    }
    if (!any) out.appendChild(h("p", { class: "muted" }, "No background jobs."));
  });
}

export async function ops(main) {
  const out = h("div", { id: "ops" });
  clear(main);
  append(main, [h("h2", {}, "Operations"), out]);
  const health = await call("GET", "/health").catch((e) => ({ status: "down", version: e.message }));
  let ready;
  try { ready = await call("GET", "/ready"); } catch (e) { ready = { status: "not ready", detail: e.message, checks: (e.body && e.body.checks) || {} }; }
  let queue = "not reported";
  try {
    const res = await fetch("/metrics", { credentials: "same-origin" });
    if (res.ok) {
      const lines = (await res.text()).split("\n").filter((l) => /queue|runs_(running|queued)|sse_clients/.test(l) && !l.startsWith("#"));
      queue = lines.length ? lines.join("\n") : "no queue metrics (a single process: runs are queued in memory)";
    }
  } catch { /* metrics off */ }
  append(out, [
    h("table", {},
      h("tr", {}, h("th", {}, "version"), h("td", {}, health.version || state.version)),
      h("tr", {}, h("th", {}, "health"), h("td", { id: "ops-health" }, health.status)),
      h("tr", {}, h("th", {}, "ready"), h("td", { id: "ops-ready" }, ready.status, ready.detail ? " — " + ready.detail : "")),
      h("tr", {}, h("th", {}, "checks"), h("td", {}, Object.entries(ready.checks || {}).map(([k, v]) => k + ": " + v).join(", "))),
      h("tr", {}, h("th", {}, "commands"), h("td", {}, ready.commands || "—")),
      h("tr", {}, h("th", {}, "signed in as"), h("td", {}, state.caller + " (" + state.via + ")"))),
    h("h3", {}, "Queue"), h("pre", { id: "ops-queue" }, queue)]);
}
