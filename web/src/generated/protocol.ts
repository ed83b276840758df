// Generated from the duet-protocol crate by `DUET_BLESS=1 cargo test -p duet-protocol`.
// Do not edit: a test fails when this file drifts from the Rust types.

export const PROTOCOL_VERSION = 1;

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type SessionId = string;

export type ClientId = number;

export type ErrorCode = "bad_message" | "unknown_type" | "too_large" | "session_not_found" | "unknown_profile" | "unknown_request" | "already_resolved" | "session_ended" | "no_sidecar" | "limit_reached" | "unauthorized" | "forbidden" | "internal" | "not_resumable";

export type SessionStatus = "running" | "exited";

export type ExitInfo = { 
/**
 * Exit code, when the program exited by itself.
 */
code?: number, 
/**
 * The signal that ended the program, e.g. `SIGHUP` (then `code` is absent).
 */
signal?: string, success: boolean, };

export type ApprovalState = "pending" | "allowed" | "denied" | "abandoned";

export type Decider = "client" | "terminal";

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
 * Who decided, once decided.
 */
decided_by?: Decider, 
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
name: string, role: Role, };

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
 * Set when the program has already exited.
 */
exit?: ExitInfo, 
/**
 * The program's handshake (`session_start.data`) once seen.
 */
agent?: JsonValue, };

export type ServerMessage = { "type": "hello" } & Hello | { "type": "event", 
/**
 * The event's 1-based line number in the events file.
 */
seq: number, 
/**
 * The event object, verbatim (see the sidecar types).
 */
event: JsonValue, } | { "type": "warning", 
/**
 * Numbers the session's warnings from 1, so none is shown twice.
 */
id: number, code: string, message: string, 
/**
 * The line's number in the events file, when it had one.
 */
seq?: number, } | { "type": "approval" } & Approval | { "type": "resync", cols: number, rows: number, 
/**
 * Why: `attach` or `lagged`.
 */
reason: string, } | { "type": "resize", cols: number, rows: number, } | { "type": "exit" } & ExitInfo | { "type": "clients", clients: Array<ConnectedClient>, } | { "type": "error", code: ErrorCode, message: string, 
/**
 * The `id` of the client message this answers, if it had one.
 */
id?: string, } | { "type": "ack", id: string, 
/**
 * For `submit`: true when the text is held until the program is
 * ready to read input, false when it has been written already.
 */
queued: boolean, } | { "type": "pong", id?: string, };

export type ClientMessage = { "type": "submit", text: string, id?: string, } | { "type": "approve", request_id: string, allowed?: boolean, option?: string, id?: string, } | { "type": "resize", cols: number, rows: number, id?: string, } | { "type": "cancel", id?: string, } | { "type": "pause", id?: string, } | { "type": "resume", id?: string, } | { "type": "ping", id?: string, };

export type CreateSession = { 
/**
 * Profile name; the server's default profile when absent.
 */
profile?: string, cols?: number, rows?: number, };

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
 * Whether `POST /api/sessions/{id}/resume` can start this conversation
 * again (it ended, its profile can resume, and the agent's id is known).
 */
resumable: boolean, };

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

export type SubmitResponse = { 
/**
 * True when held until the program is ready to read input.
 */
queued: boolean, };

export type ApprovalDecision = { allowed?: boolean, option?: string, };

export type ApiError = { error: ApiErrorBody, };

export type ApiErrorBody = { code: ErrorCode, message: string, };
