// Checks a value against a definition of the protocol's JSON Schema (the
// tables generated from the Rust types: generated/schema.ts), the way the
// server's serde reads and writes it. The guards (guards.ts, chat/sidecar.ts)
// are this check under a type's name: no guard repeats a type by hand, so a
// field added in Rust is checked here the moment the tables are regenerated.
//
// The schema uses a small part of JSON Schema (what schemars emits): type,
// properties, required, additionalProperties, const, enum, items, minimum,
// maximum, oneOf, anyOf, allOf and $ref (applied beside the other keywords, as
// in draft 2020-12). Fields that are `#[serde(default)]` in Rust carry their
// `default`; `withDefaults` fills them in, so a reader sees what serde would.
import type * as P from '../generated/protocol';
import { DEFS } from '../generated/schema';

/** The protocol's types the guards check, by their name in the schema. */
export interface Types {
  ServerMessage: P.ServerMessage;
  SessionInfo: P.SessionInfo;
  ProfileInfo: P.ProfileInfo;
  Me: P.Me;
  Board: P.Board;
  PushKey: P.PushKey;
  PushDevice: P.PushDevice;
  SubmitResponse: P.SubmitResponse;
  KnownEvent: P.KnownEvent;
  KnownBlock: P.KnownBlock;
  KnownStreamEvent: P.KnownStreamEvent;
  KnownDelta: P.KnownDelta;
  can_use_tool: P.CanUseTool;
}

type Schema = boolean | SchemaObject;

interface SchemaObject {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: Schema;
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly items?: Schema;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly $ref?: string;
  readonly default?: unknown;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function def(name: string): Schema {
  const s = DEFS[name];
  if (s === undefined) throw new Error(`no type ${name} in the protocol's schema`);
  return s as Schema;
}

function resolve(ref: string): Schema {
  const prefix = '#/$defs/';
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return def(ref.slice(prefix.length));
}

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isPlainObject(v);
    default:
      return false;
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function check(s: Schema, v: unknown): boolean {
  if (s === true) return true;
  if (s === false) return false;
  if (s.type !== undefined) {
    const types = typeof s.type === 'string' ? [s.type] : s.type;
    if (!types.some((t) => typeOk(t, v))) return false;
  }
  if ('const' in s && !equal(s.const, v)) return false;
  if (s.enum !== undefined && !s.enum.some((e) => equal(e, v))) return false;
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum) return false;
    if (s.maximum !== undefined && v > s.maximum) return false;
  }
  if (Array.isArray(v) && s.items !== undefined) {
    const items = s.items;
    if (!v.every((x) => check(items, x))) return false;
  }
  if (isPlainObject(v)) {
    for (const key of s.required ?? []) if (!(key in v)) return false;
    const props = s.properties ?? {};
    for (const [key, value] of Object.entries(v)) {
      const p = props[key];
      if (p !== undefined) {
        if (!check(p, value)) return false;
      } else if (s.additionalProperties !== undefined && !check(s.additionalProperties, value)) {
        return false;
      }
    }
  }
  // After the cheap keywords: a tagged variant's `const` tag fails before
  // the whole of its `$ref`'d body is looked at.
  if (s.$ref !== undefined && !check(resolve(s.$ref), v)) return false;
  if (s.allOf !== undefined && !s.allOf.every((x) => check(x, v))) return false;
  if (s.anyOf !== undefined && !s.anyOf.some((x) => check(x, v))) return false;
  if (s.oneOf !== undefined && s.oneOf.filter((x) => check(x, v)).length !== 1) return false;
  return true;
}

/** Fills in, in place, the defaults of absent fields along the branches `v` matches. */
function fill(s: Schema, v: unknown): void {
  if (typeof s === 'boolean') return;
  if (s.$ref !== undefined) fill(resolve(s.$ref), v);
  if (isPlainObject(v)) {
    for (const [key, p] of Object.entries(s.properties ?? {})) {
      if (!(key in v) && typeof p === 'object' && 'default' in p) v[key] = structuredClone(p.default);
      if (key in v) fill(p, v[key]);
    }
  }
  if (Array.isArray(v) && s.items !== undefined) for (const x of v) fill(s.items, x);
  for (const x of s.allOf ?? []) fill(x, v);
  const branch = (s.anyOf ?? s.oneOf ?? []).find((x) => check(x, v));
  if (branch !== undefined) fill(branch, v);
}

/** Whether `v` is a value of the protocol's type `name`. */
export function valid<K extends keyof Types>(name: K, v: unknown): v is Types[K] {
  return check(def(name), v);
}

/** `v` as the protocol's type `name`, with its defaults filled in, or undefined. */
export function as<K extends keyof Types>(name: K, v: unknown): Types[K] | undefined {
  if (!valid(name, v)) return undefined;
  fill(def(name), v);
  return v;
}
