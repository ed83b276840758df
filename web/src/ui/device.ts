// What this device is called to the other clients of a session ("Chrome on
// Android"), so that two tabs of one principal can be told apart: guessed
// from the browser, editable by the user, remembered per device (this
// browser's localStorage). The socket sends it when it connects
// (`?device=`); a new name reconnects this browser's sockets, in every tab.
const KEY = 'duet.device';
/** The server keeps at most this many characters (server/src/ws/mod.rs). */
export const MAX_DEVICE_CHARS = 60;

/** "Chrome on Android", "Safari on iPhone", "Firefox on Linux": from a user agent string. */
export function guessDevice(ua: string): string {
  const browser = /Edg(e|A|iOS)?\//.test(ua) ? 'Edge'
    : /OPR\/|Opera/.test(ua) ? 'Opera'
      : /Firefox\/|FxiOS\//.test(ua) ? 'Firefox'
        : /Chrome\/|CriOS\/|Chromium\//.test(ua) ? 'Chrome'
          : ua.includes('Safari/') ? 'Safari'
            : 'Browser';
  const os = ua.includes('Android') ? 'Android'
    : /iPhone|iPod/.test(ua) ? 'iPhone'
      : ua.includes('iPad') ? 'iPad'
        : ua.includes('CrOS') ? 'ChromeOS'
          : ua.includes('Windows') ? 'Windows'
            : /Mac OS X|Macintosh/.test(ua) ? 'macOS'
              : /Linux|X11/.test(ua) ? 'Linux'
                : '';
  return os === '' ? browser : `${browser} on ${os}`;
}

/** This device's name: the user's, else the guess. */
export function deviceName(): string {
  try {
    const saved = localStorage.getItem(KEY)?.trim();
    if (saved) return saved.slice(0, MAX_DEVICE_CHARS);
  } catch {
    // No storage: the guess.
  }
  return guessDevice(navigator.userAgent);
}

const listeners = new Set<() => void>();

/** Names this device (blank: back to the guess) and tells this tab's listeners. */
export function setDeviceName(name: string): void {
  const clean = name.trim().slice(0, MAX_DEVICE_CHARS);
  try {
    if (clean === '') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, clean);
  } catch {
    // Not remembered: this tab still uses it for its next connection.
  }
  for (const l of listeners) l();
}

/** Runs `fn` when the name changes, here or in another tab; returns the unsubscribe. */
export function onDeviceName(fn: () => void): () => void {
  listeners.add(fn);
  return () => { listeners.delete(fn); };
}

// Another tab of this browser renamed the device.
if (typeof window !== 'undefined') {
  window.addEventListener('storage', (ev) => {
    if (ev.key === KEY) for (const l of listeners) l();
  });
}
