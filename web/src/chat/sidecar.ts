// Typed views of the program's sidecar events (the stream-json / dual-output
// schema that Qwen Code and duet's demo agent write). The server relays each
// event verbatim as a `JsonValue`; the generated protocol types stop there,
// so this module narrows it into the few shapes the chat view needs.
// Parsing never throws: anything unrecognised becomes `{ type: 'unknown' }`
// and is ignored by the chat, so a new event kind cannot break the page.
import type { JsonValue } from '../generated/protocol';
import { bool, isObject, num, obj, str, type JsonObject } from './json';

/** One content block of a user or assistant message. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: JsonValue }
  | { type: 'tool_result'; toolUseId: string; isError: boolean; content: JsonValue | undefined }
  | { type: 'other'; rawType: string | undefined };

/** A `content_block_delta` payload. */
export type Delta =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'input_json'; partialJson: string }
  | { type: 'other' };

/** The inner event of a `stream_event`. */
export type StreamEvent =
  | { type: 'message_start'; messageId: string | undefined }
  | { type: 'content_block_start'; index: number; block: Block }
  | { type: 'content_block_delta'; index: number; delta: Delta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_stop' }
  | { type: 'other' };

/** A sidecar event, narrowed to what the chat uses. */
export type SidecarEvent =
  | { type: 'system'; subtype: string; data: JsonObject | undefined }
  | { type: 'user'; uuid: string | undefined; blocks: Block[] }
  | { type: 'assistant'; messageId: string | undefined; blocks: Block[] }
  | { type: 'stream_event'; event: StreamEvent }
  | { type: 'result'; isError: boolean; text: string | undefined }
  | {
      type: 'control_request';
      requestId: string;
      /** Set for `can_use_tool`, the only request kind the chat shows. */
      tool: { name: string; toolUseId: string | undefined; input: JsonValue } | undefined;
    }
  | { type: 'control_response'; requestId: string; allowed: boolean | undefined; error: string | undefined }
  | { type: 'unknown'; rawType: string | undefined };

/** Narrows one relayed event. */
export function parseSidecarEvent(event: JsonValue): SidecarEvent {
  if (!isObject(event)) return { type: 'unknown', rawType: undefined };
  const type = str(event, 'type');
  switch (type) {
    case 'system':
      return { type, subtype: str(event, 'subtype') ?? '', data: obj(event, 'data') };
    case 'user': {
      const message = obj(event, 'message');
      if (!message) break;
      return { type, uuid: str(event, 'uuid'), blocks: parseContent(message.content) };
    }
    case 'assistant': {
      const message = obj(event, 'message');
      if (!message) break;
      // Qwen Code sets both, equal to the streamed message_start id; prefer the message's own.
      return { type, messageId: str(message, 'id') ?? str(event, 'uuid'), blocks: parseContent(message.content) };
    }
    case 'stream_event': {
      const inner = obj(event, 'event');
      if (!inner) break;
      return { type, event: parseStreamEvent(inner) };
    }
    case 'result':
      return { type, isError: bool(event, 'is_error') ?? false, text: str(event, 'result') };
    case 'control_request': {
      const requestId = str(event, 'request_id');
      const request = obj(event, 'request');
      if (requestId === undefined || !request) break;
      const name = str(request, 'tool_name');
      const tool =
        str(request, 'subtype') === 'can_use_tool' && name !== undefined
          ? { name, toolUseId: str(request, 'tool_use_id'), input: request.input ?? null }
          : undefined;
      return { type, requestId, tool };
    }
    case 'control_response': {
      const response = obj(event, 'response');
      const requestId = response ? str(response, 'request_id') : undefined;
      if (!response || requestId === undefined) break;
      if (str(response, 'subtype') === 'error') {
        const error = response.error;
        const message = isObject(error) ? str(error, 'message') : typeof error === 'string' ? error : undefined;
        return { type, requestId, allowed: undefined, error: message ?? 'error' };
      }
      const inner = obj(response, 'response');
      return { type, requestId, allowed: inner ? bool(inner, 'allowed') : undefined, error: undefined };
    }
    default:
      break;
  }
  return { type: 'unknown', rawType: type };
}

/** Message content: a bare string is one text block. */
export function parseContent(content: JsonValue | undefined): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map(parseBlock);
}

function parseBlock(block: JsonValue): Block {
  if (!isObject(block)) return { type: 'other', rawType: undefined };
  const type = str(block, 'type');
  switch (type) {
    case 'text':
      return { type, text: str(block, 'text') ?? '' };
    case 'thinking':
      return { type, text: str(block, 'thinking') ?? '' };
    case 'tool_use': {
      const id = str(block, 'id');
      if (id === undefined) break;
      return { type, id, name: str(block, 'name') ?? 'tool', input: block.input ?? {} };
    }
    case 'tool_result': {
      const toolUseId = str(block, 'tool_use_id');
      if (toolUseId === undefined) break;
      return { type, toolUseId, isError: bool(block, 'is_error') ?? false, content: block.content };
    }
    default:
      break;
  }
  return { type: 'other', rawType: type };
}

function parseStreamEvent(e: JsonObject): StreamEvent {
  const index = num(e, 'index') ?? 0;
  switch (str(e, 'type')) {
    case 'message_start': {
      const message = obj(e, 'message');
      return { type: 'message_start', messageId: message ? str(message, 'id') : undefined };
    }
    case 'content_block_start':
      return { type: 'content_block_start', index, block: parseBlock(e.content_block ?? null) };
    case 'content_block_delta':
      return { type: 'content_block_delta', index, delta: parseDelta(obj(e, 'delta')) };
    case 'content_block_stop':
      return { type: 'content_block_stop', index };
    case 'message_stop':
      return { type: 'message_stop' };
    default:
      return { type: 'other' };
  }
}

function parseDelta(d: JsonObject | undefined): Delta {
  if (!d) return { type: 'other' };
  switch (str(d, 'type')) {
    case 'text_delta':
      return { type: 'text', text: str(d, 'text') ?? '' };
    case 'thinking_delta':
      return { type: 'thinking', text: str(d, 'thinking') ?? '' };
    case 'input_json_delta':
      return { type: 'input_json', partialJson: str(d, 'partial_json') ?? '' };
    default:
      return { type: 'other' };
  }
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
