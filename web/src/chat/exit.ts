// How a program ended, in words, for every place that says it: the chat's
// note and status line, the terminal's banner, the board and notifications.
// A program that duet ended because duet itself was stopping says so: its
// status is the shutdown's SIGTERM (143 from a program that catches it), which
// read as a crash of the agent.
import type { ExitInfo } from '../generated/protocol';

/** Signals that programs commonly turn into exit code 128 + N when they catch them and exit. */
const SIGNAL_CODES: Readonly<Record<number, string>> = { 129: 'SIGHUP', 130: 'SIGINT', 137: 'SIGKILL', 143: 'SIGTERM' };

/** "The program exited with code 3", "The program was ended by SIGTERM", "The program ended when the server stopped". */
export function exitSentence(e: ExitInfo): string {
  if (e.server_stopped === true) return 'The program ended when the server stopped';
  if (e.signal !== undefined) return `The program was ended by ${e.signal}`;
  // A program that caught the signal (Node agents do, and the demo agent) exits 128 + N:
  // code 143 after "End" read as a crash.
  const caught = e.code === undefined ? undefined : SIGNAL_CODES[e.code];
  if (caught !== undefined) return `The program exited with code ${String(e.code)} (it was ended by ${caught})`;
  return `The program exited with code ${e.code === undefined ? '?' : String(e.code)}`;
}

/**
 * How an end looks: `ok` (green), `error` (red, the program failed) or
 * `stopped` (amber): the server's own shutdown ended it, which is neither
 * the agent's success nor its failure, and must not read as a crash.
 */
export function exitTone(e: ExitInfo): 'ok' | 'error' | 'stopped' {
  if (e.server_stopped === true) return 'stopped';
  return e.success ? 'ok' : 'error';
}

/** The chat's status line: "Exited (code 3)", "Exited (SIGTERM)", "Ended (server stopped)". */
export function exitStatus(e: ExitInfo): string {
  if (e.server_stopped === true) return 'Ended (server stopped)';
  return e.signal !== undefined ? `Exited (${e.signal})` : `Exited (code ${e.code === undefined ? '?' : String(e.code)})`;
}

/**
 * What became of the program, after its name: "exited with status 3", "was
 * ended by SIGTERM", "ended when the server stopped", "ended". The server's
 * push notifications say the same (server/src/push/triggers.rs).
 */
export function exitClause(e: ExitInfo | undefined): string {
  if (e?.server_stopped === true) return 'ended when the server stopped';
  if (e?.code !== undefined) return `exited with status ${String(e.code)}`;
  return e?.signal !== undefined ? `was ended by ${e.signal}` : 'ended';
}
