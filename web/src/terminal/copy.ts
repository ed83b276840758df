// Copying from the terminal: its selection to the clipboard (Ctrl+Shift+C,
// the copy button), or into xterm's textarea for the browser's context menu.
import type { Terminal } from '@xterm/xterm';

/** Copies `term`'s selection to the clipboard; false when nothing is selected. */
export async function copySelection(term: Terminal): Promise<boolean> {
  const text = term.getSelection();
  if (text === '') return false;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (insecure context): the legacy path, from the terminal's own textarea.
    const ta = term.textarea;
    if (!ta) return false;
    const old = ta.value;
    ta.value = text;
    ta.select();
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the only copy path without the async clipboard API
    document.execCommand('copy');
    ta.value = old;
  }
  return true;
}

/** Puts `term`'s selection in its textarea, where the context menu's Copy finds it. */
export function selectionToTextarea(term: Terminal): void {
  const ta = term.textarea;
  const sel = term.getSelection();
  if (ta && sel !== '') {
    ta.value = sel;
    ta.select();
  }
}
