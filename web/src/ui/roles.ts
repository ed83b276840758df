// What each role may do, as the server enforces it (server/src/auth.rs):
// owner everything; driver keys, prompts, cancel and resize; approver tool
// approvals; viewer reads only. The UI hides what the role cannot do.
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
