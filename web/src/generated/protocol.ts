// Generated from the duet-protocol crate by `DUET_BLESS=1 cargo test -p duet-protocol`.
// Do not edit: a test fails when this file drifts from the Rust types.

export const PROTOCOL_VERSION = 1;

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type SessionId = string;

export type ClientId = number;

export type ErrorCode = "bad_message" | "unknown_type" | "too_large" | "session_not_found" | "unknown_profile" | "unknown_request" | "already_resolved" | "session_ended" | "no_sidecar" | "limit_reached" | "unauthorized" | "forbidden" | "internal" | "not_resumable" | "profile_misconfigured";

export type SessionStatus = "running" | "exited";

export type ExitInfo = { 
/**
 * Exit code, when the program exited by itself.
 */
code?: number, 
/**
 * The signal that ended the program, e.g. `SIGHUP` (then `code` is absent).
 */
signal?: string, 
/**
 * Whether the program exited by itself with code 0.
 */
success: boolean, 
/**
 * duet ended the program because duet itself was stopping (a SIGTERM
 * to the server, e.g. `systemctl stop`), or an earlier duet went away
 * without recording the end. The code or signal is then that of the
 * shutdown, not a crash of the program.
 */
server_stopped?: boolean, 
/**
 * The principal that ended the session (`DELETE /api/sessions/{id}`):
 * an end someone asked for, not a failure of the program, whatever
 * its code or signal.
 */
ended_by?: string, };

export type ApprovalState = "pending" | "allowed" | "denied" | "abandoned";

export type Decider = "client" | "terminal" | "notification" | "policy";

export type ApprovalOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

export type ApprovalOption = { 
/**
 * What a client sends back to choose it.
 */
id: string, 
/**
 * The agent's own wording, e.g. "Yes, allow once".
 */
label: string, 
/**
 * What choosing it does, whatever the agent calls it.
 */
kind: ApprovalOptionKind, };

export type Approval = { 
/**
 * The `control_request`'s id: the agent's own (Qwen Code), or one duet
 * made (a UUID for Claude Code's hooks, `acp-<n>`, `codex-<n>`). What
 * `POST .../approvals/{request_id}` and `approve` name.
 */
request_id: string, 
/**
 * The tool the agent wants to run, in its own name for it (e.g.
 * `run_shell_command`, `Bash`, `edit`).
 */
tool_name: string, 
/**
 * The tool call's id in the conversation (its `tool_use` block), when
 * the agent says: ties the approval to the call in the chat.
 */
tool_use_id?: string, 
/**
 * The tool's arguments as the program reported them.
 */
input: JsonValue, 
/**
 * Where the approval stands: pending, allowed, denied or abandoned.
 */
state: ApprovalState, 
/**
 * Who decided, once decided; absent for an abandoned request, and
 * for a decision of a session from an earlier run of duet that did
 * not keep its deciders (not known, rather than guessed).
 */
decided_by?: Decider, 
/**
 * Which credential decided, when a client did (in the browser, over
 * the API or from a notification): `owner`, a named token's name, or
 * `share:<id>`; for a policy, the rule's name (audit and approval
 * cards).
 */
decided_by_name?: string, 
/**
 * Why, when duet gave the agent a reason: a policy rule's message for
 * a denial.
 */
reason?: string, 
/**
 * The choices the agent offers, in its order (its own UI shows the
 * same ones).
 */
options: Array<ApprovalOption>, 
/**
 * The option chosen, once decided by a client (or known from the agent).
 */
chosen?: string, 
/**
 * The agent has confirmed the outcome. A client's decision is sent at
 * once but counts as "sent, waiting for the agent" until then.
 */
confirmed: boolean, 
/**
 * Seq of the `control_request` event.
 */
seq: number, };

export type ChannelInfo = { 
/**
 * The profile's `channel`: `dual_output` (an events file and an input
 * file), `claude` or `gemini` (the agent's hooks), `codex` (its app
 * server), `stream_json`, `stream_json_per_turn` or `acp` (a headless
 * agent on pipes), or `none` (terminal only).
 */
kind: string, 
/**
 * Events flow, so there is a chat view.
 */
events: boolean, 
/**
 * Prompts can be sent from the chat.
 */
submit: boolean, 
/**
 * Tool approvals can be answered from the chat.
 */
approve: boolean, };

