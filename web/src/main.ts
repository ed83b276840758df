// Entry point: get a session cookie, then start the app. A 401 at any point
// (the cookie expired, the server restarted with a new token) brings back
// the token form and restarts the app after it.
import './styles.css';
import { App } from './app';
import { askForToken, consumeUrlToken, isShared, showShareEnded } from './auth';
import type { ChatState } from './chat/state';
import type { ScreenDump } from './terminal/terminal';

/** A console and test handle on the open session; not an API. */
interface DuetDebug {
  terminalText(): string;
  state(): ChatState | undefined;
  /** Terminal flow control: bytes queued now, the peak, and how often we paused. */
  flow(): { backlog: number; peak: number; pauses: number };
  dropConnection(): void;
  /** The socket is open and the server's hello has been applied. */
  connected(): boolean;
  /** The terminal's visible screen, line by line (cell-exact comparisons). */
  screen(): ScreenDump | undefined;
  /** Copies the terminal's selection (as Ctrl+Shift+C does). */
  copySelection(): Promise<boolean>;
  /** The open replay's terminal text, once every write to it is parsed. */
  replayText(): Promise<string>;
  /** The open replay's position in seconds (undefined: no replay open). */
  replayPosition(): number | undefined;
}

declare global {
  interface Window {
    duet?: DuetDebug;
  }
}

// Phones: the terminal gets a key bar, and the layout follows the visual
// viewport so the on-screen keyboard does not cover the prompt line.
if (navigator.maxTouchPoints > 0 || matchMedia('(pointer: coarse)').matches) document.documentElement.classList.add('touch');
const vv = window.visualViewport;
if (vv) {
  const follow = (): void => {
    const full = Math.abs(vv.height - window.innerHeight) < 1;
    if (full) document.documentElement.style.removeProperty('--app-height');
    else document.documentElement.style.setProperty('--app-height', `${String(vv.height)}px`);
    // iOS scrolls the layout viewport to show the input; keep the app at the top.
    if (!full && window.scrollY !== 0) window.scrollTo(0, 0);
  };
  vv.addEventListener('resize', follow);
  vv.addEventListener('scroll', follow);
}

const root = document.getElementById('app');
if (!root) throw new Error('#app missing from index.html');
const appRoot: HTMLElement = root;

async function boot(): Promise<void> {
  await consumeUrlToken();
  let relogging = false;
  const app = new App(() => {
    if (relogging) return;
    relogging = true;
    // A share link's cookie stops working when the link is revoked or
    // expires; its guest has no token to paste.
    if (isShared()) {
      app.close();
      showShareEnded(appRoot);
      return;
    }
    void askForToken(appRoot).then(() => { location.reload(); });
  });
  appRoot.replaceChildren(app.root);
  window.duet = {
    terminalText: () => app.current?.debug().terminalText() ?? '',
    state: () => app.current?.debug().state(),
    flow: () => app.current?.debug().flow() ?? { backlog: 0, peak: 0, pauses: 0 },
    dropConnection: () => { app.current?.debug().dropConnection(); },
    connected: () => app.current?.greeted ?? false,
    screen: () => app.current?.debug().screen(),
    copySelection: () => app.current?.terminal.copySelection() ?? Promise.resolve(false),
    replayText: async () => {
      const r = app.replay;
      if (!r) return '';
      await r.settled();
      return r.terminalText();
    },
    replayPosition: () => app.replay?.position,
  };
  await app.start();
}

void boot();
