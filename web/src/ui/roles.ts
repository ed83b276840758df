// What each role may do, as the server enforces it (server/src/auth.rs):
// owner everything; driver keys, prompts, cancel and resize; approver tool
// approvals; viewer reads only. The UI hides what the role cannot do.
// Headless agents (no PTY) take no keystrokes whatever the role.
import type { Role } from '../generated/protocol';

/** Keystrokes, prompts, cancel and resize. */
export function canDrive(role: Role | undefined): boolean {
  return role === undefined || role === 'owner' || role === 'driver';
}

/** Approve or deny tool calls. */
export function canApprove(role: Role | undefined): boolean {
  return role === undefined || role === 'owner' || role === 'approver';
}

/** Create, end, resume and share sessions. */
export function canManage(role: Role | undefined): boolean {
  return role === undefined || role === 'owner';
}

/** Side channels whose agent runs on pipes, with no PTY to type into (docs/agents.md). */
const HEADLESS_CHANNELS: ReadonlySet<string> = new Set(['stream_json', 'stream_json_per_turn', 'acp']);

/** Whether a session of this channel kind has no terminal to type into: its pane shows stderr and a line per prompt, tool and turn. */
export function isHeadless(kind: string | undefined): boolean {
  return kind !== undefined && HEADLESS_CHANNELS.has(kind);
}
