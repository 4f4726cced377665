// A real ACP client, the official TypeScript SDK (@agentclientprotocol/sdk),
// driving `rein acp` over stdio: initialize, a session, a prompt whose
// command asks permission (answered once), a load of the session in a
// second process (its history replayed), the list. It prints what it saw
// as one JSON line; TestTypeScriptClient_FRONT1 checks it.
//
//   node tsclient.mjs SDK_DIR REIN_BINARY WORKSPACE
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, bin, ws] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkDir + "/dist/v1/stable/acp.js").href);

// run starts rein acp and runs op with a client context; it resolves with
// op's result and what the agent sent, once the process has exited.
async function run(op) {
  const child = spawn(bin, ["acp"], { cwd: ws, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const seen = { updates: [], asked: [] };
  const app = acp
    .client()
    .onNotification("session/update", (cx) => {
      seen.updates.push(cx.params.update);
    })
    .onRequest("session/request_permission", (cx) => {
      seen.asked.push(cx.params.options.map((o) => o.kind));
      return { outcome: { outcome: "selected", optionId: "once" } };
    });
  const result = await app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    return { init, ...(await op(cx)) };
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
  return { ...result, code, kinds, text, asked: seen.asked };
}

const first = await run(async (cx) => {
  const s = await cx.request("session/new", { cwd: ws, mcpServers: [] });
  const r = await cx.request("session/prompt", {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text: "Run echo hello-from-tool in the shell and tell me what it printed." }],
  });
  return { sessionId: s.sessionId, modes: s.modes?.availableModes?.map((m) => m.id), stop: r.stopReason };
});
const second = await run(async (cx) => {
  const list = await cx.request("session/list", { cwd: ws });
  await cx.request("session/load", { sessionId: first.sessionId, cwd: ws, mcpServers: [] });
  return { listed: list.sessions.map((s) => s.sessionId) };
});
console.log(JSON.stringify({ first, second }));
