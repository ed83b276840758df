// duet's REST API, typed with the generated protocol types and checked at
// runtime (net/guards.ts). Requests carry the session cookie (same origin);
// a 401 surfaces as `ApiError` with code `unauthorized`, which the app turns
// into the token form.
import type { ApprovalDecision, Budget, BudgetStatus, CreateSession, CreateShare, ErrorCode, Me, ProfileInfo, PushDevice, PushKey, ResumeSession, SessionInfo, Share, SubmitResponse } from '../generated/protocol';
import { isObject } from '../chat/json';
import { isListOf, isMe, isProfileInfo, isPushDevice, isSessionInfo } from './guards';
import { valid } from './validate';

/** A failed request: the server's `{error: {code, message}}`, or a transport problem. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'network' | 'bad_response',
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** An address under the app's base (works behind a path-prefixing proxy too). */
export function apiUrl(path: string): URL {
  return new URL(path, document.baseURI);
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(apiUrl(path), {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, 'network', err instanceof Error ? err.message : 'network error');
  }
  const text = await res.text();
  let data: unknown = undefined;
  if (text !== '') {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  if (!res.ok) {
    // Read leniently: a newer server's code is still worth its message.
    const e = isObject(data) && isObject(data.error) ? data.error : undefined;
    const code = e && typeof e.code === 'string' ? (e.code as ErrorCode) : res.status === 401 ? 'unauthorized' : 'internal';
    const message = e && typeof e.message === 'string' ? e.message : `${method} ${path}: HTTP ${res.status}`;
    throw new ApiError(res.status, code, message);
  }
  return data;
}

function expect<T>(data: unknown, is: (v: unknown) => v is T, what: string): T {
  if (!is(data)) throw new ApiError(200, 'bad_response', `unexpected reply for ${what}`);
  return data;
}

const isPushKey = (v: unknown): v is PushKey => valid('PushKey', v);

const isSubmitResponse = (v: unknown): v is SubmitResponse => valid('SubmitResponse', v);

/** The REST endpoints the UI uses. */
export const api = {
  /** Trades the access token for the session cookie. */
  async login(token: string): Promise<void> {
    await call('POST', 'api/login', { token });
  },
  /** Who this tab's credential is: the owner, a named token, or a share link. */
  async me(): Promise<Me> {
    return expect(await call('GET', 'api/me'), isMe, 'me');
  },
  async profiles(): Promise<ProfileInfo[]> {
    return expect(await call('GET', 'api/profiles'), isListOf(isProfileInfo), 'profiles');
  },
  async sessions(): Promise<SessionInfo[]> {
    return expect(await call('GET', 'api/sessions'), isListOf(isSessionInfo), 'sessions');
  },
  async session(id: string): Promise<SessionInfo> {
    return expect(await call('GET', `api/sessions/${encodeURIComponent(id)}`), isSessionInfo, 'session');
  },
  async createSession(req: CreateSession): Promise<SessionInfo> {
    return expect(await call('POST', 'api/sessions', req), isSessionInfo, 'new session');
  },
  /** Names the session (owner only); an empty name clears it. */
  async rename(id: string, name: string): Promise<SessionInfo> {
    return expect(await call('PATCH', `api/sessions/${encodeURIComponent(id)}`, { name }), isSessionInfo, 'renamed session');
  },
  /** Ends the session; with `purge`, also deletes its transcript (204: nothing is left). */
  async deleteSession(id: string, opts: { purge?: boolean } = {}): Promise<void> {
    await call('DELETE', `api/sessions/${encodeURIComponent(id)}${opts.purge === true ? '?purge=true' : ''}`);
  },
  /** The REST fallback for `submit` while the socket is down. */
  async submit(id: string, text: string): Promise<SubmitResponse> {
    return expect(await call('POST', `api/sessions/${encodeURIComponent(id)}/submit`, { text }), isSubmitResponse, 'submit');
  },
  /** Switches the agent to one of the modes it offered (ACP agents). */
  async setMode(id: string, mode: string): Promise<void> {
    await call('POST', `api/sessions/${encodeURIComponent(id)}/mode`, { mode });
  },
  /** Switches the agent to one of the models it offered (ACP agents). */
  async setModel(id: string, model: string): Promise<void> {
    await call('POST', `api/sessions/${encodeURIComponent(id)}/model`, { model });
  },
  /** The REST fallback for `approve` while the socket is down. */
  async approve(id: string, requestId: string, decision: ApprovalDecision): Promise<void> {
    await call('POST', `api/sessions/${encodeURIComponent(id)}/approvals/${encodeURIComponent(requestId)}`, decision);
  },
  /** Sets (raises) the session's budget (owner only); `{}` lifts it. */
  async setBudget(id: string, budget: Budget): Promise<BudgetStatus | null> {
    return (await call('PUT', `api/sessions/${encodeURIComponent(id)}/budget`, budget)) as BudgetStatus | null;
  },
  /** The session's live share links (owner only; without their secrets). */
  async shares(id: string): Promise<Share[]> {
    return (await call('GET', `api/sessions/${encodeURIComponent(id)}/shares`)) as Share[];
  },
  /** A new share link of the session (owner only); its `url` is shown once. */
  async createShare(id: string, req: CreateShare): Promise<Share> {
    return (await call('POST', `api/sessions/${encodeURIComponent(id)}/shares`, req)) as Share;
  },
  /** Revokes a share link: it stops working and its viewers are disconnected. */
  async revokeShare(id: string, shareId: string): Promise<void> {
    await call('DELETE', `api/sessions/${encodeURIComponent(id)}/shares/${encodeURIComponent(shareId)}`);
  },
  /** The server's VAPID public key (base64url), for `PushManager.subscribe`. */
  async pushKey(): Promise<string> {
    return expect(await call('GET', 'api/push/key'), isPushKey, 'push key').public_key;
  },
  /** This login's devices that receive Web Push. */
  async pushDevices(): Promise<PushDevice[]> {
    return expect(await call('GET', 'api/push/subscriptions'), isListOf(isPushDevice), 'push devices');
  },
  /** Registers a browser's `PushSubscription` (its `toJSON()`). */
  async pushSubscribe(subscription: PushSubscriptionJSON): Promise<PushDevice> {
    return expect(await call('POST', 'api/push/subscriptions', subscription), isPushDevice, 'push device');
  },
  /** Turns a device off. */
  async pushUnsubscribe(endpoint: string): Promise<void> {
    await call('DELETE', 'api/push/subscriptions', { endpoint });
  },
  /** Mutes (or unmutes) one session on a device. */
  async pushMute(endpoint: string, session: string, muted: boolean): Promise<PushDevice> {
    return expect(await call('PUT', 'api/push/subscriptions/mute', { endpoint, session, muted }), isPushDevice, 'push device');
  },
  /** The earlier conversation of a resumed session: NDJSON of `HistoryLine`s (empty when it resumed nothing). */
  async history(id: string): Promise<string> {
    let res: Response;
    try {
      res = await fetch(apiUrl(`api/sessions/${encodeURIComponent(id)}/history`), { credentials: 'same-origin', headers: { accept: 'application/x-ndjson' } });
    } catch (err) {
      throw new ApiError(0, 'network', err instanceof Error ? err.message : 'network error');
    }
    if (!res.ok) throw new ApiError(res.status, res.status === 401 ? 'unauthorized' : 'internal', `GET history: HTTP ${res.status}`);
    return res.text();
  },
  /** Starts the ended session's conversation again, at `size` (the ended one's without it): 201 with the new session. */
  async resume(id: string, size: ResumeSession = {}): Promise<SessionInfo> {
    try {
      return expect(await call('POST', `api/sessions/${encodeURIComponent(id)}/resume`, size), isSessionInfo, 'resumed session');
    } catch (err) {
      // A server without the endpoint answers with no error body.
      if (err instanceof ApiError && (err.status === 404 || err.status === 405) && err.code === 'internal') {
        throw new ApiError(err.status, err.code, 'this server cannot resume sessions');
      }
      throw err;
    }
  },
};