export type Role = "owner" | "driver" | "approver" | "viewer";

export type ConnectedClient = { 
/**
 * The connection's id, as its `hello.client_id` said (numbered from 1
 * per server run).
 */
client_id: ClientId, 
/**
 * The principal: `owner` for the main token, a `[[token]]` name, or
 * `share:<share id>`.
 */
name: string, 
/**
 * What this client may do (its credential's role).
 */
role: Role, 
/**
 * What the client calls its device ("Chrome on Android"), as it said
 * when it connected (`?device=` on the WebSocket); tells two tabs of
 * one principal apart.
 */
device?: string, };

export type CreateShare = { 
/**
 * `driver`, `approver` or `viewer` (an owner share is refused).
 */
role: Role, 
/**
 * Seconds until the link stops working (1 to 604800, 7 days).
 */
expires_in: number, };

export type Share = { 
/**
 * The share's id: `DELETE /api/sessions/{id}/shares/{share_id}` revokes
 * it, and its holder's principal is `share:<id>`.
 */
id: string, 
/**
 * What the link lets its holder do (never `owner`).
 */
role: Role, 
/**
 * When the link stops working, Unix time in milliseconds.
 */
expires_at: number, 
/**
 * A relative URL (`/?share=<secret>`) that opens the session with
 * this role; shown once.
 */
url?: string, };

export type Me = { 
/**
 * `owner` for the main token, a `[[token]]` name, or `share:<share id>`.
 */
name: string, 
/**
 * The credential's role: what the caller may do.
 */
role: Role, 
/**
 * For a share link: the one session it opens.
 */
session?: SessionId, 
/**
 * For a share link: when it stops working (Unix time in milliseconds).
 */
expires_at?: number, };

export type HeldPrompt = { 
/**
 * Numbers the prompt in its session (what `discard` names).
 */
n: number, 
/**
 * The prompt, as the client submitted it.
 */
text: string, };

export type Hello = { 
/**
 * The session this connection is attached to.
 */
session_id: SessionId, 
/**
 * This connection's id (numbered from 1 per server run), as
 * `clients` and `connected` name it.
 */
client_id: ClientId, 
/**
 * What this client may do.
 */
role: Role, 
/**
 * Who this client is: `owner`, a `[[token]]` name, or `share:<id>`.
 */
principal: string, 
/**
 * Who is attached, this client included.
 */
clients: Array<ConnectedClient>, 
/**
 * duet's client protocol version ([`crate::PROTOCOL_VERSION`]).
 */
protocol_version: number, 
/**
 * duet's version.
 */
server_version: string, 
/**
 * What this server can do ([`CAPABILITIES`], e.g. `held`, `modes`): a
 * client checks for a feature before it relies on it.
 */
capabilities: Array<string>, 
/**
 * The profile the session runs, by name.
 */
profile: string, 
/**
 * The session's side channel: what the chat view can do.
 */
channel: ChannelInfo, 
/**
 * Whether the program still runs.
 */
status: SessionStatus, 
/**
 * The terminal's width now, in columns (character cells).
 */
cols: number, 
/**
 * The terminal's height now, in rows (character cells).
 */
rows: number, 
/**
 * The highest event seq the server has; events after the client's
 * `from` up to this one follow the hello.
 */
last_seq: number, 
/**
 * Approvals still pending, and those decided recently.
 */
approvals: Array<Approval>, 
/**
 * The agent's approval/permission modes, once duet knows them;
 * updated by [`ServerMessage::Modes`].
 */
modes?: AgentModes, 
/**
 * Set when the program has already exited.
 */
exit?: ExitInfo, 
/**
 * The program's handshake (`session_start.data`) once seen.
 */
agent?: JsonValue, 
/**
 * Prompts the program never took (see [`HeldPrompt`]); updated by
 * [`ServerMessage::Unsent`].
 */
unsent: Array<HeldPrompt>, 
/**
 * Prompts waiting for the agent to be ready (see [`HeldPrompt`]);
 * updated by [`ServerMessage::Unsent`].
 */
held: Array<HeldPrompt>, };

export type ResyncReason = "attach" | "lagged" | "resize";

