// Checks a value against a definition of the protocol's JSON Schema (the
// tables generated from the Rust types: generated/schema.ts), the way the
// server's serde reads and writes it. The guards (guards.ts, chat/sidecar.ts)
// are this check under a type's name: no guard repeats a type by hand, so a
// field added in Rust is checked here the moment the tables are regenerated.
// Each schema is turned into functions once: every event of a long
// session's history is checked, and walking the tables for each cost more
// than all the rest of the page's work on it.
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

type Check = (v: unknown) => boolean;
type Fill = (v: unknown) => void;

const ALWAYS: Check = () => true;
const NEVER: Check = () => false;
const NOTHING: Fill = () => undefined;

function typeCheck(type: string): Check {
  switch (type) {
    case 'null':
      return (v) => v === null;
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'string':
      return (v) => typeof v === 'string';
    case 'integer':
      return (v) => typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'array':
      return Array.isArray;
    case 'object':
      return isPlainObject;
    default:
      return NEVER;
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** All of `parts` (none: anything). */
function every(parts: readonly Check[]): Check {
  if (parts.length === 0) return ALWAYS;
  if (parts.length === 1) return parts[0] ?? ALWAYS;
  return (v) => {
    for (const p of parts) if (!p(v)) return false;
    return true;
  };
}

/** Any of `parts`. The checks run for every value of a long history: no closure is made per call. */
function some(parts: readonly Check[]): Check {
  return (v) => {
    for (const p of parts) if (p(v)) return true;
    return false;
  };
}

/**
 * A union's branches by their tag, when every branch is an object that
 * requires property `prop` and fixes it (`const`, a string), each to its
 * own value: a value can match only the branch its tag names, so that one
 * alone is looked at (what serde does with an internally tagged enum).
 */
interface Tagged {
  readonly prop: string;
  readonly byTag: ReadonlyMap<string, number>;
}

function tagOf(branches: readonly Schema[]): Tagged | undefined {
  const first = branches[0];
  if (branches.length < 2 || typeof first !== 'object') return undefined;
  for (const prop of first.required ?? []) {
    const byTag = new Map<string, number>();
    const ok = branches.every((b, i) => {
      if (typeof b !== 'object' || b.type !== 'object' || !(b.required ?? []).includes(prop)) return false;
      const p = b.properties?.[prop];
      const tag = typeof p === 'object' ? p.const : undefined;
      if (typeof tag !== 'string' || byTag.has(tag)) return false;
      byTag.set(tag, i);
      return true;
    });
    if (ok) return { prop, byTag };
  }
  return undefined;
}

/** The index of the branch of a tagged union `v` names; -1 when none can match (not an object, no such tag). */
function taggedBranch(t: Tagged, v: unknown): number {
  if (!isPlainObject(v)) return -1;
  const tag = v[t.prop];
  return (typeof tag === 'string' ? t.byTag.get(tag) : undefined) ?? -1;
}

/** Whether a branch is a shallow check (no reference, no union): tried first in an `anyOf`, whose order does not matter. */
function shallow(s: Schema): boolean {
  return typeof s === 'boolean' || (s.$ref === undefined && s.anyOf === undefined && s.oneOf === undefined && s.allOf === undefined && s.items === undefined);
}

/**
 * The schema as functions, made once per schema object: the check (the
 * keywords above, each a closure over what it needs) and the fill of
 * defaults. A `$ref` is followed when first used, so recursive types work.
 */
class Compiled {
  private readonly checks = new WeakMap<SchemaObject, Check>();
  private readonly fills = new WeakMap<SchemaObject, Fill>();

  check(s: Schema): Check {
    if (s === true) return ALWAYS;
    if (s === false) return NEVER;
    let c = this.checks.get(s);
    if (!c) {
      // Set before compiling the parts: a schema that refers to itself finds this.
      let body: Check | undefined;
      c = (v) => (body ??= this.compileCheck(s))(v);
      this.checks.set(s, c);
    }
    return c;
  }

  fill(s: Schema): Fill {
    if (typeof s === 'boolean') return NOTHING;
    let f = this.fills.get(s);
    if (!f) {
      let body: Fill | undefined;
      f = (v) => { (body ??= this.compileFill(s))(v); };
      this.fills.set(s, f);
    }
    return f;
  }

  private compileCheck(s: SchemaObject): Check {
    const parts: Check[] = [];
    if (s.type !== undefined) {
      const types = (typeof s.type === 'string' ? [s.type] : s.type).map(typeCheck);
      parts.push(types.length === 1 ? (types[0] ?? NEVER) : some(types));
    }
    if ('const' in s) {
      const c = s.const;
      parts.push(typeof c === 'object' && c !== null ? (v) => equal(c, v) : (v) => v === c);
    }
    if (s.enum !== undefined) {
      const options = s.enum;
      parts.push((v) => options.some((e) => equal(e, v)));
    }
    const { minimum: min, maximum: max } = s;
    if (min !== undefined || max !== undefined) {
      parts.push((v) => typeof v !== 'number' || ((min === undefined || v >= min) && (max === undefined || v <= max)));
    }
    if (s.items !== undefined) {
      const item = this.check(s.items);
      parts.push((v) => !Array.isArray(v) || v.every((x) => item(x)));
    }
    const required = s.required ?? [];
    const props = new Map(Object.entries(s.properties ?? {}).map(([k, p]) => [k, this.check(p)]));
    const extra = s.additionalProperties === undefined || s.additionalProperties === true ? undefined : this.check(s.additionalProperties);
    if (required.length > 0 || props.size > 0 || extra !== undefined) {
      parts.push((v) => {
        if (!isPlainObject(v)) return true;
        for (const key of required) if (!(key in v)) return false;
        // (for…in over a parsed object's own keys allocates nothing, where Object.keys makes an array per object)
        for (const key in v) {
          if (!Object.hasOwn(v, key)) continue;
          const p = props.get(key) ?? extra;
          if (p !== undefined && !p(v[key])) return false;
        }
        return true;
      });
    }
    // After the cheap keywords: a tagged variant's `const` tag fails before
    // the whole of its `$ref`'d body is looked at.
    if (s.$ref !== undefined) parts.push(this.check(resolve(s.$ref)));
    if (s.allOf !== undefined) parts.push(every(s.allOf.map((x) => this.check(x))));
    if (s.anyOf !== undefined) parts.push(this.union(s.anyOf, 'any'));
    if (s.oneOf !== undefined) parts.push(this.union(s.oneOf, 'one'));
    return every(parts);
  }

  private union(branches: readonly Schema[], kind: 'any' | 'one'): Check {
    const checks = branches.map((b) => this.check(b));
    const t = tagOf(branches);
    if (t) {
      // Tags differ, so at most one branch matches: "any" and "exactly one" are the same.
      return (v) => {
        const i = taggedBranch(t, v);
        return i >= 0 && (checks[i] ?? NEVER)(v);
      };
    }
    if (kind === 'any') {
      // Any order gives the same answer: the shallow branches first.
      const order = [...checks.keys()].sort((a, b) => Number(!shallow(branches[a] ?? true)) - Number(!shallow(branches[b] ?? true))).map((i) => checks[i] ?? NEVER);
      return some(order);
    }
    return (v) => {
      let n = 0;
      for (const c of checks) if (c(v) && ++n > 1) return false;
      return n === 1;
    };
  }

  /** Fills in, in place, the defaults of absent fields along the branches `v` matches. */
  private compileFill(s: SchemaObject): Fill {
    const parts: Fill[] = [];
    if (s.$ref !== undefined) parts.push(this.fill(resolve(s.$ref)));
    const props = Object.entries(s.properties ?? {}).map(([key, p]) => {
      const d = typeof p === 'object' && 'default' in p ? { value: p.default } : undefined;
      return { key, d, fill: this.fill(p) };
    });
    if (props.length > 0) {
      parts.push((v) => {
        if (!isPlainObject(v)) return;
        for (const { key, d, fill } of props) {
          if (!(key in v)) {
            if (d === undefined) continue;
            v[key] = typeof d.value === 'object' && d.value !== null ? structuredClone(d.value) : d.value;
          }
          fill(v[key]);
        }
      });
    }
    if (s.items !== undefined) {
      const item = this.fill(s.items);
      parts.push((v) => { if (Array.isArray(v)) for (const x of v) item(x); });
    }
    for (const x of s.allOf ?? []) parts.push(this.fill(x));
    const branches = s.anyOf ?? s.oneOf;
    if (branches !== undefined) {
      // The first branch that matches, in the schema's order (its defaults are the ones serde applies).
      const t = tagOf(branches);
      const checks = branches.map((b) => this.check(b));
      const fills = branches.map((b) => this.fill(b));
      parts.push((v) => {
        const i = t ? taggedBranch(t, v) : checks.findIndex((c) => c(v));
        if (i >= 0 && (!t || (checks[i] ?? NEVER)(v))) fills[i]?.(v);
      });
    }
    if (parts.length === 0) return NOTHING;
    return (v) => { for (const p of parts) p(v); };
  }
}

const compiled = new Compiled();

/** Whether `v` is a value of the protocol's type `name`. */
export function valid<K extends keyof Types>(name: K, v: unknown): v is Types[K] {
  return compiled.check(def(name))(v);
}

/** `v` as the protocol's type `name`, with its defaults filled in, or undefined. */
export function as<K extends keyof Types>(name: K, v: unknown): Types[K] | undefined {
  if (!valid(name, v)) return undefined;
  compiled.fill(def(name))(v);
  return v;
}
