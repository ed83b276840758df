// The ☰ button and how the sidebar shows. Below 1024 px (phones, tablets, a
// narrow window) the sidebar is a drawer over the page, closed until asked
// for: as a 260 px column it left the terminal 22 columns in Split at 800 px.
// Wider, it is a column that the button hides and shows again, remembered in
// localStorage. The button counts the approvals waiting in the other sessions:
// a closed drawer or a hidden column would hide them (a phone showed no sign).
import { h } from './dom';

/** Below this width the sidebar is a drawer (the same breakpoint as styles.css). */
const DRAWER_MEDIA = '(max-width: 1023px)';
/** `hidden` while the user keeps the sidebar column hidden on wide screens. */
const COLUMN_KEY = 'duet.sidebar';

/** The ☰ button; it sets `sidebar-open` (drawer) or `sidebar-collapsed` (column) on the app's root. */
export class SidebarToggle {
  readonly button: HTMLButtonElement;
  private readonly drawer: MediaQueryList;
  private readonly badge: HTMLElement;
  private waiting = 0;

  constructor(private readonly app: HTMLElement, sidebar: HTMLElement) {
    // The count is in the button's name; the badge only draws it.
    this.badge = h('span', { class: 'menu-badge', 'aria-hidden': 'true', hidden: true });
    this.button = h('button', { type: 'button', class: 'btn btn-icon menu', 'aria-controls': 'sidebar', onclick: () => { this.toggle(); } }, h('span', { 'aria-hidden': 'true' }, '☰'), this.badge);
    this.drawer = matchMedia(DRAWER_MEDIA);
    // Across the breakpoint an open drawer closes; the column keeps its choice.
    this.drawer.addEventListener('change', () => {
      this.app.classList.remove('sidebar-open');
      this.sync();
    });
    // A link in the drawer (Board, a resumed session's origin) leads away: the
    // drawer closes, also when the address stays the same. Escape closes it too.
    sidebar.addEventListener('click', (ev) => {
      if (ev.target instanceof Element && ev.target.closest('a[href]')) this.closeDrawer();
    });
    sidebar.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Escape' || !this.app.classList.contains('sidebar-open')) return;
      this.closeDrawer();
      this.button.focus();
    });
    this.app.classList.toggle('sidebar-collapsed', localStorage.getItem(COLUMN_KEY) === 'hidden');
    this.sync();
  }

  /** Opens or closes the drawer; on a wide screen hides or shows the column. */
  toggle(): void {
    if (this.drawer.matches) {
      this.app.classList.toggle('sidebar-open');
    } else if (this.app.classList.toggle('sidebar-collapsed')) {
      localStorage.setItem(COLUMN_KEY, 'hidden');
    } else {
      localStorage.removeItem(COLUMN_KEY);
    }
    this.sync();
  }

  /** Closes the drawer (a session or the board was chosen); a column stays as it is. */
  closeDrawer(): void {
    if (!this.app.classList.contains('sidebar-open')) return;
    this.app.classList.remove('sidebar-open');
    this.sync();
  }

  /** How many approvals wait in sessions other than the open one. */
  setWaiting(n: number): void {
    if (n === this.waiting) return;
    this.waiting = n;
    this.sync();
  }

  private sync(): void {
    const n = this.waiting;
    this.badge.hidden = n === 0;
    this.badge.textContent = n > 99 ? '99+' : String(n);
    const label = n === 0 ? 'Sessions' : `Sessions: ${n === 1 ? '1 approval waiting in another session' : `${String(n)} approvals waiting in other sessions`}`;
    if (this.button.getAttribute('aria-label') !== label) {
      this.button.setAttribute('aria-label', label);
      this.button.title = label;
    }
    const shown = this.drawer.matches ? this.app.classList.contains('sidebar-open') : !this.app.classList.contains('sidebar-collapsed');
    this.button.setAttribute('aria-expanded', String(shown));
  }
}