export type ServerMessage = { "type": "hello" } & Hello | { "type": "event", 
/**
 * The event's 1-based line number in the events file.
 */
seq: number, 
/**
 * When duet received the event: milliseconds since the session's
 * clock started, which is time 0 of its terminal recording (the
 * asciicast's offsets), so replay lines both up. Absent when not
 * known (a session from before duet kept times).
 */
at?: number, 
/**
 * The event object, verbatim: one of the modelled sidecar events, or
 * any other object (an unknown type passes through).
 */
event: SidecarEvent, } | { "type": "warning", 
/**
 * Numbers the session's warnings from 1, so none is shown twice.
 */
id: number, 
/**
 * What happened, in snake_case: e.g. `invalid_line`, `line_too_long`,
 * `budget_exhausted`, `submit_ignored`. A string, not an enum, so
 * a newer server's codes reach an older client (which shows the
 * `message`).
 */
code: string, 
/**
 * What happened, in words for a person.
 */
message: string, 
/**
 * The line's number in the events file, when it had one.
 */
seq?: number, } | { "type": "approval" } & Approval | { "type": "modes" } & AgentModes | { "type": "resync", 
/**
 * The snapshot's width, in columns: the terminal's size now.
 */
cols: number, 
/**
 * The snapshot's height, in rows.
 */
rows: number, 
/**
 * Why the screen is sent whole.
 */
reason: ResyncReason, } | { "type": "resize", 
/**
 * The new width, in columns (character cells).
 */
cols: number, 
/**
 * The new height, in rows (character cells).
 */
rows: number, } | { "type": "exit" } & ExitInfo | { "type": "clients", 
/**
 * Every client attached now, this one included.
 */
clients: Array<ConnectedClient>, } | { "type": "error", 
/**
 * Which error, for a program to branch on (e.g. `forbidden`).
 */
code: ErrorCode, 
/**
 * What went wrong, in words for a person.
 */
message: string, 
/**
 * The `id` of the client message this answers, if it had one.
 */
id?: string, } | { "type": "ack", 
/**
 * The `id` of the client message that was carried out.
 */
id: string, 
/**
 * For `submit`: true when the text is held until the program is
 * ready to read input, false when it has been written already.
 */
queued: boolean, } | { "type": "unsent", 
/**
 * Unsent prompts: the program never took them and none will go by
 * itself (see [`HeldPrompt`]).
 */
prompts: Array<HeldPrompt>, 
/**
 * Prompts waiting for the agent to be ready, in the order they go
 * (by themselves, when its turn ends). Absent from a server
 * without the `held` capability.
 */
held: Array<HeldPrompt>, } | { "type": "pong", 
/**
 * The `ping`'s `id`, echoed.
 */
id?: string, };

export type ClientMessage = { "type": "submit", 
/**
 * The prompt (a slash command such as `/compact` too): not blank, at
 * most 256 KiB of UTF-8 ([`crate::command::MAX_SUBMIT_BYTES`]).
 */
text: string, 
/**
 * Echoed in the `ack` (or `error`) that answers this message; without
 * it, success is silent.
 */
id?: string, } | { "type": "approve", 
/**
 * The approval's `request_id`.
 */
request_id: string, 
/**
 * `true` chooses the approval's first allowing option, `false` its
 * first rejecting one. Send this or `option`, not both.
 */
allowed?: boolean, 
/**
 * The `id` of one of the approval's `options`. Send this or
 * `allowed`, not both.
 */
option?: string, 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "discard", 
/**
 * The prompt's `n`.
 */
prompt: number, 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "resize", 
/**
 * The new width, in columns (character cells): clamped to 2..=1000;
 * 0 is refused.
 */
cols: number, 
/**
 * The new height, in rows: clamped to 1..=500; 0 is refused.
 */
rows: number, 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "cancel", 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "pause", 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "resume", 
/**
 * Echoed in the `ack` (or `error`) that answers this message.
 */
id?: string, } | { "type": "ping", 
/**
 * Echoed in the `pong` that answers it.
 */
id?: string, };

