// Sidecar events (the stream-json vocabulary) as the chat reads them. The
// types are generated from the Rust protocol crate (`protocol/src/sidecar/`
// → generated/protocol.ts), and so is the check that a relayed event has the
// shape its type promises (generated/schema.ts, net/validate.ts), the way the
// server's serde reads it: an event (or a block, a streaming event, a delta)
// whose `type` is known but whose fields do not fit is treated as unknown,
// never as broken. Nothing here throws: the chat counts what it does not know
// and goes on.
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
import { as, type Types } from '../net/validate';
import { isObject } from './json';

/** The value as the protocol's type `name`, on a copy (the event itself stays as relayed). */
function known<K extends keyof Types>(name: K, v: unknown): Types[K] | undefined {
  return isObject(v) ? as(name, { ...v }) : undefined;
}

/** The event as one of the modelled types, or undefined (unknown type or shape). */
export function knownEvent(ev: SidecarEvent | JsonValue): KnownEvent | undefined {
  return known('KnownEvent', ev);
}

/** A content block as a modelled block, or undefined. */
export function knownBlock(b: ContentBlock | JsonValue): KnownBlock | undefined {
  return known('KnownBlock', b);
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
  return known('KnownStreamEvent', e);
}

/** A `content_block_delta`'s delta as a modelled one, or undefined. */
export function knownDelta(d: StreamDelta): KnownDelta | undefined {
  return known('KnownDelta', d);
}

/** A control request's body when it asks to run a tool (the only kind the chat shows). */
export function canUseTool(body: ControlRequestBody): CanUseTool | undefined {
  // The subtype is the struct's serde tag, which its schema leaves out.
  return isObject(body) && body.subtype === 'can_use_tool' ? known('can_use_tool', body) : undefined;
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
