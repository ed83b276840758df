// Sidecar events (the stream-json vocabulary) as the chat reads them. The
// types are generated from the Rust protocol crate (`protocol/src/sidecar.rs`
// → generated/protocol.ts); this module only checks, at run time, that a
// relayed event has the shape its type promises, the way the server's serde
// reads it: an event (or a block, a streaming event, a delta) whose `type` is
// known but whose fields do not fit is treated as unknown, never as broken.
// Nothing here throws: the chat counts what it does not know and goes on.
import type {
  CanUseTool,
  ContentBlock,
  ControlRequestBody,
  JsonValue,
  KnownBlock,
  KnownDelta,
  KnownEvent,
  KnownStreamEvent,
  MessageContent,
  SidecarEvent,
  StreamDelta,
  StreamEvent,
} from '../generated/protocol';
import { isObject, type JsonObject } from './json';

const isStr = (v: JsonValue | undefined): v is string => typeof v === 'string';
/** `Option<T>` with `#[serde(default)]`: absent, null or a T. */
const opt = (v: JsonValue | undefined, is: (x: JsonValue) => boolean): boolean => v === undefined || v === null || is(v);
const optStr = (v: JsonValue | undefined): boolean => opt(v, isStr);
const isIndex = (v: JsonValue | undefined): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/** The envelope most events carry (`uuid`, `session_id`, `parent_tool_use_id`). */
function envelopeOk(e: JsonObject): boolean {
  return optStr(e.uuid) && optStr(e.session_id) && optStr(e.parent_tool_use_id);
}

/** Message content: a string, or a list whose every block is an object (known or not). */
function contentOk(c: JsonValue | undefined): boolean {
  return typeof c === 'string' || (Array.isArray(c) && c.every(isObject));
}

/** The event as one of the modelled types, or undefined (unknown type or shape). */
export function knownEvent(ev: SidecarEvent | JsonValue): KnownEvent | undefined {
  if (!isObject(ev)) return undefined;
  const e = ev as JsonObject;
  const ok = ((): boolean => {
    switch (e.type) {
      case 'system':
        return isStr(e.subtype) && envelopeOk(e);
      case 'user':
      case 'assistant': {
        const m = e.message;
        return envelopeOk(e) && isObject(m) && isStr(m.role) && contentOk(m.content) && optStr(m.id) && optStr(m.model);
      }
      case 'stream_event':
        return envelopeOk(e) && isObject(e.event);
      case 'result':
        return envelopeOk(e) && optStr(e.subtype) && opt(e.is_error, (v) => typeof v === 'boolean') && opt(e.duration_ms, (v) => typeof v === 'number') && optStr(e.result);
      case 'control_request':
        return isStr(e.request_id) && isObject(e.request);
      case 'control_response': {
        const r = e.response;
        if (!isObject(r) || !isStr(r.request_id)) return false;
        return r.subtype === 'success' || (r.subtype === 'error' && r.error !== undefined);
      }
      default:
        return false;
    }
  })();
  return ok ? (e as unknown as KnownEvent) : undefined;
}

/** A content block as a modelled block, or undefined. */
export function knownBlock(b: ContentBlock | JsonValue): KnownBlock | undefined {
  if (!isObject(b)) return undefined;
  const x = b as JsonObject;
  switch (x.type) {
    case 'text':
      return isStr(x.text) ? (x as unknown as KnownBlock) : undefined;
    case 'thinking':
      return isStr(x.thinking) ? (x as unknown as KnownBlock) : undefined;
    case 'tool_use':
      // `input` is `#[serde(default)]`: absent reads as null.
      return isStr(x.id) && isStr(x.name) ? ({ ...x, input: x.input ?? null } as unknown as KnownBlock) : undefined;
    case 'tool_result':
      return isStr(x.tool_use_id) && opt(x.is_error, (v) => typeof v === 'boolean') ? (x as unknown as KnownBlock) : undefined;
    default:
      return undefined;
  }
}

/** The modelled blocks of a message's content; a bare string is one text block. */
export function blocksOf(content: MessageContent): KnownBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.flatMap((b) => {
    const k = knownBlock(b);
    return k ? [k] : [];
  });
}

/** The inner event of a `stream_event` as a modelled one, or undefined. */
export function knownStreamEvent(e: StreamEvent): KnownStreamEvent | undefined {
  const x = e as JsonObject;
  const ok = ((): boolean => {
    switch (x.type) {
      case 'message_start':
        return x.message !== undefined;
      case 'content_block_start':
        return isIndex(x.index) && isObject(x.content_block);
      case 'content_block_delta':
        return isIndex(x.index) && isObject(x.delta);
      case 'content_block_stop':
        return isIndex(x.index);
      case 'message_delta':
      case 'message_stop':
        return true;
      default:
        return false;
    }
  })();
  return ok ? (x as unknown as KnownStreamEvent) : undefined;
}

/** A `content_block_delta`'s delta as a modelled one, or undefined. */
export function knownDelta(d: StreamDelta): KnownDelta | undefined {
  const x = d as JsonObject;
  switch (x.type) {
    case 'text_delta':
      return isStr(x.text) ? (x as unknown as KnownDelta) : undefined;
    case 'thinking_delta':
      return isStr(x.thinking) ? (x as unknown as KnownDelta) : undefined;
    case 'input_json_delta':
      return isStr(x.partial_json) ? (x as unknown as KnownDelta) : undefined;
    default:
      return undefined;
  }
}

/** A control request's body when it asks to run a tool (the only kind the chat shows). */
export function canUseTool(body: ControlRequestBody): CanUseTool | undefined {
  const x = body as JsonObject;
  if (x.subtype !== 'can_use_tool' || !isStr(x.tool_name) || !optStr(x.tool_use_id)) return undefined;
  return { ...x, input: x.input ?? null } as unknown as CanUseTool;
}

/** The id in a `message_start`'s message. */
export function messageIdOf(message: JsonValue): string | undefined {
  return isObject(message) && typeof message.id === 'string' ? message.id : undefined;
}

/** A tool result's content as display text (a string, or the text of its blocks). */
export function resultText(content: JsonValue | undefined): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : JSON.stringify(b)))
      .join('\n');
  }
  return JSON.stringify(content, null, 2);
}