export type CreateSession = { 
/**
 * Profile name; the server's default profile when absent.
 */
profile?: string, 
/**
 * Terminal width in columns (character cells): 120 when absent,
 * clamped to 2..=1000; 0 is refused.
 */
cols?: number, 
/**
 * Terminal height in rows (character cells): 36 when absent, clamped
 * to 1..=500; 0 is refused.
 */
rows?: number, 
/**
 * The program's working directory (owner only): an absolute path to an
 * existing directory outside duet's state directory. Default: the
 * profile's `cwd`, else a fresh private directory.
 */
cwd?: string, 
/**
 * Arguments appended to the profile's own (owner only, and only for a
 * profile with `extra_args = true`), verbatim.
 */
args?: Array<string>, };

export type ResumeSession = { 
/**
 * Terminal width in columns (character cells), clamped to 2..=1000.
 */
cols?: number, 
/**
 * Terminal height in rows (character cells), clamped to 1..=500.
 */
rows?: number, };

export type TokenCounts = { 
/**
 * Prompt tokens sent (without the cached ones, where the API tells
 * them apart).
 */
input: number, 
/**
 * Tokens the model wrote.
 */
output: number, 
/**
 * Prompt tokens read from the API's cache.
 */
cache_read: number, 
/**
 * Prompt tokens written to the API's cache.
 */
cache_write: number, };

export type ContextUse = { 
/**
 * Tokens the conversation fills now: as the agent says (ACP), else
 * the last model call's prompt, cached tokens included.
 */
used: number, 
/**
 * The context window, when the agent says.
 */
size?: number, };

export type TurnUsage = { 
/**
 * 1 for the session's first turn.
 */
n: number, 
/**
 * Unix ms.
 */
started_at: number, 
/**
 * How long the turn ran, as duet saw it; absent while it runs.
 */
duration_ms?: number, 
/**
 * Time spent waiting on the model's API, where the agent reports it.
 */
api_ms?: number, 
/**
 * Tokens the turn's model calls used.
 */
tokens: TokenCounts, 
/**
 * Cost, where the agent reports it (see [`UsageTotals::currency`]).
 */
cost?: number, 
/**
 * Tool calls that finished in this turn.
 */
tool_calls: number, };

export type UsageTotals = { 
/**
 * Turns begun.
 */
turns: number, 
/**
 * Tokens of every turn so far, added up.
 */
tokens: TokenCounts, 
/**
 * Cost, where the agent reports it.
 */
cost?: number, 
/**
 * The unit of `cost`: `USD` unless the agent names another.
 */
currency?: string, 
/**
 * Wall-clock time the agent spent working on turns (the running one
 * included), ms.
 */
busy_ms: number, 
/**
 * Time spent waiting on the model's API, where reported, ms.
 */
api_ms?: number, 
/**
 * Tool calls that finished (`ok` and `error`).
 */
tool_calls: number, 
/**
 * Of `tool_calls`, those whose result was an error (`is_error`).
 */
tool_errors: number, 
/**
 * How full the model's context is, where the agent reports it.
 */
context?: ContextUse, };

export type Budget = { 
/**
 * Turns begun.
 */
turns?: number, 
/**
 * Tokens in and out.
 */
tokens?: number, 
/**
 * Cost, in the agent's currency (agents that report none are not
 * held by it).
 */
cost?: number, 
/**
 * Seconds of the agent's working time (see [`UsageTotals::busy_ms`]).
 */
wall_secs?: number, 
/**
 * Also interrupt the running turn once a limit is passed (else it
 * finishes and the next prompt waits).
 */
interrupt?: boolean, };

export type BudgetStatus = { 
/**
 * The limits in force (`PUT /api/sessions/{id}/budget` sets them).
 */
limits: Budget, 
/**
 * Why prompts are held, once a limit is reached (e.g. "the budget of
 * 3 turns is spent").
 */
exhausted?: string, };

export type SessionUsage = { 
/**
 * The session's usage so far (as `SessionInfo.usage` has it).
 */
totals: UsageTotals, 
/**
 * The most recent turns, oldest first (at most 100).
 */
turns: Array<TurnUsage>, 
/**
 * The session's budget and whether it is spent; absent without one.
 */
budget?: BudgetStatus, };

