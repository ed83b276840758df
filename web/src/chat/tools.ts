// How a tool call's input is shown: a shell command, a file edit as a diff, a
// new file's content, or the JSON as a fallback. Pure, so it is unit-tested;
// the DOM side lives in chat/view.ts.
import type { JsonValue } from '../generated/protocol';
import { isObject, str } from './json';

/** The presentation of a tool input. */
export type ToolPresentation =
  | { readonly kind: 'shell'; readonly command: string; readonly description: string | undefined }
  | { readonly kind: 'edit'; readonly path: string; readonly before: string; readonly after: string }
  | { readonly kind: 'write'; readonly path: string; readonly content: string }
  | { readonly kind: 'json'; readonly text: string };

/** Picks the presentation from the input's shape, whatever the tool is called. */
export function presentTool(input: JsonValue): ToolPresentation {
  if (isObject(input)) {
    const path = str(input, 'file_path') ?? str(input, 'path') ?? str(input, 'absolute_path');
    if (path !== undefined) {
      const before = str(input, 'old_string') ?? str(input, 'old_str');
      const after = str(input, 'new_string') ?? str(input, 'new_str');
      if (before !== undefined && after !== undefined) return { kind: 'edit', path, before, after };
      const content = str(input, 'content') ?? str(input, 'file_text');
      if (content !== undefined) return { kind: 'write', path, content };
    }
    const command = str(input, 'command') ?? str(input, 'cmd');
    if (command !== undefined) return { kind: 'shell', command, description: str(input, 'description') };
  }
  return { kind: 'json', text: isObject(input) && Object.keys(input).length === 0 ? '' : JSON.stringify(input, null, 2) };
}

/** The last component of a path. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter((s) => s !== '');
  return parts.at(-1) ?? path;
}

/** The question on the approval card. */
export function approvalQuestion(toolName: string, p: ToolPresentation): string {
  switch (p.kind) {
    case 'shell':
      return 'Run this command?';
    case 'edit':
      return `Apply this change to ${baseName(p.path)}?`;
    case 'write':
      return `Write ${baseName(p.path)}?`;
    case 'json':
      return `Allow ${toolName}?`;
  }
}

/** A one-line summary for the card header and the approval prompt. */
export function toolSummary(p: ToolPresentation): string {
  switch (p.kind) {
    case 'shell':
      return p.command.split('\n')[0] ?? '';
    case 'edit':
    case 'write':
      // The file name says the most; the full path is in the diff's caption.
      return baseName(p.path);
    case 'json':
      return '';
  }
}
