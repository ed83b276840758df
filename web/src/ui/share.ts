// Who is connected to the open session, and (for the owner) the Share
// dialog: create a link with a role and an expiry, copy it, list and revoke
// the session's links (each named as the presence bar names its guests).
import type { ConnectedClient, Role, Share } from '../generated/protocol';
import { api } from '../net/api';
import { h } from './dom';
import { canManage } from './roles';

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

  constructor(sessionId: string) {
    this.list = h('ul', { class: 'presence-list', 'aria-label': 'Connected' });
    this.dialog = new ShareDialog(sessionId);
    this.shareButton = h('button', { type: 'button', class: 'btn btn-quiet share-open', hidden: true, onclick: () => { this.dialog.open(); } }, 'Share');
    this.root = h('div', { class: 'presence' }, this.list, this.shareButton, this.dialog.root);
  }

  /** Shows who is connected; `me` is this tab's client id. */
  render(clients: ConnectedClient[], me: number | undefined, role: Role | undefined, principal: string | undefined): void {
    this.list.replaceChildren(
      ...clients.map((c) => {
        // A client's own label ("terminal on laptop") says which of the
        // principal's clients it is; the principal stays in the tooltip.
        const shown = c.label ?? c.name;
        const title = c.label === undefined ? `${c.name} (${c.role})` : `${c.label}: ${c.name} (${c.role})`;
        return h('li', { class: 'presence-item', 'data-role': c.role, 'data-label': c.label ?? '', title }, c.client_id === me ? `${shown} (you, ${c.role})` : `${shown} (${c.role})`);
      }),
    );
    this.root.dataset.role = role ?? '';
    this.root.dataset.principal = principal ?? '';
    this.shareButton.hidden = role === undefined || !canManage(role);
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
    this.status.textContent = '';
    this.root.showModal();
    void this.refresh();
  }

  private async create(): Promise<void> {
    try {
      const share = await api.createShare(this.sessionId, { role: this.role.value as Role, expires_in: Number(this.expiry.value) });
      const url = new URL((share.url ?? '').replace(/^\//, ''), new URL('.', document.baseURI)).href;
      this.link.value = url;
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
      this.status.textContent = 'Link revoked; its viewers were disconnected.';
    } catch (err) {
      this.status.textContent = `Could not revoke: ${err instanceof Error ? err.message : String(err)}`;
    }
    await this.refresh();
  }
}
