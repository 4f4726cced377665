// transcript.js is a session's live view (SPEC API-10): its events over
// EventSource, resumed with Last-Event-ID after a drop, each shown once and
// in order; tool calls as cards, edits as diffs, sub-agents nested,
// approvals, plans and questions answered in place; the composer; and the
// run inspector built from the same events.
import { h, clear, append, pretty, usd } from "./dom.js";
import { call, ApiError } from "./api.js";
import { render } from "./markdown.js";

// The event types rein sends (docs/events.md), and "question" (ask_user).
const TYPES = ["run_start", "message", "text_delta", "thinking_delta", "tool_start", "tool_end", "permission_request",
  "permission_decision", "plan", "compaction", "retry", "usage", "error", "done", "subagent_start", "subagent_end", "question"];

// ASK_TIMEOUT_MS is rein serve's default permission timeout (5 min): the
// countdown shows when an unanswered question is denied.
const ASK_TIMEOUT_MS = 5 * 60 * 1000;

// Transcript is one open session view.
export class Transcript {
  constructor(root, session) {
    this.root = root;
    this.session = session;
    this.sid = session.id;
    this.lastId = 0;
    this.log = [];            // {id, type} of every event shown
    this.dupes = 0;           // events that came twice (never expected)
    this.opens = 0;
    this.errored = false;
    this.runs = new Map();    // run id -> {el, turns, tools}
    this.calls = new Map();   // call id -> tool card
    this.asks = new Map();    // call id -> approval or plan card
    this.streams = new Map(); // stream key -> {el, text, kind}
    this.running = "";        // the id of the run under way
    this.queue = [];          // messages waiting for the run to end
    this.images = [];         // {data, url, name} attached to the next message
    this.timers = new Set();
    this.lastAt = new Map();  // run id -> time of its latest event (a model call starts after it)
    this.build();
    this.connect();
  }

