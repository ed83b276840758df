// How a program ended, in words, for every place that says it: the chat's
// note and status line, the terminal's banner, the board and notifications.
// A program that duet ended because duet itself was stopping says so: its
// status is the shutdown's SIGTERM (143 from a program that catches it), which
// read as a crash of the agent. So does one that a person ended (`ended_by`,
// the principal whose End asked for it): "Ended by you", in neutral colours,
// not the red of a failure.
import type { ExitInfo } from '../generated/protocol';

/** Signals that programs commonly turn into exit code 128 + N when they catch them and exit. */
const SIGNAL_CODES: Readonly<Record<number, string>> = { 129: 'SIGHUP', 130: 'SIGINT', 137: 'SIGKILL', 143: 'SIGTERM' };

/** This tab's principal (`owner`, a token name, `share:<id>`): an end it asked for is "yours". */
let me: string | undefined;

/** Sets this tab's principal (from `GET /api/me`). */
export function setExitViewer(principal: string | undefined): void {
  me = principal;
}

/** "you", or the principal that ended the program. */
function who(by: string): string {
  return by === me ? 'you' : by;
}

/** "The program exited with code 3", "The program was ended by SIGTERM", "Ended by you", "The program ended when the server stopped". */
export function exitSentence(e: ExitInfo): string {
  if (e.server_stopped === true) return 'The program ended when the server stopped';
  if (e.ended_by !== undefined) return `Ended by ${who(e.ended_by)}`;
  if (e.signal !== undefined) return `The program was ended by ${e.signal}`;
  // A program that caught the signal (Node agents do, and the demo agent) exits 128 + N:
  // code 143 after "End" read as a crash.
  const caught = e.code === undefined ? undefined : SIGNAL_CODES[e.code];
  if (caught !== undefined) return `The program exited with code ${String(e.code)} (it was ended by ${caught})`;
  return `The program exited with code ${e.code === undefined ? '?' : String(e.code)}`;
}

/**
 * How an end looks: `ok` (green), `error` (red, the program failed),
 * `stopped` (amber: the server's own shutdown ended it) or `ended` (neutral:
 * a person ended it). Neither of the last two is the agent's failure, and
 * neither may read as a crash.
 */
export function exitTone(e: ExitInfo): 'ok' | 'error' | 'stopped' | 'ended' {
  if (e.server_stopped === true) return 'stopped';
  if (e.ended_by !== undefined) return 'ended';
  return e.success ? 'ok' : 'error';
}

/** The chat's status line: "Exited (code 3)", "Exited (SIGTERM)", "Ended by you", "Ended (server stopped)". */
export function exitStatus(e: ExitInfo): string {
  if (e.server_stopped === true) return 'Ended (server stopped)';
  if (e.ended_by !== undefined) return `Ended by ${who(e.ended_by)}`;
  return e.signal !== undefined ? `Exited (${e.signal})` : `Exited (code ${e.code === undefined ? '?' : String(e.code)})`;
}

/**
 * What became of the program, after its name: "exited with status 3", "was
 * ended by SIGTERM", "was ended by you", "ended when the server stopped",
 * "ended". The server's push notifications say the same
 * (server/src/push/triggers.rs).
 */
export function exitClause(e: ExitInfo | undefined): string {
  if (e?.server_stopped === true) return 'ended when the server stopped';
  if (e?.ended_by !== undefined) return `was ended by ${who(e.ended_by)}`;
  if (e?.code !== undefined) return `exited with status ${String(e.code)}`;
  return e?.signal !== undefined ? `was ended by ${e.signal}` : 'ended';
}
