// @vitest-environment jsdom
// How the UI names things a person must tell apart: devices, clients,
// sessions, how a program ended, where a resumed conversation went, and
// how much a larger terminal is shrunk to fit.
import { describe, expect, it } from 'vitest';
import type { ConnectedClient, SessionInfo } from '../src/generated/protocol';
import { exitClause, exitSentence, exitStatus, exitTone, setExitViewer } from '../src/chat/exit';
import { initialChatState, reduce } from '../src/chat/state';
import { fitScale } from '../src/terminal/scale';
import { guessDevice } from '../src/ui/device';
import { sessionLabel } from '../src/ui/rename';
import { latestResumption } from '../src/ui/resume';
import { clientLabel } from '../src/ui/share';

describe('device names', () => {
  it('say the browser and the system', () => {
    expect(guessDevice('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36')).toBe('Chrome on Android');
    expect(guessDevice('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1')).toBe('Safari on iPhone');
    expect(guessDevice('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Linux');
    expect(guessDevice('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0')).toBe('Edge on Windows');
    expect(guessDevice('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(guessDevice('curl/8')).toBe('Browser');
  });

  it('name a client by its device; principal and role only when they are not the owner', () => {
    const c = (x: Partial<ConnectedClient>): ConnectedClient => ({ client_id: 1, name: 'owner', role: 'owner', ...x });
    expect(clientLabel(c({ device: 'Chrome on Android' }), false)).toBe('Chrome on Android');
    expect(clientLabel(c({ device: 'Chrome on Linux' }), true)).toBe('Chrome on Linux (you)');
    expect(clientLabel(c({}), false)).toBe('owner');
    expect(clientLabel(c({ name: 'share:ab12', role: 'viewer', device: 'Firefox on Linux' }), false)).toBe('Firefox on Linux · share:ab12 (viewer)');
  });
});

describe('session names', () => {
  const s = (x: Partial<SessionInfo>): SessionInfo => ({ id: 'a', profile: 'demo', status: 'running', created_at: 0, cols: 80, rows: 24, last_seq: 0, pending_approvals: 0, clients: 0, connected: [], channel: { kind: 'dual_output', events: true, submit: true, approve: true }, resumable: false, ...x });
  it("prefer the owner's name, then the first prompt, then the title, then the profile", () => {
    expect(sessionLabel(s({ name: 'mine', prompt_name: 'fix it', title: 'Qwen' }))).toBe('mine');
    expect(sessionLabel(s({ prompt_name: 'fix it', title: 'Qwen' }))).toBe('fix it');
    expect(sessionLabel(s({ title: 'Qwen' }))).toBe('Qwen');
    expect(sessionLabel(s({}))).toBe('demo');
  });

  it('lead from a resumed session to the newest of its chain', () => {
    const all: Record<string, { resumed_by?: string }> = { a: { resumed_by: 'b' }, b: { resumed_by: 'c' }, c: {}, x: {} };
    const find = (id: string): { resumed_by?: string } | undefined => all[id];
    expect(latestResumption('a', find)).toBe('c');
    expect(latestResumption('c', find)).toBeUndefined();
    // A cycle in bad data ends.
    const loop: Record<string, { resumed_by?: string }> = { a: { resumed_by: 'b' }, b: { resumed_by: 'a' } };
    expect(latestResumption('a', (id) => loop[id])).toBe('b');
  });
});

describe('how a program ended', () => {
  it('is neutral when someone ended it, and says who', () => {
    setExitViewer('owner');
    const mine = { code: 143, success: false, ended_by: 'owner' };
    expect(exitSentence(mine)).toBe('Ended by you');
    expect(exitStatus(mine)).toBe('Ended by you');
    expect(exitTone(mine)).toBe('ended');
    expect(exitClause(mine)).toBe('was ended by you');
    const theirs = { code: 143, success: false, ended_by: 'ci' };
    expect(exitSentence(theirs)).toBe('Ended by ci');
    expect(exitTone(theirs)).toBe('ended');
    // A failure is still one.
    expect(exitTone({ code: 3, success: false })).toBe('error');
    expect(exitSentence({ code: 3, success: false })).toBe('The program exited with code 3');
    // The chat keeps who ended it (the reducer copied the other fields only).
    expect(reduce(initialChatState, { type: 'exit', code: 143, success: false, ended_by: 'owner' }).exit?.ended_by).toBe('owner');
    // The server's stop wins over a name (it is neither).
    expect(exitTone({ code: 143, success: false, server_stopped: true, ended_by: 'owner' })).toBe('stopped');
    setExitViewer(undefined);
  });
});

describe('scaling a larger terminal to its pane', () => {
  it('shrinks by the tighter side and never enlarges', () => {
    expect(fitScale({ width: 2000, height: 500 }, { width: 1000, height: 1000 })).toBe(0.5);
    expect(fitScale({ width: 500, height: 2000 }, { width: 1000, height: 1000 })).toBe(0.5);
    expect(fitScale({ width: 100, height: 100 }, { width: 1000, height: 1000 })).toBe(1);
    expect(fitScale({ width: 0, height: 0 }, { width: 1000, height: 1000 })).toBe(1);
  });
});