export type SessionInfo = { 
/**
 * duet's id for the session: what `/api/sessions/{id}/...` and the
 * WebSocket (`/api/sessions/{id}/ws`) take.
 */
id: SessionId, 
/**
 * The name an owner gave the session (`PATCH /api/sessions/{id}`).
 */
name?: string, 
/**
 * The profile it runs, by name (`qwen`, `claude`, `demo`, ...; see
 * `GET /api/profiles`).
 */
profile: string, 
/**
 * Whether the program still runs.
 */
status: SessionStatus, 
/**
 * When the session was started, Unix time in milliseconds.
 */
created_at: number, 
/**
 * When the program ended, Unix time in milliseconds; absent while it
 * runs.
 */
ended_at?: number, 
/**
 * How the program ended; absent while it runs.
 */
exit?: ExitInfo, 
/**
 * The program's process id on the server (it leads a process group of
 * its own); absent when the session has no long-lived process (a
 * headless agent started once per turn).
 */
pid?: number, 
/**
 * The terminal's width now, in columns (character cells).
 */
cols: number, 
/**
 * The terminal's height now, in rows (character cells).
 */
rows: number, 
/**
 * Highest event seq so far (0 before the first event).
 */
last_seq: number, 
/**
 * Tool approvals waiting for a decision now.
 */
pending_approvals: number, 
/**
 * WebSocket clients attached now (`connected` lists them).
 */
clients: number, 
/**
 * Who is attached (the principal and role of each client).
 */
connected: Array<ConnectedClient>, 
/**
 * Where the program runs (its working directory).
 */
work_dir?: string, 
/**
 * The window title the program set, if any, without spinner glyphs
 * and padding.
 */
title?: string, 
/**
 * The session's side channel.
 */
channel: ChannelInfo, 
/**
 * The agent's own id for its conversation (from its events), which a
 * resume hands back to it.
 */
agent_session_id?: string, 
/**
 * The ended session this one resumed.
 */
resumed_from?: SessionId, 
/**
 * The latest session that resumed this one: where its conversation
 * goes on (a client offers to open it instead of resuming again).
 */
resumed_by?: SessionId, 
/**
 * The conversation's first prompt, shortened: what the session is
 * called until an owner names it (`name` wins whenever it is set).
 */
prompt_name?: string, 
/**
 * Whether `POST /api/sessions/{id}/resume` can start this conversation
 * again (it ended, its profile can resume, and the agent's id is known).
 */
resumable: boolean, 
/**
 * What the agent reported spending so far (absent before its first
 * turn).
 */
usage?: UsageTotals, 
/**
 * The session's budget, when it has one.
 */
budget?: BudgetStatus, };

export type HistoryLine = { 
/**
 * The earlier session the event belongs to.
 */
session: SessionId, 
/**
 * Its seq in that session.
 */
seq: number, 
/**
 * The event as that session recorded it.
 */
event: SidecarEvent, };

export type RenameSession = { 
/**
 * The new name, e.g. "nightly refactor"; `""` clears it (the session
 * is then called by its first prompt again).
 */
name: string, };

export type BoardEntry = { 
/**
 * The session as `GET /api/sessions/{id}` shows it.
 */
session: SessionInfo, 
/**
 * When the program last did something: an event, terminal output (to
 * the second), a change of clients or approvals; Unix time in ms.
 */
last_activity: number, 
/**
 * The approvals waiting for a decision, oldest first (tool and input).
 */
pending: Array<Approval>, 
/**
 * When the running turn began (Unix ms), while the agent works on one.
 */
busy_since?: number, };

export type Board = { 
/**
 * Every session the caller may see: those with approvals waiting
 * first, then running ones, then ended ones; newest first within each.
 */
sessions: Array<BoardEntry>, };

export type PushKey = { 
/**
 * The uncompressed P-256 point (65 bytes), base64url without padding.
 */
public_key: string, };

export type PushSubscriptionKeys = { 
/**
 * The browser's P-256 public key (65 bytes, uncompressed).
 */
p256dh: string, 
/**
 * The authentication secret (16 bytes).
 */
auth: string, };

export type PushSubscribe = { 
/**
 * The push service's URL for this browser (https, at most 2048
 * characters); it also names the device in `DELETE` and `mute`.
 */
endpoint: string, 
/**
 * The keys duet encrypts each message with (RFC 8291).
 */
keys: PushSubscriptionKeys, 
/**
 * What browsers send (usually `null`); not used.
 */
expirationTime?: number | null, };

export type PushUnsubscribe = { 
/**
 * The device to turn off: its push endpoint, as it subscribed.
 */
endpoint: string, };

