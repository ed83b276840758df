// The board → notifications diff (notify/attention.ts) and the board guard.
import { describe, expect, it } from 'vitest';
import type { Approval, Board, BoardEntry, SessionInfo } from '../src/generated/protocol';
import { approvalTag, attention, sessionUrl } from '../src/notify/attention';
import { parseBoard } from '../src/net/guards';
import { duration } from '../src/ui/board';

function session(id: string, over: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id, profile: 'demo', status: 'running', created_at: 1, cols: 80, rows: 24, last_seq: 0,
    pending_approvals: 0, clients: 0, connected: [], channel: { kind: 'dual_output', events: true, submit: true, approve: true }, resumable: false, ...over,
  };
}

function approval(request_id: string, command: string): Approval {
  return { request_id, tool_name: 'run_shell_command', input: { command }, state: 'pending', options: [], confirmed: false, seq: 3 };
}

function entry(s: SessionInfo, over: Partial<BoardEntry> = {}): BoardEntry {
  return { session: s, last_activity: 1, pending: [], ...over };
}

const board = (...sessions: BoardEntry[]): Board => ({ sessions });

describe('attention', () => {
  const a = session('a', { name: 'fix build' });
  it('sets a baseline on the first board', () => {
    expect(attention(null, board(entry(a, { pending: [approval('r1', 'ls')] })), 1000, 0)).toEqual({ show: [], close: [] });
  });
  it('notifies a new approval once, with the name, the tool and its input, and closes it when decided', () => {
    const before = board(entry(a));
    const waiting = board(entry(a, { pending: [approval('r1', 'rm -rf build')] }));
    const c = attention(before, waiting, 1000, 0);
    expect(c.show).toEqual([{ tag: approvalTag('a', 'r1'), title: 'fix build: allow run_shell_command?', body: 'rm -rf build', url: sessionUrl('a', 'r1') }]);
    expect(c.show[0]?.url).toBe('./#/session/a/approval/r1');
    expect(attention(waiting, waiting, 1000, 0).show).toEqual([]);
    expect(attention(waiting, before, 1000, 0)).toEqual({ show: [], close: [approvalTag('a', 'r1')] });
  });
  it('notifies a finished turn only past the threshold', () => {
    const busy = board(entry(a, { busy_since: 10_000 }));
    const idle = board(entry(a));
    expect(attention(busy, idle, 30_000, 20_000).show).toEqual([]);
    const c = attention(busy, idle, 30_000, 75_000);
    expect(c.show.map((i) => [i.tag, i.title, i.body])).toEqual([['duet-turn-a', 'fix build: turn finished', 'The agent finished after 1 min.']]);
  });
  it('notifies an exit with its status', () => {
    const running = board(entry(session('b')));
    const failed = board(entry(session('b', { status: 'exited', exit: { code: 2, success: false } })));
    expect(attention(running, failed, 1000, 0).show.map((i) => [i.title, i.body])).toEqual([['demo stopped', 'The program exited with status 2.']]);
    const killed = board(entry(session('b', { status: 'exited', exit: { signal: 'SIGKILL', success: false } })));
    expect(attention(running, killed, 1000, 0).show[0]?.body).toBe('The program was ended by SIGKILL.');
    // duet's own shutdown ended it: its 143 is no crash (the server's push says the same).
    const stopped = board(entry(session('b', { status: 'exited', exit: { code: 143, success: false, server_stopped: true } })));
    expect(attention(running, stopped, 1000, 0).show[0]?.body).toBe('The program ended when the server stopped.');
    expect(attention(failed, failed, 1000, 0).show).toEqual([]);
  });
});

describe('parseBoard', () => {
  it('accepts a board and fills approval defaults', () => {
    const text = JSON.stringify({ sessions: [{ session: session('a'), last_activity: 5, pending: [{ request_id: 'r', tool_name: 't', input: {}, state: 'pending', seq: 1 }] }] });
    const b = parseBoard(text);
    expect(b?.sessions[0]?.pending[0]?.options).toEqual([]);
  });
  it('refuses malformed boards', () => {
    expect(parseBoard('nope')).toBeUndefined();
    expect(parseBoard('{"sessions": [{"session": {}}]}')).toBeUndefined();
    expect(parseBoard(JSON.stringify({ sessions: [{ session: session('a'), last_activity: 'x', pending: [] }] }))).toBeUndefined();
  });
});

describe('duration', () => {
  it('reads like a person would say it', () => {
    expect(duration(12_400)).toBe('12 s');
    expect(duration(3 * 60_000 + 5000)).toBe('3 min');
    expect(duration(2 * 3_600_000)).toBe('2 h');
    expect(duration(125 * 60_000)).toBe('2 h 5 min');
    expect(duration(-5)).toBe('0 s');
  });
});

describe('chatMarkdown', () => {
  it('writes the conversation with tool input, decision and result, and fences that cannot break', async () => {
    const { chatMarkdown } = await import('../src/chat/export');
    const { initialChatState } = await import('../src/chat/state');
    const state = {
      ...initialChatState,
      items: [
        { kind: 'user' as const, id: 'u', text: 'run ls' },
        { kind: 'thinking' as const, id: 't', messageId: 'm', index: 0, text: 'secret', streaming: false },
        { kind: 'assistant' as const, id: 'a', messageId: 'm', index: 1, text: 'Sure.', streaming: false },
        { kind: 'tool' as const, id: 'x', toolUseId: 'tu', messageId: 'm', index: 2, name: 'run_shell_command', input: { command: 'ls ```' }, partialJson: '', inputComplete: true, requestId: 'r', result: { isError: false, content: 'a.txt' }, status: 'done' as const },
      ],
      approvals: { r: { requestId: 'r', toolUseId: 'tu', toolName: 'run_shell_command', input: {}, state: 'allowed' as const, decidedBy: 'client' as const, options: [], chosen: undefined, confirmed: true, sending: false } },
    };
    const md = chatMarkdown(state as unknown as Parameters<typeof chatMarkdown>[0], 'nightly');
    expect(md).toBe('# nightly\n\n## You\n\nrun ls\n\n## Agent\n\nSure.\n\n**Tool: run_shell_command**\n\n````sh\nls ```\n````\n\n*allowed in the browser*\n\nResult:\n\n```\na.txt\n```\n');
  });
});
