// Runtime checks for what the server sends. The generated types say what the
// server promises; these guards make sure a frame or a body really has that
// shape before it is typed as such, so a bad or foreign reply cannot turn
// into `undefined is not a function` deep inside a view. Each is the
// protocol's generated schema under a type's name (validate.ts): none repeats
// a type by hand.
import type { Board, Me, ProfileInfo, PushDevice, ServerMessage, SessionInfo } from '../generated/protocol';
import { as, valid } from './validate';

/** A `SessionInfo` body. */
export function isSessionInfo(v: unknown): v is SessionInfo {
  return valid('SessionInfo', v);
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
  return as('Board', parseJson(text));
}

/** A `Me` body (`GET /api/me`). */
export function isMe(v: unknown): v is Me {
  return valid('Me', v);
}

/** A `ProfileInfo` body. */
export function isProfileInfo(v: unknown): v is ProfileInfo {
  return valid('ProfileInfo', v);
}

/** A `PushDevice` body. */
export function isPushDevice(v: unknown): v is PushDevice {
  return valid('PushDevice', v);
}

/** A list of `T`. */
export function isListOf<T>(is: (x: unknown) => x is T): (v: unknown) => v is T[] {
  return (v: unknown): v is T[] => Array.isArray(v) && v.every(is);
}

/**
 * Parses a text frame into a `ServerMessage`, with the fields serde fills in
 * by default filled in. Returns undefined for anything malformed, and for
 * types this client does not know (a newer server may send more; ignoring
 * them is the compatible thing to do).
 */
export function parseServerMessage(text: string): ServerMessage | undefined {
  return as('ServerMessage', parseJson(text));
}