  build() {
    const s = this.session;
    this.conn = h("span", { id: "conn", class: "badge" }, "connecting…");
    this.status = h("span", { id: "run-status", class: "badge" }, "idle");
    this.cost = h("span", { id: "cost", class: "muted" }, usd(s.cost_usd));
    this.list = h("div", { id: "transcript", "aria-live": "polite" });
    this.queued = h("ul", { id: "queued", class: "queued" });
    this.input = h("textarea", { id: "prompt", rows: 3, placeholder: "Message rein — Ctrl+Enter sends; while a run works, it queues" });
    this.input.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.send(); } });
    this.fileIn = h("input", { type: "file", accept: "image/png,image/jpeg,image/gif,image/webp", multiple: true, id: "attach", hidden: true });
    this.fileIn.addEventListener("change", () => this.attach(this.fileIn.files));
    this.thumbs = h("div", { class: "thumbs" });
    this.cancelBtn = h("button", { id: "cancel", type: "button", class: "danger", disabled: true, onclick: () => this.cancel() }, "Cancel run");
    const composer = h("div", { id: "composer" }, this.queued, this.thumbs, this.input,
      h("div", { class: "row" },
        h("button", { id: "send", type: "button", class: "primary", onclick: () => this.send() }, "Send"),
        this.cancelBtn,
        h("button", { type: "button", onclick: () => this.fileIn.click() }, "Attach image"), this.fileIn,
        h("span", { class: "grow" }), this.cost));
    this.inspector = h("section", { id: "inspector", hidden: true });
    this.turns = [];
    const tabs = h("div", { class: "tabs" },
      h("button", { type: "button", id: "tab-transcript", class: "on", onclick: (e) => this.tab(e, false) }, "Transcript"),
      h("button", { type: "button", id: "tab-inspector", onclick: (e) => this.tab(e, true) }, "Run inspector"));
    clear(this.root);
    append(this.root, [h("div", { class: "sessionbar" }, h("h2", {}, s.title || s.preview || s.id), this.status, this.conn), tabs,
      h("div", { id: "pane-transcript" }, this.list, composer), this.inspector]);
  }

  tab(e, inspect) {
    for (const b of e.target.parentNode.children) b.classList.toggle("on", b === e.target);
    this.root.querySelector("#pane-transcript").hidden = inspect;
    this.inspector.hidden = !inspect;
    if (inspect) this.renderInspector();
  }

  // connect opens the event stream; EventSource reconnects by itself,
  // sending Last-Event-ID, and the server resumes after it.
  connect(after) {
    const url = "/sessions/" + encodeURIComponent(this.sid) + "/events" + (after ? "?after=" + after : "");
    const es = new EventSource(url);
    this.es = es;
    es.onopen = () => {
      this.opens++;
      if (this.opens > 1 || after) this.setConn("live · resumed after #" + this.lastId, "ok");
      else this.setConn("live", "ok");
    };
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) {
        this.setConn("disconnected", "bad");
        const again = h("button", { type: "button", class: "link", onclick: () => this.connect(this.lastId) }, "reconnect");
        this.conn.appendChild(again);
      } else {
        this.setConn("reconnecting… (have #" + this.lastId + ")", "warn");
      }
    };
    for (const t of TYPES) es.addEventListener(t, (m) => this.onMessage(m));
  }

  close() {
    if (this.es) this.es.close();
    for (const t of this.timers) clearInterval(t);
  }

  setConn(text, cls) {
    this.conn.textContent = text;
    this.conn.className = "badge " + (cls || "");
  }

  onMessage(m) {
    const id = Number(m.lastEventId);
    if (id && id <= this.lastId) { this.dupes++; return; }
    if (id) this.lastId = id;
    let ev;
    try { ev = JSON.parse(m.data); } catch { return; }
    this.log.push({ id, type: m.type });
    try { this.show(ev, id); this.lastAt.set(ev.run_id, ev.time); } catch (err) { this.list.appendChild(h("div", { class: "error" }, "could not show event #" + id + ": " + err.message)); }
  }

  // container is where an event goes: the run's block, or the sub-agent
  // box in the card of the call that started it.
  container(ev) {
    if (ev.subagent) {
      const card = this.calls.get(ev.subagent.parent_call_id);
      if (card) {
        let box = card.querySelector(":scope > .subagent");
        if (!box) { box = h("div", { class: "subagent" }, h("div", { class: "muted" }, "sub-agent " + ev.subagent.agent)); card.appendChild(box); }
        return box;
      }
    }
    return this.runBlock(ev.run_id).body;
  }

  runBlock(runID) {
    let r = this.runs.get(runID || "");
    if (!r) {
      const body = h("div", { class: "runbody" });
      const el = h("article", { class: "run", "data-run": runID || "" }, body);
      this.list.appendChild(el);
      r = { el, body };
      this.runs.set(runID || "", r);
    }
    return r;
  }

  streamKey(ev, kind) {
    return [ev.run_id, ev.subagent ? ev.subagent.parent_call_id : "", ev.turn, kind].join("|");
  }

  show(ev, id) {
    const box = () => this.container(ev);
    switch (ev.type) {
      case "run_start": case "subagent_start": {
        const rs = ev.run_start || {};
        if (ev.type === "run_start") { this.running = ev.run_id; this.setRunning(true); }
        box().appendChild(h("div", { class: "marker start", "data-id": id }, (ev.subagent ? "sub-agent " + ev.subagent.agent + " · " : "run · ") +
          [rs.model, rs.provider].filter(Boolean).join(" / ") + (rs.continued ? " · continued" : ""),
          (rs.warnings || []).map((w) => h("div", { class: "warn" }, w)), rs.healed ? h("div", { class: "warn" }, "healed: " + rs.healed) : null));
        break;
      }
      case "text_delta": case "thinking_delta": {
        const kind = ev.type === "text_delta" ? "text" : "thinking";
        const s = this.stream(ev, kind, box);
        s.text += ev.text || "";
        this.paint(s);
        break;
      }
      case "message": this.message(ev, box, id); break;
      case "tool_start": this.toolStart(ev, box, id); break;
      case "tool_end": this.toolEnd(ev, box, id); break;
      case "permission_request": this.ask(ev, box, id); break;
      case "permission_decision": this.decided(ev); break;
      case "plan": this.plan(ev, box, id); break;
      case "question": this.question(ev, box, id); break;
      case "compaction": {
        const c = ev.compaction || {};
        box().appendChild(h("div", { class: "marker compaction", "data-id": id }, "context compacted: " + c.tokens_before + " → " + c.tokens_after +
          " tokens (" + c.trigger + "; " + (c.layers || []).join(", ") + ")" + (c.cause ? " — " + c.cause : "")));
        break;
      }
      case "retry": {
        const r = ev.retry || {};
        this.turnStat(ev).retries++;
        box().appendChild(h("div", { class: "marker retry", "data-id": id }, "retry " + r.attempt + " in " + r.delay_ms + " ms: " + (r.message || r.kind)));
        break;
      }
      case "usage": {
        const u = ev.usage || {}, t = this.turnStat(ev);
        Object.assign(t, { tokens: u.turn || {}, cost: u.cost_usd, end: ev.time });
        if (u.cost_usd !== undefined && !ev.subagent) this.cost.textContent = "run " + usd(u.cost_usd);
        break;
      }
      case "error": {
        const e = ev.error || {};
        box().appendChild(h("div", { class: "error", "data-id": id }, (e.fatal ? "fatal: " : "error: ") + (e.message || e.kind)));
        break;
      }
      case "done": case "subagent_end": {
        const d = ev.done || {};
        box().appendChild(h("div", { class: "marker done", "data-id": id, "data-reason": d.reason },
          (ev.subagent ? "sub-agent done: " : "done: ") + d.reason + " · " + (d.turns || 0) + " turn(s) · " + usd(d.cost_usd) +
          (d.duration_ms ? " · " + (d.duration_ms / 1000).toFixed(1) + " s" : "")));
        if (ev.type === "done") {
          for (const [k, s] of this.streams) if (k.startsWith(ev.run_id + "|")) this.paint(s, true);
          if (this.running === ev.run_id) { this.running = ""; this.setRunning(false); }
          this.expireAsks(ev.run_id);
          this.drain();
        }
        break;
      }
    }
    if (this.list.lastChild && this.atBottom !== false) this.list.lastChild.scrollIntoView({ block: "end" });
  }

  stream(ev, kind, box) {
    const key = this.streamKey(ev, kind);
    let s = this.streams.get(key);
    if (!s) {
      const body = h("div", { class: "md" });
      const el = kind === "thinking"
        ? h("details", { class: "thinking" }, h("summary", {}, "thinking"), body)
        : h("div", { class: "assistant" }, body);
      box().appendChild(el);
      s = { el, body, text: "", kind, pending: false };
      this.streams.set(key, s);
      const t = this.turnStat(ev);
      t.first = t.first || ev.time;
    }
    return s;
  }

  // paint re-renders a streamed block at most once a frame.
  paint(s, now) {
    if (now) { clear(s.body).appendChild(s.kind === "thinking" ? document.createTextNode(s.text) : render(s.text)); return; }
    if (s.pending) return;
    s.pending = true;
    requestAnimationFrame(() => {
      s.pending = false;
      clear(s.body).appendChild(s.kind === "thinking" ? document.createTextNode(s.text) : render(s.text));
    });
  }

  message(ev, box, id) {
    const m = ev.message || {};
    if (m.role === "user") {
      const texts = (m.content || []).filter((b) => b.type === "text").map((b) => b.text);
      const imgs = (m.content || []).filter((b) => b.type === "image");
      if (texts.length || imgs.length) {
        box().appendChild(h("div", { class: "user", "data-id": id }, texts.join("\n"),
          imgs.map((b) => h("img", { class: "thumb", alt: "attached image", src: "data:" + (b.media_type || "image/png") + ";base64," + b.data }))));
      }
      return;
    }
    // An assistant reply: its text and thinking replace what streamed.
    const text = (m.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
    const thinking = (m.content || []).filter((b) => b.type === "thinking").map((b) => b.text).join("");
    if (thinking) { const s = this.stream(ev, "thinking", box); s.text = thinking; this.paint(s, true); }
    if (text) { const s = this.stream(ev, "text", box); s.text = text; this.paint(s, true); s.el.dataset.id = id; }
  }

  toolStart(ev, box, id) {
    const t = ev.tool || {};
    const out = h("div", { class: "output" });
    const card = h("div", { class: "tool running", "data-call": t.id, "data-id": id },
      h("div", { class: "toolhead" }, h("strong", {}, t.name), " ", h("span", { class: "summary" }, summarize(t.name, t.input)),
        h("span", { class: "grow" }), h("span", { class: "outcome" }, "running…")),
      diffOf(t.name, t.input) || h("details", { class: "input" }, h("summary", {}, "input"), h("pre", {}, pretty(t.input))), out);
    card._out = out;
    this.calls.set(t.id, card);
    const ask = this.asks.get(t.id);
    if (ask && ask.parentNode) ask.after(card); else box().appendChild(card);
    this.tools = this.tools || [];
    this.tools.push({ id: t.id, name: t.name, run: ev.run_id, start: ev.time });
  }

  toolEnd(ev, box, id) {
    const t = ev.tool || {};
    let card = this.calls.get(t.id);
    if (!card) { this.toolStart(ev, box, id); card = this.calls.get(t.id); }
    card.classList.remove("running");
    card.classList.add(t.outcome || (t.is_error ? "error" : "ok"));
    const meta = [t.outcome || "ok"];
    if (t.duration_ms !== undefined) meta.push(t.duration_ms + " ms");
    if (t.metadata && t.metadata.exit_code !== undefined) meta.push("exit " + t.metadata.exit_code);
    card.querySelector(".outcome").textContent = meta.join(" · ");
    const text = t.output || "";
    const lines = text.split("\n");
    const shown = lines.length > 40 ? lines.slice(0, 20).concat(["… " + (lines.length - 30) + " more lines …"], lines.slice(-10)).join("\n") : text;
    clear(card._out).appendChild(h("details", { class: "out", open: t.is_error || undefined }, h("summary", {}, "output (" + lines.length + " lines)"),
      h("pre", {}, shown), lines.length > 40 ? h("details", {}, h("summary", {}, "full output"), h("pre", {}, text)) : null));
    const rec = (this.tools || []).find((x) => x.id === t.id);
    if (rec) Object.assign(rec, { ms: t.duration_ms, outcome: t.outcome });
    else (this.tools = this.tools || []).push({ id: t.id, name: t.name, run: ev.run_id, ms: t.duration_ms, outcome: t.outcome });
  }

  ask(ev, box, id) {
    const p = ev.permission || {};
    const plan = this.asks.get(p.call_id);
    if (plan && plan.classList.contains("plan")) { plan.dataset.run = ev.run_id; plan.classList.add("asking"); return; }
    const note = h("input", { type: "text", class: "note", placeholder: "why not (told to the model)", maxlength: 2000 });
    // The rules an "always" answer keeps, as the server decided them
    // (permission.Suggest); none when the command is built at run time.
    const rule = p.suggested && p.suggested.length ? p.suggested.join(", ") : "none (this call allows no safe rule; “always” allows it once)";
    const timer = h("span", { class: "countdown" });
    const card = h("div", { class: "approval asking", "data-call": p.call_id, "data-run": ev.run_id, "data-id": id },
      h("div", {}, h("strong", {}, "Permission: " + p.tool), " ", h("span", { class: "summary" }, summarize(p.tool, p.input))),
      p.reason ? h("div", { class: "muted" }, p.reason) : null,
      diffOf(p.tool, p.input) || h("pre", { class: "input" }, pretty(p.input)),
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary allow-once", onclick: () => this.answer(card, "once") }, "Allow once"),
        h("button", { type: "button", class: "allow-always", title: "keeps an allow rule", onclick: () => this.answer(card, "always") },
          "Always allow: " + rule),
        note,
        h("button", { type: "button", class: "danger deny", onclick: () => this.answer(card, "deny", note.value) }, "Deny"),
        h("span", { class: "grow" }), timer),
      h("div", { class: "muted small" }, "“Always” keeps the rule " + rule + " for you in this directory; unanswered questions are denied when the server's ask timeout passes."),
      h("div", { class: "answered" }));
    this.asks.set(p.call_id, card);
    box().appendChild(card);
    this.countdown(card, timer, ev.time);
  }

  countdown(card, el, since) {
    const end = new Date(since).getTime() + ASK_TIMEOUT_MS;
    const tick = () => {
      if (!card.classList.contains("asking")) { clearInterval(iv); this.timers.delete(iv); return; }
      const left = Math.max(0, end - Date.now());
      el.textContent = "auto-deny in " + Math.floor(left / 60000) + ":" + String(Math.floor(left / 1000) % 60).padStart(2, "0");
    };
    const iv = setInterval(tick, 1000);
    this.timers.add(iv);
    tick();
  }

  async answer(card, answer, message) {
    const body = { answer };
    if (message) body.message = message;
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      await call("POST", "/runs/" + encodeURIComponent(card.dataset.run) + "/permissions/" + encodeURIComponent(card.dataset.call), body);
    } catch (e) {
      for (const b of card.querySelectorAll("button")) b.disabled = false;
      const where = card.querySelector(".answered") || card;
      where.textContent = e.status === 404 ? "this question is no longer pending (answered elsewhere, or timed out)" : "could not answer: " + e.message;
    }
  }

  decided(ev) {
    const p = ev.permission || {};
    const card = this.asks.get(p.call_id);
    if (!card) return;
    card.classList.remove("asking");
    card.classList.add(p.decision === "allow" ? "allowed" : "denied");
    const cd = card.querySelector(".countdown");
    if (cd) cd.textContent = "";
    for (const b of card.querySelectorAll("button, input, textarea")) b.disabled = true;
    const where = card.querySelector(".answered");
    if (where) where.textContent = (p.decision === "allow" ? "allowed" : "denied") + (p.always ? " · rule kept" : "") + " · by " + (p.by || "?") + (p.reason ? " — " + p.reason : "");
  }

  expireAsks(runID) {
    for (const card of this.asks.values()) {
      if (card.dataset.run === runID && card.classList.contains("asking")) {
        card.classList.remove("asking");
        for (const b of card.querySelectorAll("button, input, textarea")) b.disabled = true;
      }
    }
  }

  plan(ev, box, id) {
    const p = ev.plan || {};
    let card = this.asks.get(p.call_id);
    if (p.status === "proposed" || !card) {
      const feedback = h("textarea", { class: "feedback", rows: 2, placeholder: "feedback: what to change in the plan" });
      card = h("div", { class: "plan", "data-call": p.call_id, "data-run": ev.run_id, "data-id": id },
        h("div", {}, h("strong", {}, "Plan"), " ", h("span", { class: "planstatus" }, p.status)),
        h("div", { class: "md" }, render(p.plan)),
        h("div", { class: "row" },
          h("button", { type: "button", class: "primary plan-approve", onclick: () => this.answer(card, "once") }, "Approve → default mode"),
          h("button", { type: "button", class: "plan-approve-edits", onclick: () => this.answer(card, "always") }, "Approve → accept edits")),
        h("div", { class: "row" }, feedback,
          h("button", { type: "button", class: "plan-reject", onclick: () => this.answer(card, "deny", feedback.value) }, "Send back with feedback")),
        h("div", { class: "answered" }));
      this.asks.set(p.call_id, card);
      box().appendChild(card);
    }
    card.querySelector(".planstatus").textContent = p.status + (p.mode ? " → " + p.mode : "");
    if (p.status !== "proposed") {
      card.classList.remove("asking");
      card.classList.add(p.status);
      for (const b of card.querySelectorAll("button, textarea")) b.disabled = true;
      if (p.feedback) card.querySelector(".answered").textContent = p.feedback;
      if (p.status === "ready") {
        const approve = h("button", { type: "button", class: "primary", onclick: () => this.approveReady() }, "Approve and carry it out");
        card.appendChild(h("div", { class: "row" }, "No one could approve it during the run: ", approve));
      }
    }
  }

  // approveReady approves a plan a run stopped at (plan_ready): the
  // session leaves plan mode, then a message carries the plan out.
  async approveReady() {
    await call("PATCH", "/sessions/" + encodeURIComponent(this.sid), { permission_mode: "default" });
    await this.post("The plan is approved: carry it out.", []);
  }

  question(ev, box, id) {
    const q = ev.question && typeof ev.question === "object" ? ev.question : ev;
    const runID = q.run_id || ev.run_id, callID = q.call_id;
    const input = h("input", { type: "text", class: "answer", placeholder: "your answer" });
    const said = h("div", { class: "answered" });
    const card = h("div", { class: "question asking", "data-call": callID, "data-id": id }, h("strong", {}, "Question"), " ",
      h("span", {}, typeof q.question === "string" ? q.question : ""),
      h("div", { class: "row" }, (q.options || []).map((o) => h("button", { type: "button", onclick: () => send(String(o)) }, String(o))),
        input, h("button", { type: "button", class: "primary", onclick: () => send(input.value) }, "Answer"),
        h("button", { type: "button", class: "decline", onclick: () => send("", true) }, "Decline")), said);
    const send = async (answer, declined) => {
      try {
        await call("POST", "/runs/" + encodeURIComponent(runID) + "/questions/" + encodeURIComponent(callID), declined ? { answer: "", declined: true } : { answer });
        card.classList.remove("asking");
        said.textContent = declined ? "declined" : "answered: " + answer;
        for (const b of card.querySelectorAll("button, input")) b.disabled = true;
      } catch (e) {
        said.textContent = e instanceof ApiError && e.status === 404 && /no route/.test(e.message)
          ? "this server does not offer answering questions (POST /runs/{id}/questions)" : "could not answer: " + e.message;
      }
    };
    box().appendChild(card);
  }

  turnStat(ev) {
    const key = (ev.run_id || "") + "|" + (ev.subagent ? ev.subagent.parent_call_id : "") + "|" + (ev.turn || 0);
    let t = this.turns.find((x) => x.key === key);
    if (!t) { t = { key, run: ev.run_id, turn: ev.turn, sub: ev.subagent ? ev.subagent.agent : "", retries: 0, start: this.lastAt.get(ev.run_id) || ev.time, tokens: {} }; this.turns.push(t); }
    return t;
  }

  setRunning(on) {
    this.cancelBtn.disabled = !on;
    this.status.textContent = on ? "running" : "idle";
    this.status.className = "badge " + (on ? "warn" : "");
  }

  async attach(files) {
    for (const f of files) {
      const data = await new Promise((ok, bad) => { const r = new FileReader(); r.onload = () => ok(r.result); r.onerror = bad; r.readAsDataURL(f); });
      const url = URL.createObjectURL(f);
      this.images.push({ data, url, name: f.name });
    }
    this.fileIn.value = "";
    this.showThumbs();
  }

  showThumbs() {
    clear(this.thumbs);
    this.images.forEach((im, i) => this.thumbs.appendChild(h("span", { class: "thumbwrap" }, h("img", { class: "thumb", src: im.url, alt: im.name }),
      h("button", { type: "button", class: "link", onclick: () => { URL.revokeObjectURL(im.url); this.images.splice(i, 1); this.showThumbs(); } }, "×"))));
  }

  // send posts the composer's message, or queues it while a run works.
  async send() {
    const text = this.input.value.trim();
    if (!text && this.images.length === 0) return;
    const images = this.images.map((im) => ({ data: im.data }));
    this.input.value = "";
    for (const im of this.images) URL.revokeObjectURL(im.url);
    this.images = [];
    this.showThumbs();
    if (this.running) { this.queue.push({ text, images }); this.showQueue(); return; }
    await this.post(text, images);
  }

  async post(text, images) {
    try {
      const acc = await call("POST", "/sessions/" + encodeURIComponent(this.sid) + "/messages", images.length ? { text, images } : { text });
      this.running = acc.run_id;
      this.setRunning(true);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) { this.queue.unshift({ text, images }); this.showQueue(); return; }
      this.list.appendChild(h("div", { class: "error" }, "could not send: " + e.message));
    }
  }

  showQueue() {
    clear(this.queued);
    this.queue.forEach((q, i) => this.queued.appendChild(h("li", {}, "queued: " + q.text + (q.images.length ? " (+" + q.images.length + " image)" : ""),
      h("button", { type: "button", class: "link", onclick: () => { this.queue.splice(i, 1); this.showQueue(); } }, "remove"))));
  }

  drain() {
    const next = this.queue.shift();
    this.showQueue();
    if (next) this.post(next.text, next.images);
  }

  async cancel() {
    if (!this.running) return;
    this.cancelBtn.disabled = true;
    try {
      await call("POST", "/runs/" + encodeURIComponent(this.running) + "/cancel");
    } catch (e) {
      this.list.appendChild(h("div", { class: "error" }, "could not cancel: " + e.message));
      this.cancelBtn.disabled = false;
    }
  }

  // loadContext shows the system prompt and tools the session's next run
  // would send (GET /sessions/{id}/context), with their sizes.
  async loadContext(el) {
    const path = "/sessions/" + encodeURIComponent(this.sid) + "/context";
    clear(el).appendChild(h("p", { class: "muted" }, "Building the request…"));
    try {
      const c = await call("GET", path);
      clear(el);
      append(el, [
        h("p", {}, "model " + c.model + " · system prompt " + c.system_bytes + " bytes · " + c.tools.length + " tools, " + c.tools_bytes + " bytes · output limit " + (c.max_tokens || "the model's default")),
        (c.warnings || []).length ? h("ul", { class: "warn" }, c.warnings.map((w) => h("li", {}, w))) : null,
        h("details", {}, h("summary", {}, "System prompt"), h("pre", { id: "context-system" }, c.system)),
        h("table", { id: "context-tools" }, h("tr", {}, ["tool", "origin", "bytes"].map((x) => h("th", {}, x))),
          c.tools.map((t) => h("tr", {}, h("td", {}, t.name), h("td", {}, t.origin), h("td", {}, t.bytes))))]);
    } catch (e) {
      clear(el).appendChild(h("p", { class: "error" }, e instanceof ApiError && e.status === 404 && /no route/.test(e.message)
        ? "this server does not offer GET /sessions/{id}/context" : "could not build the context: " + e.message));
    }
  }

  // renderInspector shows per model call tokens, cache, cost, latency and
  // retries, tool timings, and the raw event log.
  renderInspector() {
    const rows = this.turns.filter((t) => t.turn).map((t) => {
      const u = t.tokens || {};
      const lat = t.first && t.start ? (new Date(t.first) - new Date(t.start)) : "";
      const total = t.end && t.start ? (new Date(t.end) - new Date(t.start)) : "";
      return h("tr", {}, h("td", {}, (t.run || "").slice(0, 12)), h("td", {}, (t.sub ? t.sub + " " : "") + t.turn),
        h("td", {}, u.input_tokens || 0), h("td", {}, u.output_tokens || 0), h("td", {}, u.cache_read_tokens || 0),
        h("td", {}, u.cache_write_tokens || 0), h("td", {}, usd(t.cost)), h("td", {}, lat === "" ? "—" : lat + " ms"),
        h("td", {}, total === "" ? "—" : total + " ms"), h("td", {}, t.retries));
    });
    const tools = (this.tools || []).map((t) => h("tr", {}, h("td", {}, t.name), h("td", {}, t.id), h("td", {}, t.outcome || "running"),
      h("td", {}, t.ms === undefined ? "—" : t.ms + " ms")));
    const log = this.log.map((e) => h("tr", { class: "logrow" }, h("td", {}, e.id), h("td", {}, e.type)));
    const context = h("div", { id: "context" }, h("button", { type: "button", id: "context-load", onclick: () => this.loadContext(context) }, "Show the system prompt and tools"));
    clear(this.inspector);
    append(this.inspector, [
      h("h3", {}, "What the next run offers the model"),
      context,
      h("h3", {}, "Model calls"),
      h("p", { class: "muted small" }, "From the run's usage events: the request's size in bytes is not in the event stream (the audit log and traces have the requests)."),
      h("table", {}, h("tr", {}, ["run", "turn", "input", "output", "cache read", "cache write", "cost (run)", "to first token", "call", "retries"].map((c) => h("th", {}, c))), rows),
      h("h3", {}, "Tool calls"),
      h("table", {}, h("tr", {}, ["tool", "call", "outcome", "duration"].map((c) => h("th", {}, c))), tools),
      h("h3", {}, "Events (" + this.log.length + ", last #" + this.lastId + ", " + this.dupes + " duplicates dropped, " + this.opens + " connection(s))"),
      h("table", { id: "event-log" }, h("tr", {}, h("th", {}, "id"), h("th", {}, "type")), log)]);
  }
}

