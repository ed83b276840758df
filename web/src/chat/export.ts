// The chat as Markdown, for "Export → Chat": what was said, each tool call
// with its input, how its approval was decided and its result. Pure, so it
// is unit-tested; thinking and notices are left out (they are not the
// conversation).
import type { ChatState, ToolItem } from './state';
import { presentTool } from './tools';

/** A fenced block that no backtick run inside `text` can close. */
function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

function resultText(t: ToolItem): string | undefined {
  const c = t.result?.content;
  if (c === undefined) return undefined;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((b) => (typeof b === 'object' && b !== null && 'text' in b && typeof b.text === 'string' ? b.text : JSON.stringify(b))).join('\n');
  return JSON.stringify(c, null, 2);
}

function tool(t: ToolItem, state: ChatState): string {
  const p = presentTool(t.input);
  const input = p.kind === 'shell' ? fence(p.command, 'sh') : p.kind === 'edit' ? `${p.path}\n\n${fence(p.after)}` : p.kind === 'write' ? `${p.path}\n\n${fence(p.content)}` : p.text !== '' ? fence(p.text, 'json') : '';
  const a = t.requestId !== undefined ? state.approvals[t.requestId] : undefined;
  const decided = a && a.state !== 'pending' ? `\n\n*${a.state}${a.decidedBy !== undefined ? ` ${({ client: 'in the browser', terminal: 'in the terminal', notification: 'from a notification', policy: `by policy ${a.decidedByName ?? ''}` } as const)[a.decidedBy]}` : ''}*` : a ? '\n\n*waiting for approval*' : '';
  const out = resultText(t);
  const result = out !== undefined ? `\n\n${t.result?.isError === true ? 'Error' : 'Result'}:\n\n${fence(out)}` : '';
  return `**Tool: ${t.name}**\n\n${input}${decided}${result}`;
}

/** The conversation as a Markdown document, under `title`. */
export function chatMarkdown(state: ChatState, title: string): string {
  const parts = [`# ${title}`];
  for (const item of state.items) {
    switch (item.kind) {
      case 'user':
        parts.push(`## You\n\n${item.text}`);
        break;
      case 'assistant':
        parts.push(`## Agent\n\n${item.text}`);
        break;
      case 'tool':
        parts.push(tool(item, state));
        break;
      case 'thinking':
      case 'notice':
        break;
    }
  }
  return `${parts.join('\n\n')}\n`;
}
