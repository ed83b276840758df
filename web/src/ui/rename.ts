// Renaming a session in place: a small form that replaces the name while it
// is edited (Enter saves, Escape or leaving cancels). Used by the sidebar and
// the board; the server keeps the name (PATCH /api/sessions/{id}).
import type { SessionInfo } from '../generated/protocol';
import { api } from '../net/api';
import { h } from './dom';

/** Longest name the server accepts (duet_protocol::board::MAX_NAME_CHARS). */
export const MAX_NAME_CHARS = 120;

/**
 * What a session is called: the owner's name, else its first prompt (the
 * server's `prompt_name`), else the title its program set, else its profile.
 */
export function sessionLabel(s: SessionInfo): string {
  if (s.name !== undefined && s.name !== '') return s.name;
  if (s.prompt_name !== undefined && s.prompt_name !== '') return s.prompt_name;
  if (s.title !== undefined && s.title !== '') return s.title;
  return s.profile;
}

/**
 * A rename form for `s`. `done` runs when it closes, with the error message
 * if the server refused (e.g. 403 for a role that may not rename).
 */
export function renameForm(s: SessionInfo, done: (error?: string) => void): HTMLFormElement {
  const input = h('input', { type: 'text', class: 'rename-input', value: s.name ?? '', placeholder: sessionLabel(s), maxlength: MAX_NAME_CHARS, 'aria-label': `New name for session ${sessionLabel(s)}` });
  let closed = false;
  const close = (error?: string): void => {
    if (closed) return;
    closed = true;
    done(error);
  };
  const form = h(
    'form',
    {
      class: 'rename-form',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        input.disabled = true;
        api.rename(s.id, input.value).then(
          () => { close(); },
          (err: unknown) => { close(err instanceof Error ? err.message : String(err)); },
        );
      },
    },
    input,
    h('button', { type: 'submit', class: 'btn btn-quiet' }, 'Save'),
  );
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      close();
    }
  });
  form.addEventListener('focusout', (ev) => {
    if (!input.disabled && !(ev.relatedTarget instanceof Node && form.contains(ev.relatedTarget))) close();
  });
  queueMicrotask(() => { input.focus(); input.select(); });
  return form;
}