// summarize is a one-line view of a call's input.
export function summarize(name, input) {
  if (!input || typeof input !== "object") return "";
  const v = input.command || input.file_path || input.path || input.pattern || input.url || input.query || input.description || "";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 120 ? s.slice(0, 117) + "…" : s;
}

// diffOf shows an edit's change as a unified-style diff: old lines with -,
// new ones with +; null for other tools.
export function diffOf(name, input) {
  if (!input || typeof input !== "object") return null;
  let pairs = [];
  if (typeof input.old_string === "string" && typeof input.new_string === "string") pairs = [[input.old_string, input.new_string]];
  else if (Array.isArray(input.edits)) pairs = input.edits.filter((e) => e && typeof e.old_string === "string").map((e) => [e.old_string, e.new_string || ""]);
  else if (name === "write" && typeof input.content === "string") pairs = [["", input.content]];
  if (pairs.length === 0) return null;
  const pre = h("pre", { class: "diff" });
  const file = input.file_path || input.path || "";
  pre.appendChild(h("span", { class: "hunk" }, "--- " + file + "\n+++ " + file + "\n"));
  for (const [a, b] of pairs) {
    const al = a === "" ? [] : a.split("\n"), bl = b === "" ? [] : b.split("\n");
    let p = 0;
    while (p < al.length && p < bl.length && al[p] === bl[p]) p++;
    let q = 0;
    while (q < al.length - p && q < bl.length - p && al[al.length - 1 - q] === bl[bl.length - 1 - q]) q++;
    pre.appendChild(h("span", { class: "hunk" }, "@@\n"));
    for (const l of al.slice(0, p)) pre.appendChild(h("span", {}, "  " + l + "\n"));
    for (const l of al.slice(p, al.length - q)) pre.appendChild(h("span", { class: "del" }, "- " + l + "\n"));
    for (const l of bl.slice(p, bl.length - q)) pre.appendChild(h("span", { class: "add" }, "+ " + l + "\n"));
    for (const l of al.slice(al.length - q)) pre.appendChild(h("span", {}, "  " + l + "\n"));
  }
  return pre;
}
