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
signal?: string, success: boolean, 
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
label: string, kind: ApprovalOptionKind, };

export type Approval = { request_id: string, tool_name: string, tool_use_id?: string, 
/**
 * The tool's arguments as the program reported them.
 */
input: JsonValue, state: ApprovalState, 
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
 * `dual_output`, `claude_hooks`, or `none` (terminal only).
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

export type ConnectedClient = { client_id: ClientId, 
/**
 * The principal: `owner` for the main token, a `[[token]]` name, or
 * `share:<share id>`.
 */
name: string, role: Role, 
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

export type Share = { id: string, role: Role, 
/**
 * Unix time in milliseconds.
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
name: string, role: Role, 
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
n: number, text: string, };

export type Hello = { session_id: SessionId, client_id: ClientId, 
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
server_version: string, capabilities: Array<string>, profile: string, 
/**
 * The session's side channel: what the chat view can do.
 */
channel: ChannelInfo, status: SessionStatus, cols: number, rows: number, 
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
id: number, code: string, message: string, 
/**
 * The line's number in the events file, when it had one.
 */
seq?: number, } | { "type": "approval" } & Approval | { "type": "modes" } & AgentModes | { "type": "resync", cols: number, rows: number, 
/**
 * Why the screen is sent whole.
 */
reason: ResyncReason, } | { "type": "resize", cols: number, rows: number, } | { "type": "exit" } & ExitInfo | { "type": "clients", clients: Array<ConnectedClient>, } | { "type": "error", code: ErrorCode, message: string, 
/**
 * The `id` of the client message this answers, if it had one.
 */
id?: string, } | { "type": "ack", id: string, 
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
held: Array<HeldPrompt>, } | { "type": "pong", id?: string, };

export type ClientMessage = { "type": "submit", text: string, id?: string, } | { "type": "approve", request_id: string, allowed?: boolean, option?: string, id?: string, } | { "type": "discard", 
/**
 * The prompt's `n`.
 */
prompt: number, id?: string, } | { "type": "resize", cols: number, rows: number, id?: string, } | { "type": "cancel", id?: string, } | { "type": "pause", id?: string, } | { "type": "resume", id?: string, } | { "type": "ping", id?: string, };

export type CreateSession = { 
/**
 * Profile name; the server's default profile when absent.
 */
profile?: string, cols?: number, rows?: number, 
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

export type ResumeSession = { cols?: number, rows?: number, };

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

export type ContextUse = { used: number, 
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
api_ms?: number, tokens: TokenCounts, 
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
turns: number, tokens: TokenCounts, 
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
tool_calls: number, tool_errors: number, context?: ContextUse, };

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

export type BudgetStatus = { limits: Budget, 
/**
 * Why prompts are held, once a limit is reached (e.g. "the budget of
 * 3 turns is spent").
 */
exhausted?: string, };

export type SessionUsage = { totals: UsageTotals, 
/**
 * The most recent turns, oldest first (at most 100).
 */
turns: Array<TurnUsage>, budget?: BudgetStatus, };

export type SessionInfo = { id: SessionId, 
/**
 * The name an owner gave the session (`PATCH /api/sessions/{id}`).
 */
name?: string, profile: string, status: SessionStatus, 
/**
 * Unix time in milliseconds.
 */
created_at: number, ended_at?: number, exit?: ExitInfo, pid?: number, cols: number, rows: number, 
/**
 * Highest event seq so far (0 before the first event).
 */
last_seq: number, pending_approvals: number, clients: number, 
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

export type RenameSession = { name: string, };

export type BoardEntry = { session: SessionInfo, 
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

export type Board = { sessions: Array<BoardEntry>, };

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

export type PushSubscribe = { endpoint: string, keys: PushSubscriptionKeys, 
/**
 * What browsers send (usually `null`); not used.
 */
expirationTime?: number | null, };

export type PushUnsubscribe = { endpoint: string, };

export type PushMute = { endpoint: string, session: SessionId, muted: boolean, };

export type PushDevice = { endpoint: string, 
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
action: string, title: string, };

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

export type PushShow = { tag: string, title: string, body: string, 
/**
 * Where a click goes, relative to the app (`./#/session/<id>…`).
 */
url: string, kind: PushKind, 
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

export type PushPayload = PushShow | { close: string, };

export type PushDecision = { capability: string, allowed: boolean, 
/**
 * The approval the worker means (its notification's `request_id`):
 * refused when it is not the capability's own.
 */
request_id?: string, };

export type ProfileInfo = { name: string, description?: string, 
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

export type SubmitRequest = { text: string, };

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

export type SetModeRequest = { mode: string, };

export type SetModelRequest = { model: string, };

export type SubmitResponse = { 
/**
 * True when held until the program is ready to read input.
 */
queued: boolean, };

export type ApprovalDecision = { allowed?: boolean, option?: string, };

export type ApiError = { error: ApiErrorBody, };

export type ApiErrorBody = { code: ErrorCode, message: string, };

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

export type SessionStartData = { session_id?: string, cwd?: string, 
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

export type MessageEvent = { message: SidecarMessage, 
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
role: string, content: MessageContent, id?: string, model?: string, };

export type MessageContent = Array<ContentBlock> | string;

export type ContentBlock = KnownBlock | { [key in string]: JsonValue };

export type KnownBlock = { "type": "text", text: string, } | { "type": "thinking", thinking: string, } | { "type": "tool_use", id: string, name: string, input: JsonValue, } | { "type": "tool_result", tool_use_id: string, is_error?: boolean, 
/**
 * A string or a list of blocks.
 */
content?: JsonValue, };

export type StreamEventEnvelope = { event: StreamEvent, 
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

export type KnownStreamEvent = { "type": "message_start", message: JsonValue, } | { "type": "content_block_start", index: number, content_block: ContentBlock, } | { "type": "content_block_delta", index: number, delta: StreamDelta, } | { "type": "content_block_stop", index: number, } | { "type": "message_delta", } | { "type": "message_stop", };

export type StreamDelta = KnownDelta | { [key in string]: JsonValue };

export type KnownDelta = { "type": "text_delta", text: string, } | { "type": "input_json_delta", partial_json: string, } | { "type": "thinking_delta", thinking: string, };

export type ResultEvent = { subtype?: string, is_error?: boolean, duration_ms?: number, result?: string, 
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

export type ControlRequest = { request_id: string, request: ControlRequestBody, };

export type ControlRequestBody = CanUseTool | { [key in string]: JsonValue };

export type CanUseTool = { "subtype": "CanUseTool", tool_name: string, tool_use_id?: string, input: JsonValue, };

export type ControlResponse = { response: ControlResponseBody, };

export type ControlResponseBody = { "subtype": "success", request_id: string, 
/**
 * For `can_use_tool`: `{"allowed": bool}`.
 */
response?: JsonValue, } | { "subtype": "error", request_id: string, 
/**
 * A message string (Qwen Code) or an object (the RFC).
 */
error: JsonValue, };