export type PushMute = { 
/**
 * The device: its push endpoint, as it subscribed.
 */
endpoint: string, 
/**
 * The session to mute or unmute on that device.
 */
session: SessionId, 
/**
 * `true`: no more pushes about the session; `false`: they come again.
 */
muted: boolean, };

export type PushDevice = { 
/**
 * The push service's URL for the device, as it subscribed.
 */
endpoint: string, 
/**
 * Sessions this device hears nothing about.
 */
muted: Array<SessionId>, 
/**
 * Unix time in milliseconds.
 */
created_at: number, };

export type PushKind = "approval" | "turn" | "exit";

export type PushAction = { 
/**
 * `allow` or `deny`: what the worker sends as `allowed`.
 */
action: string, 
/**
 * The button's label ("Allow", "Deny").
 */
title: string, };

export type PushDecide = { 
/**
 * Relative to the app: `./api/push/decide`.
 */
url: string, 
/**
 * A secret good for this one approval, this device's principal, one
 * use and a few minutes (`expires_at`).
 */
capability: string, 
/**
 * Unix ms.
 */
expires_at: number, };

export type PushShow = { 
/**
 * The notification's tag: a later one with the same tag replaces it,
 * and `close` names it.
 */
tag: string, 
/**
 * The notification's title, e.g. "nightly: allow edit?" or "nightly:
 * turn finished".
 */
title: string, 
/**
 * Its text, e.g. the tool's input in short ("a b.rs (−1 +1 line)"), or
 * "The program exited with status 2.".
 */
body: string, 
/**
 * Where a click goes, relative to the app (`./#/session/<id>…`).
 */
url: string, 
/**
 * What it is about: an approval, a finished turn, or an exit.
 */
kind: PushKind, 
/**
 * The session it is about (the worker does not show it while a tab
 * shows the session).
 */
session: SessionId, 
/**
 * For an approval: its request id.
 */
request_id?: string, 
/**
 * Buttons on the notification (`Notification.actions`): Allow and
 * Deny for an approval, to a device whose principal may approve.
 */
actions?: Array<PushAction>, 
/**
 * How the worker answers with those buttons: present exactly when
 * `actions` is.
 */
decide?: PushDecide, };

export type PushPayload = PushShow | { 
/**
 * The `tag` of the notification to close.
 */
close: string, };

export type PushDecision = { 
/**
 * The secret from the notification's `decide`: it is the credential.
 */
capability: string, 
/**
 * `true` allows the tool call, `false` denies it.
 */
allowed: boolean, 
/**
 * The approval the worker means (its notification's `request_id`):
 * refused when it is not the capability's own.
 */
request_id?: string, };

export type ProfileInfo = { 
/**
 * What `POST /api/sessions` takes as `profile`, e.g. `qwen` or `demo`.
 */
name: string, 
/**
 * One line about the profile from its config, for a picker (e.g. "Qwen
 * Code with dual output"); absent when the config gives none.
 */
description?: string, 
/**
 * Whether sessions of this profile have the structured sidecar (chat view).
 */
sidecar: boolean, 
/**
 * The profile's side channel.
 */
channel: ChannelInfo, 
/**
 * Whether ended sessions of this profile can be resumed.
 */
resume: boolean, 
/**
 * Whether this is the profile used when none is named.
 */
default: boolean, };

export type SubmitRequest = { 
/**
 * The prompt, as if typed into the agent (a slash command such as
 * `/compact` too): not blank, at most 256 KiB of UTF-8
 * ([`crate::command::MAX_SUBMIT_BYTES`]), else `too_large`.
 */
text: string, };

export type AgentModes = { 
/**
 * The mode the agent is in now, when known (one of `available`).
 */
current?: string, 
/**
 * The modes it can be switched to, in the agent's order.
 */
available: Array<AgentMode>, };

export type AgentMode = { 
/**
 * What `POST /api/sessions/{id}/mode` takes.
 */
id: string, 
/**
 * The agent's own name for it.
 */
name: string, };

export type SetModeRequest = { 
/**
 * The `id` of one of `hello.modes.available`, e.g. `plan`, `default`
 * or `acceptEdits` (each agent names its own).
 */
mode: string, };

export type SetModelRequest = { 
/**
 * The `modelId` of one of the handshake's `availableModels`.
 */
model: string, };

