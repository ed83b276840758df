// Runtime checks for what the server sends. The generated types say what the
// server promises; these guards make sure a frame or a body really has that
// shape before it is typed as such, so a bad or foreign reply cannot turn
// into `undefined is not a function` deep inside a view.
import type { Approval, ExitInfo, ProfileInfo, ServerMessage, SessionInfo } from '../generated/protocol';
import { isObject, type JsonObject } from '../chat/json';

const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const optional = (v: unknown, is: (x: unknown) => boolean): boolean => v === undefined || is(v);

function isExitInfo(v: unknown): v is ExitInfo {
  return isObject(v) && isBool(v.success) && optional(v.code, isNum) && optional(v.signal, isStr);
}

function isApproval(v: JsonObject): v is JsonObject & Approval {
  return (
    isStr(v.request_id) &&
    isStr(v.tool_name) &&
    optional(v.tool_use_id, isStr) &&
    'input' in v &&
    (v.state === 'pending' || v.state === 'allowed' || v.state === 'denied' || v.state === 'abandoned') &&
    (v.decided_by === undefined || v.decided_by === 'client' || v.decided_by === 'terminal') &&
    isNum(v.seq)
  );
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
    optional(v.exit, isExitInfo)
  );
}

/** A `ProfileInfo` body. */
export function isProfileInfo(v: unknown): v is ProfileInfo {
  return isObject(v) && isStr(v.name) && isBool(v.sidecar) && isBool(v.default) && optional(v.description, isStr);
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
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(v)) return undefined;
  const ok = ((): boolean => {
    switch (v.type) {
      case 'hello':
        return isStr(v.session_id) && isNum(v.cols) && isNum(v.rows) && isNum(v.last_seq) && isStr(v.profile) && Array.isArray(v.approvals) && v.approvals.every((a) => isObject(a) && isApproval(a)) && optional(v.exit, isExitInfo);
      case 'event':
        return isNum(v.seq) && 'event' in v;
      case 'warning':
        return isStr(v.code) && isStr(v.message) && optional(v.seq, isNum);
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
      default:
        return false;
    }
  })();
  if (!ok) return undefined;
  // `ack.queued` is `#[serde(default)]` on the Rust side: fill it in.
  if (v.type === 'ack' && v.queued === undefined) v.queued = false;
  return v as unknown as ServerMessage;
}
