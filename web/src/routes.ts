// The page's address: what the URL hash names. The open session lives there
// (#/session/<id>, from a notification #/session/<id>/approval/<request id>),
// as do its replay (#/session/<id>/replay) and the board (#/board), so a
// reload or a second tab lands on the same view.

/** `#/board`: the board. */
export function hashBoard(): boolean {
  return location.hash === '#/board';
}

/** `#/session/<id>/replay`: the replay of that session. */
export function hashReplay(): string | undefined {
  const m = /^#\/session\/([^/?#]+)\/replay$/.exec(location.hash);
  return m?.[1] === undefined ? undefined : decodeURIComponent(m[1]);
}

/** `#/session/<id>`, or `#/session/<id>/approval/<request id>` (from a notification). */
export function hashSession(): string | undefined {
  const m = /^#\/session\/([^/?#]+)(?:\/approval\/[^/?#]+)?$/.exec(location.hash);
  return m?.[1] !== undefined ? decodeURIComponent(m[1]) : undefined;
}

/** The approval named by `#/session/<id>/approval/<request id>`. */
export function hashApproval(): string | undefined {
  const m = /^#\/session\/[^/?#]+\/approval\/([^/?#]+)$/.exec(location.hash);
  return m?.[1] !== undefined ? decodeURIComponent(m[1]) : undefined;
}

/** The hash that opens session `id` (none: the empty page). */
export function sessionHash(id: string | undefined): string {
  return id === undefined ? '' : `#/session/${encodeURIComponent(id)}`;
}
