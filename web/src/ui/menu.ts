// The ☰ button and how the sidebar shows. Below 1024 px (phones, tablets, a
// narrow window) the sidebar is a drawer over the page, closed until asked
// for: as a 260 px column it left the terminal 22 columns in Split at 800 px.
// Wider, it is a column that the button hides and shows again, remembered in
// localStorage.
import { h } from './dom';

/** Below this width the sidebar is a drawer (the same breakpoint as styles.css). */
const DRAWER_MEDIA = '(max-width: 1023px)';
/** `hidden` while the user keeps the sidebar column hidden on wide screens. */
const COLUMN_KEY = 'duet.sidebar';

/** The ☰ button; it sets `sidebar-open` (drawer) or `sidebar-collapsed` (column) on the app's root. */
export class SidebarToggle {
  readonly button: HTMLButtonElement;
  private readonly drawer: MediaQueryList;

  constructor(private readonly app: HTMLElement, sidebar: HTMLElement) {
    this.button = h('button', { type: 'button', class: 'btn btn-icon menu', 'aria-label': 'Sessions', title: 'Sessions', 'aria-controls': 'sidebar', onclick: () => { this.toggle(); } }, h('span', { 'aria-hidden': 'true' }, '☰'));
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

  private sync(): void {
    const shown = this.drawer.matches ? this.app.classList.contains('sidebar-open') : !this.app.classList.contains('sidebar-collapsed');
    this.button.setAttribute('aria-expanded', String(shown));
  }
}
