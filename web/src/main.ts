// Entry point: get a session cookie, then start the app. A 401 at any point
// (the cookie expired, the server restarted with a new token) brings back
// the token form and restarts the app after it.
import './styles.css';
import { App } from './app';
import { askForToken, consumeUrlToken } from './auth';
import type { ChatState } from './chat/state';

/** A console and test handle on the open session; not an API. */
interface DuetDebug {
  terminalText(): string;
  state(): ChatState | undefined;
  /** Terminal flow control: bytes queued now, the peak, and how often we paused. */
  flow(): { backlog: number; peak: number; pauses: number };
  dropConnection(): void;
  /** The socket is open and the server's hello has been applied. */
  connected(): boolean;
}

declare global {
  interface Window {
    duet?: DuetDebug;
  }
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
    void askForToken(appRoot).then(() => { location.reload(); });
  });
  appRoot.replaceChildren(app.root);
  window.duet = {
    terminalText: () => app.current?.debug().terminalText() ?? '',
    state: () => app.current?.debug().state(),
    flow: () => app.current?.debug().flow() ?? { backlog: 0, peak: 0, pauses: 0 },
    dropConnection: () => { app.current?.debug().dropConnection(); },
    connected: () => app.current?.greeted ?? false,
  };
  await app.start();
}

void boot();
