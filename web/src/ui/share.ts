// Who is connected to the open session, and (for the owner) the Share
// dialog: create a link with a role and an expiry, copy it, list and revoke
// the session's links (each named as the presence bar names its guests).
// Clients are named by their device ("Chrome on Android"), this tab's own
// editable in place; the principal and the role are said only when they
// are not the owner's (every chip read "owner (owner)").
import type { ConnectedClient, Role, Share } from '../generated/protocol';
import { api } from '../net/api';
import { h } from './dom';
import { canManage } from './roles';
import { deviceName, MAX_DEVICE_CHARS, setDeviceName } from './device';

/** How the presence bar names a client: its device (else its principal), then who it is when not the owner, and its role when not owner. */
export function clientLabel(c: ConnectedClient, me: boolean): string {
  const who = c.device !== undefined && c.name !== 'owner' ? ` · ${c.name}` : '';
  const role = c.role !== 'owner' ? ` (${c.role})` : '';
  return `${c.device ?? c.name}${who}${role}${me ? ' (you)' : ''}`;
}

const EXPIRIES: [string, number][] = [
  ['1 hour', 3600],
  ['1 day', 86400],
  ['7 days', 7 * 86400],
];

/** The presence bar: connected clients with their roles, and the Share button. */
export class PresenceBar {
  readonly root: HTMLElement;
  private readonly list: HTMLElement;
  private readonly shareButton: HTMLButtonElement;
  private readonly dialog: ShareDialog;
  /** This tab's device name being edited (kept across redraws). */
  private editing: HTMLFormElement | undefined;
  private last: { clients: ConnectedClient[]; me: number | undefined } = { clients: [], me: undefined };

  constructor(sessionId: string) {
    this.list = h('ul', { class: 'presence-list', 'aria-label': 'Connected' });
    this.dialog = new ShareDialog(sessionId);
    this.shareButton = h('button', { type: 'button', class: 'btn btn-quiet share-open', hidden: true, onclick: () => { this.dialog.open(); } }, 'Share');
    this.root = h('div', { class: 'presence' }, this.list, this.shareButton, this.dialog.root);
  }

  /** Shows who is connected; `me` is this tab's client id. */
  render(clients: ConnectedClient[], me: number | undefined, role: Role | undefined, principal: string | undefined): void {
    // The session redraws for other news too: rebuild the list only for new clients.
    if (clients !== this.last.clients || me !== this.last.me) {
      this.last = { clients, me };
      this.drawClients();
    }
    this.root.dataset.role = role ?? '';
    this.root.dataset.principal = principal ?? '';
    this.shareButton.hidden = role === undefined || !canManage(role);
  }

  private drawClients(): void {
    const { clients, me } = this.last;
    // Not under the open name editor: a redraw would take its focus.
    if (this.editing?.isConnected !== true) {
      this.list.replaceChildren(
        ...clients.map((c) => {
          const mine = c.client_id === me;
          const title = `${c.device ?? 'unnamed device'}: ${c.name}, ${c.role}`;
          return h('li', { class: `presence-item${mine ? ' presence-me' : ''}`, 'data-role': c.role, title },
            mine
              ? h('button', { type: 'button', class: 'linkish presence-rename', title: 'Rename this device (as the others see it)', onclick: () => { this.editName(); } }, clientLabel(c, true))
              : clientLabel(c, false));
        }),
      );
    }
  }

  /** Edits this device's name in place of its chip: Enter saves, Escape or leaving cancels. */
  private editName(): void {
    const item = this.list.querySelector('.presence-me');
    if (!item) return;
    const input = h('input', { type: 'text', class: 'rename-input device-input', value: deviceName(), maxlength: MAX_DEVICE_CHARS, 'aria-label': 'Name of this device, as others see it' });
    let closed = false;
    const close = (save: boolean): void => {
      if (closed) return;
      closed = true;
      this.editing = undefined;
      // Saving reconnects this browser's sockets with the new name; their `clients` redraw the bar.
      if (save) setDeviceName(input.value);
      this.drawClients();
      this.list.querySelector<HTMLElement>('.presence-rename')?.focus();
    };
    const form = h('form', { class: 'rename-form device-form', onsubmit: (ev: Event) => { ev.preventDefault(); close(true); } }, input, h('button', { type: 'submit', class: 'btn btn-quiet' }, 'Save'));
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        ev.preventDefault();
        ev.stopPropagation();
        close(false);
      }
    });
    form.addEventListener('focusout', (ev) => {
      if (!(ev.relatedTarget instanceof Node && form.contains(ev.relatedTarget))) close(false);
    });
    this.editing = form;
    item.replaceChildren(form);
    input.focus();
    input.select();
  }
}