export type SubmitResponse = { 
/**
 * True when held until the program is ready to read input.
 */
queued: boolean, };

export type ApprovalDecision = { 
/**
 * `true` chooses the approval's first allowing option, `false` its
 * first rejecting one. Send this or `option`, not both.
 */
allowed?: boolean, 
/**
 * The `id` of one of the approval's `options` (e.g. `allow`, `deny`;
 * ACP agents name their own). Send this or `allowed`, not both.
 */
option?: string, };

export type ApiError = { 
/**
 * What went wrong.
 */
error: ApiErrorBody, };

export type ApiErrorBody = { 
/**
 * Which error, for a program to branch on (e.g. `session_not_found`).
 */
code: ErrorCode, 
/**
 * What went wrong, in words for a person (e.g. "cols and rows must be
 * positive"); may change between versions.
 */
message: string, };

export type SidecarEvent = KnownEvent | { [key in string]: JsonValue };

export type KnownEvent = { "type": "system" } & SystemEvent | { "type": "user" } & MessageEvent | { "type": "assistant" } & MessageEvent | { "type": "stream_event" } & StreamEventEnvelope | { "type": "result" } & ResultEvent | { "type": "control_request" } & ControlRequest | { "type": "control_response" } & ControlResponse;

export type EventEnvelope = { 
/**
 * Unique id of this event (an assistant message's id for `assistant`).
 */
uuid?: string, 
/**
 * The program's own session id (not duet's).
 */
session_id?: string, 
/**
 * Set when the event belongs to a sub-agent's tool call; often an explicit null.
 */
parent_tool_use_id?: string | null, };

export type SystemEvent = { 
/**
 * `session_start`, `session_end`, or another subtype.
 */
subtype: string, 
/**
 * Subtype-specific payload; see [`SessionStartData`].
 */
data?: JsonValue, 
/**
 * Unique id of this event (an assistant message's id for `assistant`).
 */
uuid?: string, 
/**
 * The program's own session id (not duet's).
 */
session_id?: string, 
/**
 * Set when the event belongs to a sub-agent's tool call; often an explicit null.
 */
parent_tool_use_id?: string | null, };

export type SessionStartData = { 
/**
 * The program's own id for its conversation: what a resume hands back
 * to it (`SessionInfo.agent_session_id`).
 */
session_id?: string, 
/**
 * The directory the program works in, as it says.
 */
cwd?: string, 
/**
 * Absent before protocol 1; treat absence as 0.
 */
protocol_version?: number, 
/**
 * The program's version string.
 */
version?: string, 
/**
 * Event kinds the program says it may emit.
 */
supported_events?: Array<string>, };

export type MessageEvent = { 
/**
 * The message itself.
 */
message: SidecarMessage, 
/**
 * Unique id of this event (an assistant message's id for `assistant`).
 */
uuid?: string, 
/**
 * The program's own session id (not duet's).
 */
session_id?: string, 
/**
 * Set when the event belongs to a sub-agent's tool call; often an explicit null.
 */
parent_tool_use_id?: string | null, };

export type SidecarMessage = { 
/**
 * `user` or `assistant`.
 */
role: string, 
/**
 * What the message says: text, thinking, tool calls, tool results.
 */
content: MessageContent, 
/**
 * The model API's id for an assistant message (e.g. `msg_…`): the one
 * its streamed `message_start` had, so the final message replaces
 * what was streamed.
 */
id?: string, 
/**
 * The model that wrote an assistant message, e.g. `qwen3-coder-plus`.
 */
model?: string, };

export type MessageContent = Array<ContentBlock> | string;

export type ContentBlock = KnownBlock | { [key in string]: JsonValue };

export type KnownBlock = { "type": "text", 
/**
 * The text; empty in a `content_block_start`, whose `text_delta`s
 * bring it.
 */
text: string, } | { "type": "thinking", 
/**
 * The reasoning, as text; empty in a `content_block_start`, whose
 * `thinking_delta`s bring it.
 */
thinking: string, } | { "type": "tool_use", 
/**
 * The call's id (e.g. `toolu_…`, `call_…`): its `tool_result` and its
 * approval's `tool_use_id` name it.
 */
id: string, 
/**
 * The tool, in the agent's name for it (e.g. `run_shell_command`, `Bash`).
 */
name: string, 
/**
 * The tool's arguments, a JSON object (`{}` in a block that is still
 * streaming its input).
 */
input: JsonValue, } | { "type": "tool_result", 
/**
 * The `id` of the `tool_use` it answers.
 */
tool_use_id: string, 
/**
 * `true` when the tool failed or was denied; absent counts as `false`.
 */
is_error?: boolean, 
/**
 * A string or a list of blocks.
 */
content?: JsonValue, };

