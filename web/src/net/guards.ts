// Runtime checks for what the server sends. The generated types say what the
// server promises; these guards make sure a frame or a body really has that
// shape before it is typed as such, so a bad or foreign reply cannot turn
// into `undefined is not a function` deep inside a view.
import type { Approval, ApprovalOption, Board, BoardEntry, ChannelInfo, ExitInfo, Me, ProfileInfo, Role, ServerMessage, SessionInfo } from '../generated/protocol';
import { isObject, type JsonObject } from '../chat/json';

const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const optional = (v: unknown, is: (x: unknown) => boolean): boolean => v === undefined || is(v);

function isExitInfo(v: unknown): v is ExitInfo {
  return isObject(v) && isBool(v.success) && optional(v.code, isNum) && optional(v.signal, isStr) && optional(v.server_stopped, isBool);
}

function isChannelInfo(v: unknown): v is ChannelInfo {
  return isObject(v) && isStr(v.kind) && isBool(v.events) && isBool(v.submit) && isBool(v.approve);
}

function isApprovalOption(v: unknown): v is ApprovalOption {
  return isObject(v) && isStr(v.id) && isStr(v.label) && (v.kind === 'allow_once' || v.kind === 'allow_always' || v.kind === 'reject_once' || v.kind === 'reject_always');
}

function isApproval(v: JsonObject): v is JsonObject & Approval {
  return (
    isStr(v.request_id) &&
    isStr(v.tool_name) &&
    optional(v.tool_use_id, isStr) &&
    'input' in v &&
    (v.state === 'pending' || v.state === 'allowed' || v.state === 'denied' || v.state === 'abandoned') &&
    (v.decided_by === undefined || v.decided_by === 'client' || v.decided_by === 'terminal' || v.decided_by === 'notification' || v.decided_by === 'policy') &&
    optional(v.reason, isStr) &&
    (v.options === undefined || (Array.isArray(v.options) && v.options.every(isApprovalOption))) &&
    optional(v.chosen, isStr) &&
    optional(v.confirmed, isBool) &&
    isNum(v.seq)
  );
}

function isHeldPrompt(v: unknown): boolean {
  return isObject(v) && isNum(v.n) && isStr(v.text);
}

function isPrompts(v: unknown): boolean {
  return Array.isArray(v) && v.every(isHeldPrompt);
}

function optionalPrompts(v: unknown): boolean {
  return v === undefined || isPrompts(v);
}

/** `options` and `confirmed` are `#[serde(default)]` on the Rust side: fill them in. */
function approvalDefaults(v: JsonObject): void {
  v.options ??= [];
  v.confirmed ??= false;
}

/** A `SessionInfo` body. */
export function isSessionInfo(v: unknown): v is SessionInfo {
  return (
    isObject(v) &&
    isStr(v.id) &&
    isStr(v.profile) &&
    (v.status === 'running' || v.status === 'exited') &&
    isNum(v.created_at) &&
    isNum(v.pending_approvals) &&
    isNum(v.clients) &&
    isNum(v.last_seq) &&
    optional(v.exit, isExitInfo) &&
    isChannelInfo(v.channel) &&
    isBool(v.resumable) &&
    optional(v.resumed_from, isStr) &&
    optional(v.title, isStr) &&
    optional(v.name, isStr)
  );
}

function isBoardEntry(v: unknown): v is BoardEntry {
  if (!(isObject(v) && isSessionInfo(v.session) && isNum(v.last_activity) && optional(v.busy_since, isNum) && Array.isArray(v.pending))) return false;
  if (!v.pending.every((a) => isObject(a) && isApproval(a))) return false;
  for (const a of v.pending) if (isObject(a)) approvalDefaults(a);
  return true;
}

/** `text` as JSON; undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The data of a `sessions` event of `GET /api/sessions/watch`; undefined if malformed. */
export function parseBoard(text: string): Board | undefined {
  const v = parseJson(text);
  return isObject(v) && Array.isArray(v.sessions) && v.sessions.every(isBoardEntry) ? (v as unknown as Board) : undefined;
}

const ROLES: readonly Role[] = ['owner', 'driver', 'approver', 'viewer'];

/** A `Me` body (`GET /api/me`). */
export function isMe(v: unknown): v is Me {
  return isObject(v) && isStr(v.name) && ROLES.includes(v.role as Role) && optional(v.session, isStr) && optional(v.expires_at, isNum);
}

/** A `ProfileInfo` body. */
export function isProfileInfo(v: unknown): v is ProfileInfo {
  return isObject(v) && isStr(v.name) && isBool(v.sidecar) && isBool(v.default) && optional(v.description, isStr) && isChannelInfo(v.channel) && isBool(v.resume);
}

/** A list of `T`. */
export function isListOf<T>(is: (x: unknown) => x is T): (v: unknown) => v is T[] {
  return (v: unknown): v is T[] => Array.isArray(v) && v.every(is);
}

/**
 * Parses a text frame into a `ServerMessage`. Returns undefined for anything
 * malformed, and for types this client does not know (a newer server may send
 * more; ignoring them is the compatible thing to do).
 */
export function parseServerMessage(text: string): ServerMessage | undefined {
  const v = parseJson(text);
  if (!isObject(v)) return undefined;
  const ok = ((): boolean => {
    switch (v.type) {
      case 'hello':
        return isStr(v.session_id) && isNum(v.cols) && isNum(v.rows) && isNum(v.last_seq) && isStr(v.profile) && isChannelInfo(v.channel) && Array.isArray(v.approvals) && v.approvals.every((a) => isObject(a) && isApproval(a)) && optional(v.exit, isExitInfo) && optionalPrompts(v.unsent) && optionalPrompts(v.held);
      case 'event':
        // A sidecar event is an object; which one is checked where it is read (chat/sidecar.ts).
        return isNum(v.seq) && isObject(v.event);
      case 'warning':
        return isNum(v.id) && isStr(v.code) && isStr(v.message) && optional(v.seq, isNum);
      case 'approval':
        return isApproval(v);
      case 'resync':
        return isNum(v.cols) && isNum(v.rows) && isStr(v.reason);
      case 'resize':
        return isNum(v.cols) && isNum(v.rows);
      case 'exit':
        return isExitInfo(v);
      case 'error':
        return isStr(v.code) && isStr(v.message) && optional(v.id, isStr);
      case 'ack':
        return isStr(v.id) && optional(v.queued, isBool);
      case 'pong':
        return optional(v.id, isStr);
      case 'clients':
        return Array.isArray(v.clients);
      case 'unsent':
        return isPrompts(v.prompts) && optionalPrompts(v.held);
      default:
        return false;
    }
  })();
  if (!ok) return undefined;
  // `ack.queued` is `#[serde(default)]` on the Rust side: fill it in.
  if (v.type === 'ack' && v.queued === undefined) v.queued = false;
  if (v.type === 'approval') approvalDefaults(v);
  if (v.type === 'hello' && Array.isArray(v.approvals)) for (const a of v.approvals) if (isObject(a)) approvalDefaults(a);
  // `unsent` and `held` are `#[serde(default)]` on the Rust side (a server before them sends none).
  if (v.type === 'hello') v.unsent ??= [];
  if (v.type === 'hello' || v.type === 'unsent') v.held ??= [];
  return v as unknown as ServerMessage;
}
