// What pages and the service worker tell each other (postMessage). Shared by
// both sides; types only, so the worker bundles no page code.

/** A system notification to show, unless a visible tab already shows it. */
export interface NotifyItem {
  /** One per thing (an approval, a session's turn or exit): a newer one replaces it, a decision closes it. */
  readonly tag: string;
  readonly title: string;
  readonly body: string;
  /** Where a click goes (relative to the app). */
  readonly url: string;
  /** Allow and Deny (Web Push only, to a principal that may approve). */
  readonly actions?: readonly { readonly action: string; readonly title: string }[] | undefined;
  /** The approval's request id (an approval's notification). */
  readonly requestId?: string | undefined;
  /** How those buttons answer: a one-use capability for this approval. */
  readonly decide?: { readonly url: string; readonly capability: string; readonly expires_at: number } | undefined;
}

/** Page → worker. */
export type ToWorker =
  | { readonly type: 'notify'; readonly items: readonly NotifyItem[] }
  | { readonly type: 'close'; readonly tags: readonly string[] };

/** Worker → page: open this place of the app (a notification was clicked). */
export interface OpenMessage {
  readonly type: 'open';
  readonly url: string;
}