export type StreamEventEnvelope = { 
/**
 * The streaming event itself.
 */
event: StreamEvent, 
/**
 * Unique id of this event (an assistant message's id for `assistant`).
 */
uuid?: string, 
/**
 * The program's own session id (not duet's).
 */
session_id?: string, 
/**
 * Set when the event belongs to a sub-agent's tool call; often an explicit null.
 */
parent_tool_use_id?: string | null, };

export type StreamEvent = KnownStreamEvent | { [key in string]: JsonValue };

export type KnownStreamEvent = { "type": "message_start", 
/**
 * The message as it starts, Anthropic-style (`id`, `role`, `model`,
 * ...): its `id` is the final `assistant` message's too.
 */
message: JsonValue, } | { "type": "content_block_start", 
/**
 * The block's place in the message, from 0: its deltas and its stop
 * name it.
 */
index: number, 
/**
 * The block as it starts: empty text or thinking, or a `tool_use`
 * with its id, name and `input: {}`.
 */
content_block: ContentBlock, } | { "type": "content_block_delta", 
/**
 * The block it adds to (see `content_block_start`).
 */
index: number, 
/**
 * What it adds.
 */
delta: StreamDelta, } | { "type": "content_block_stop", 
/**
 * The block that is complete.
 */
index: number, } | { "type": "message_delta", } | { "type": "message_stop", };

export type StreamDelta = KnownDelta | { [key in string]: JsonValue };

export type KnownDelta = { "type": "text_delta", 
/**
 * The text to append.
 */
text: string, } | { "type": "input_json_delta", 
/**
 * A piece of JSON text: the pieces joined, in order, parse as the
 * tool's input.
 */
partial_json: string, } | { "type": "thinking_delta", 
/**
 * The text to append.
 */
thinking: string, };

export type ResultEvent = { 
/**
 * How the turn ended: `success`, or an `error_*` kind (e.g.
 * `error_max_turns`).
 */
subtype?: string, 
/**
 * `true` when the turn failed: the chat shows `result` as the error.
 */
is_error?: boolean, 
/**
 * How long the turn took, in milliseconds, as the agent measured it.
 */
duration_ms?: number, 
/**
 * The turn's final text (the last answer, or what went wrong).
 */
result?: string, 
/**
 * Unique id of this event (an assistant message's id for `assistant`).
 */
uuid?: string, 
/**
 * The program's own session id (not duet's).
 */
session_id?: string, 
/**
 * Set when the event belongs to a sub-agent's tool call; often an explicit null.
 */
parent_tool_use_id?: string | null, };

export type ControlRequest = { 
/**
 * Names the request: duet's answer (`confirmation_response`), the
 * `control_response` and the approval (`request_id`) all carry it.
 */
request_id: string, 
/**
 * What is asked.
 */
request: ControlRequestBody, };

export type ControlRequestBody = CanUseTool | { [key in string]: JsonValue };

export type CanUseTool = { "subtype": "CanUseTool", 
/**
 * The tool, in the agent's name for it (e.g. `run_shell_command`).
 */
tool_name: string, 
/**
 * The `id` of the call's `tool_use` block, when the agent says.
 */
tool_use_id?: string, 
/**
 * The tool's arguments, e.g. `{"command": "ls", "description": "..."}`.
 */
input: JsonValue, };

export type ControlResponse = { 
/**
 * How the request was decided.
 */
response: ControlResponseBody, };

export type ControlResponseBody = { "subtype": "success", 
/**
 * The `request_id` of the `control_request` it answers.
 */
request_id: string, 
/**
 * For `can_use_tool`: `{"allowed": bool}`.
 */
response?: JsonValue, } | { "subtype": "error", 
/**
 * The `request_id` of the `control_request` it answers.
 */
request_id: string, 
/**
 * A message string (Qwen Code) or an object (the RFC).
 */
error: JsonValue, };