/** The owner's Share dialog. */
class ShareDialog {
  readonly root: HTMLDialogElement;
  private readonly role: HTMLSelectElement;
  private readonly expiry: HTMLSelectElement;
  private readonly link: HTMLInputElement;
  private readonly status: HTMLElement;
  private readonly list: HTMLElement;
  /** The share whose link is in the field (shown once, until revoked). */
  private shown: string | undefined;

  constructor(private readonly sessionId: string) {
    this.role = h('select', { class: 'share-role', 'aria-label': 'Role' },
      h('option', { value: 'viewer' }, 'viewer: reads only'),
      h('option', { value: 'approver' }, 'approver: answers tool approvals'),
      h('option', { value: 'driver' }, 'driver: types, prompts, cancels'),
    );
    this.expiry = h('select', { class: 'share-expiry', 'aria-label': 'Expires in' }, ...EXPIRIES.map(([label, secs]) => h('option', { value: secs }, label)));
    this.link = h('input', { class: 'share-link', readonly: true, 'aria-label': 'Share link', placeholder: 'The new link appears here once' });
    this.status = h('p', { class: 'share-status', role: 'status' });
    this.list = h('ul', { class: 'share-list', 'aria-label': 'Share links' });
    const create = h('button', { type: 'button', class: 'btn btn-primary share-create', onclick: () => { void this.create(); } }, 'Create link');
    const close = h('button', { type: 'button', class: 'btn btn-quiet', onclick: () => { this.root.close(); } }, 'Close');
    this.root = h('dialog', { class: 'share-dialog', 'aria-label': 'Share this session' },
      h('h2', {}, 'Share this session'),
      h('p', { class: 'share-hint' }, 'Anyone with the link can open this one session with the chosen role until it expires or you revoke it.'),
      h('div', { class: 'share-form' }, this.role, this.expiry, create),
      this.link,
      this.status,
      h('h3', {}, 'Links'),
      this.list,
      close,
    );
  }

  open(): void {
    this.link.value = '';
    this.shown = undefined;
    this.status.textContent = '';
    this.root.showModal();
    void this.refresh();
  }

  private async create(): Promise<void> {
    try {
      const share = await api.createShare(this.sessionId, { role: this.role.value as Role, expires_in: Number(this.expiry.value) });
      const url = new URL((share.url ?? '').replace(/^\//, ''), new URL('.', document.baseURI)).href;
      this.link.value = url;
      this.shown = share.id;
      this.link.select();
      try {
        await navigator.clipboard.writeText(url);
        this.status.textContent = 'Link copied.';
      } catch {
        this.status.textContent = 'Copy the link above (it is shown only once).';
      }
    } catch (err) {
      this.status.textContent = `Could not create a link: ${err instanceof Error ? err.message : String(err)}`;
    }
    await this.refresh();
  }

  private async refresh(): Promise<void> {
    let shares: Share[];
    try {
      shares = await api.shares(this.sessionId);
    } catch (err) {
      this.list.replaceChildren(h('li', {}, `Could not list links: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    if (shares.length === 0) {
      this.list.replaceChildren(h('li', { class: 'share-none' }, 'No links.'));
      return;
    }
    this.list.replaceChildren(
      ...shares.map((s) =>
        h('li', { class: 'share-item', 'data-share': s.id },
          // The name the presence bar gives the link's guests: the owner matches them up by it.
          h('span', {}, h('code', { class: 'share-id' }, `share:${s.id}`), ` · ${s.role}, expires ${new Date(s.expires_at).toLocaleString()} `),
          h('button', { type: 'button', class: 'btn btn-deny share-revoke', onclick: () => { void this.revoke(s.id); } }, 'Revoke'),
        ),
      ),
    );
  }

  private async revoke(id: string): Promise<void> {
    try {
      await api.revokeShare(this.sessionId, id);
      // A revoked link must not stay in the field to be copied again.
      if (this.shown === id) {
        this.link.value = '';
        this.shown = undefined;
      }
      this.status.textContent = 'Link revoked; its viewers were disconnected.';
    } catch (err) {
      this.status.textContent = `Could not revoke: ${err instanceof Error ? err.message : String(err)}`;
    }
    await this.refresh();
  }
}
