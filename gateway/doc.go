// Package gateway connects chat platforms to rein's sessions (SPEC GW-2):
// `rein gateway` runs channels (Telegram, Slack, Discord, Feishu/Lark, a
// generic webhook — one sub-package each, over the platform's client
// library) and routes every chat, by "<channel>:<chat id>", to a session
// of its own, driven through the runner's service (its [Runtime]) like the server's.
//
// The way of a message:
//
//	platform ─update→ Channel ─HandleMessage→ Gateway: allowlist, dedupe
//	  (State: inbox), command or Runtime.Submit (a durable run)
//	  → acknowledged to the platform
//	runner ─events (eventbus)→ follower of the chat: progress and tool
//	  hints as edits of one message (at the platform's edit rate),
//	  permission questions as buttons, the final reply split at the
//	  platform's size → Channel.Send/Edit (retried on 429 and outages)
//	  → State: the progress message, the parts taken, answered
//
// An update is acknowledged only once stored, so a crash loses none; it
// is handled once however often the platform delivers it; a reply is sent
// once, and a restart delivers the replies of runs that ended while the
// gateway was down. Across a stop the state carries a reply's progress
// message and the parts the platform took, so a restarted gateway edits
// that message again (a repeated edit changes nothing) and sends only the
// parts not taken; each part carries an [Outgoing.Key] that platforms
// with idempotency keys deduplicate by. The one window left: a new
// message that a platform without such keys took, whose answer the
// gateway's state never got (a stop or crash mid-call, a crash in the
// one database write after it, a lost answer), is sent again. Runs of one chat go one at a time (the session's
// lane); /stop cancels them. Chats are kept in a pool and dropped from
// memory when idle; their state lives in the stores.
package gateway
