// Narrowing helpers for JSON that arrived from the wire. Everything from the
// server enters as `unknown`/`JsonValue` and is narrowed here, so no `any`
// leaks past the protocol boundary.
import type { JsonValue } from '../generated/protocol';

/** A JSON object. */
export type JsonObject = Record<string, JsonValue>;

/** True for a JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o[key]` when it is a string. */
export function str(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

/** Parses JSON text without throwing; `undefined` when it is not JSON. */
export function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
