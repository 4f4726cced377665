// A real ACP client, the official TypeScript SDK (@agentclientprotocol/sdk),
// driving `rein acp` over stdio: initialize, a session, a prompt whose
// command asks permission (answered once), the reasoning effort and the
// mode set, a prompt whose long command is cancelled while it runs, a
// third prompt; a load of the session in a second process (its history
// replayed), the list; then, in a third, a
// client offering its files: its readTextFile answers notes.txt with a
// buffer not saved (UNSAVED-BUFFER-TEXT), which the model must be sent.
// It prints what it saw as one JSON line; TestTypeScriptClient_FRONT1
// checks it.
//
//   node tsclient.mjs SDK_DIR REIN_BINARY WORKSPACE
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, bin, ws] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkDir + "/dist/v1/stable/acp.js").href);

// run starts rein acp and runs op with a client context; it resolves with
// op's result and what the agent sent, once the process has exited.
async function run(op, capabilities = {}) {
  const child = spawn(bin, ["acp"], { cwd: ws, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const seen = { updates: [], asked: [], fs: [] };
  const app = acp
    .client()
    .onNotification("session/update", (cx) => {
      const u = cx.params.update;
      seen.updates.push(u);
      if (u.sessionUpdate === "tool_call" && u.status === "in_progress" && seen.onToolStart) {
        const f = seen.onToolStart;
        seen.onToolStart = null;
        f();
      }
    })
    .onRequest("session/request_permission", (cx) => {
      seen.asked.push(cx.params.options.map((o) => o.kind));
      return { outcome: { outcome: "selected", optionId: "once" } };
    })
    .onRequest("fs/read_text_file", (cx) => {
      seen.fs.push("read " + cx.params.path);
      if (cx.params.path === ws + "/notes.txt") return { content: "UNSAVED-BUFFER-TEXT\n" };
      throw new Error("no buffer for " + cx.params.path);
    })
    .onRequest("fs/write_text_file", (cx) => {
      seen.fs.push("write " + cx.params.path);
      return {};
    });
  const result = await app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", { protocolVersion: 1, clientCapabilities: capabilities });
    return { init, ...(await op(cx, seen)) };
  });
  child.stdin.end();
  const code = await exited;
  const kinds = seen.updates.map((u) =>
    u.sessionUpdate.startsWith("tool_call") ? `${u.sessionUpdate}:${u.kind ?? ""}:${u.status ?? ""}` : u.sessionUpdate,
  );
  const text = seen.updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
  return { ...result, code, kinds, text, asked: seen.asked, fs: seen.fs };
}

// The first process: a prompt whose command asks permission; the
// reasoning effort set to high and the mode to bypass; a second prompt
// whose long command runs unasked and is cancelled (session/cancel) once
// it has started; a third prompt in the same session.
const first = await run(async (cx, seen) => {
  const s = await cx.request("session/new", { cwd: ws, mcpServers: [] });
  const say = (text) => cx.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
  const r = await say("Run echo hello-from-tool in the shell and tell me what it printed.");
  const effort = await cx.request("session/set_config_option", { sessionId: s.sessionId, configId: "effort", value: "high" });
  await cx.request("session/set_mode", { sessionId: s.sessionId, modeId: "bypass" });
  seen.onToolStart = async () => {
    for (let i = 0; i < 200 && !existsSync(ws + "/started.txt"); i++) await sleep(25);
    await cx.notify("session/cancel", { sessionId: s.sessionId });
  };
  const cancelled = await say("Run the long command.");
  const again = await say("Are you still there?");
  return {
    sessionId: s.sessionId,
    modes: s.modes?.availableModes?.map((m) => m.id),
    options: s.configOptions?.map((o) => `${o.id}=${o.currentValue}`),
    effort: effort.configOptions?.map((o) => `${o.id}=${o.currentValue}`),
    stop: r.stopReason,
    cancelStop: cancelled.stopReason,
    againStop: again.stopReason,
  };
});
const second = await run(async (cx) => {
  const list = await cx.request("session/list", { cwd: ws });
  await cx.request("session/load", { sessionId: first.sessionId, cwd: ws, mcpServers: [] });
  return { listed: list.sessions.map((s) => s.sessionId) };
});
const third = await run(
  async (cx) => {
    const s = await cx.request("session/new", { cwd: ws, mcpServers: [] });
    const r = await cx.request("session/prompt", {
      sessionId: s.sessionId,
      prompt: [{ type: "text", text: "What does notes.txt say?" }],
    });
    return { stop: r.stopReason };
  },
  { fs: { readTextFile: true, writeTextFile: true } },
);
console.log(JSON.stringify({ first, second, third }));
