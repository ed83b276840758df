// The agent's modes (ACP `session/new` → `modes`): which it offers, which is
// current, and a picker in the chat's status line that asks the server to
// switch (`POST /api/sessions/{id}/mode`). The current mode follows the
// agent's own news (`acp_current_mode_update`), so every tab shows the same.
import type { JsonValue } from '../generated/protocol';
import { isObject } from './json';
import { h } from '../ui/dom';

export interface AgentMode {
  readonly id: string;
  readonly name: string;
}

export interface AgentModes {
  readonly current: string | undefined;
  readonly available: readonly AgentMode[];
}

/** The modes in a handshake (`session_start.data`), if the agent offered any. */
export function agentModes(agent: JsonValue | null): AgentModes | undefined {
  if (!isObject(agent) || !isObject(agent.modes)) return undefined;
  const list = Array.isArray(agent.modes.availableModes) ? agent.modes.availableModes : [];
  const available: AgentMode[] = [];
  for (const m of list) {
    if (isObject(m) && typeof m.id === 'string') available.push({ id: m.id, name: typeof m.name === 'string' ? m.name : m.id });
  }
  if (available.length === 0) return undefined;
  const current = typeof agent.modes.currentModeId === 'string' ? agent.modes.currentModeId : undefined;
  return { current, available };
}

/** The handshake with the current mode changed to `mode` (the agent's news of a switch). */
export function withCurrentMode(agent: JsonValue | null, mode: string): JsonValue | null {
  if (!isObject(agent) || !isObject(agent.modes)) return agent;
  return { ...agent, modes: { ...agent.modes, currentModeId: mode } };
}

/** A `<select>` of the agent's modes; hidden when it has none or the role cannot drive. */
export class ModePicker {
  readonly root: HTMLElement;
  private readonly select: HTMLSelectElement;
  private readonly error: HTMLElement;
  private shown = '';
  /** The mode the agent last said it is in. */
  private current: string | undefined;

  constructor(private readonly onChoose: (mode: string) => Promise<void>) {
    this.select = h('select', { class: 'mode-select', 'aria-label': 'Agent mode', onchange: () => { void this.choose(); } });
    this.error = h('span', { class: 'mode-error', role: 'alert', hidden: true });
    this.root = h('label', { class: 'mode-picker', hidden: true }, h('span', { class: 'mode-label' }, 'Mode'), this.select, this.error);
  }

  update(modes: AgentModes | undefined, canDrive: boolean): void {
    this.root.hidden = modes === undefined || !canDrive;
    if (!modes) return;
    const key = JSON.stringify(modes);
    if (key === this.shown) return;
    this.shown = key;
    this.current = modes.current;
    this.select.replaceChildren(...modes.available.map((m) => h('option', { value: m.id }, m.name)));
    if (modes.current !== undefined) this.select.value = modes.current;
  }

  private async choose(): Promise<void> {
    this.error.hidden = true;
    this.select.disabled = true;
    try {
      await this.onChoose(this.select.value);
    } catch (e) {
      this.error.textContent = `Mode not changed: ${e instanceof Error ? e.message : String(e)}`;
      this.error.hidden = false;
      // Back to what the agent last said.
      if (this.current !== undefined) this.select.value = this.current;
    } finally {
      this.select.disabled = false;
    }
  }
}
