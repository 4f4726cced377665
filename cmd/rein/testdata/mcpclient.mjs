// A real MCP client, the official TypeScript SDK (@modelcontextprotocol/sdk),
// driving `rein mcp serve` — over stdio (it starts rein), or over streamable
// HTTP with a bearer token (rein already listening): it declares the
// elicitation capability and answers rein's permission questions through it,
// runs a task whose command asks permission (accepted), continues the
// session with one whose command it declines, continues it again with a
// long command it cancels once the command runs (the SDK's AbortSignal
// sends notifications/cancelled), continues once more (at once over
// stdio; over HTTP once the cancelled run is recorded), and lists and
// reads the session. The
// SDK checks every structured result against the tool's output schema.
// It prints what it saw as one JSON line; TestMCPServeTypeScriptClient_FRONT2
// checks it.
//
//   node mcpclient.mjs SDK_DIR WORKSPACE stdio REIN_BINARY
//   MCP_TOKEN=… node mcpclient.mjs SDK_DIR WORKSPACE http URL
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

const [sdkDir, ws, transportKind, target] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdkDir}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { ElicitRequestSchema } = await load("types.js");

let transport;
if (transportKind === "stdio") {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: target, args: ["mcp", "serve"], cwd: ws, env: process.env, stderr: "inherit" });
} else {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
  });
}

const client = new Client({ name: "rein-e2e", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
// The permission questions: accept every command but the one that echoes
// "declined-turn".
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const msg = req.params.message;
  asked.push(msg);
  if (msg.includes("declined-turn")) return { action: "decline" };
  return { action: "accept", content: { always: false } };
});
await client.connect(transport);

const call = (name, args, options) => client.callTool({ name, arguments: args }, undefined, options);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();

const first = (await call("run", { prompt: "Run echo hello-from-tool in the shell and tell me what it printed." })).structuredContent;
const sid = first.session_id;
const second = (await call("continue", { session_id: sid, prompt: "Now run echo declined-turn." })).structuredContent;

// The cancel: once rein reports the command running (a progress
// notification) and the command has written its marker, abort the call.
const abort = new AbortController();
let progress = [];
let cancelError = "";
try {
  await call(
    "continue",
    { session_id: sid, prompt: "Run the long command." },
    {
      signal: abort.signal,
      onprogress: async (p) => {
        progress.push(p.message);
        for (let i = 0; i < 200 && !existsSync(`${ws}/started.txt`); i++) await sleep(25);
        abort.abort("the user pressed stop");
      },
    },
  );
  cancelError = "the cancelled call returned a result";
} catch (e) {
  cancelError = String(e?.message ?? e);
}

// Over stdio the cancel notification reaches rein before the next
// request, so a continue sent at once waits for the cancelled run to let
// the session go. Over HTTP each message is a request of its own, which
// may arrive first: wait for the cancelled run to be recorded as the
// session's third run, as a careful client does.
if (transportKind !== "stdio") {
  for (let i = 0; i < 400; i++) {
    const s = (await call("list_sessions", {})).structuredContent.sessions;
    if (s[0]?.runs === 3) break;
    await sleep(25);
  }
}
const fourth = (await call("continue", { session_id: sid, prompt: "Are you still there?" })).structuredContent;
const listed = (await call("list_sessions", {})).structuredContent.sessions;
const read = (await call("read_session", { session_id: sid })).structuredContent;
await client.close();
console.log(JSON.stringify({ tools, asked, first, second, progress, cancelError, listed, fourth, read }));
