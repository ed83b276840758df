// The agent's modes and models: which it offers, which is current, and
// pickers in the chat's status line that ask the server to switch
// (`POST /api/sessions/{id}/mode`, `…/model`). Modes come from the server,
// the same for every kind of agent (`hello.modes`, then `modes` messages:
// ACP's modes, or what duet reads from a terminal agent's screen or hooks);
// models from the ACP handshake (`session_start.data.models`) and the
// agent's `acp_current_model_update` news. Every tab shows the same.
import type { AgentMode, AgentModes, JsonValue } from '../generated/protocol';
import { isObject } from './json';
import { h } from '../ui/dom';

export type { AgentMode, AgentModes };

/** What a picker offers: the server's modes, or the handshake's models. */
export interface Choices {
  readonly current?: string | undefined;
  readonly available: readonly AgentMode[];
}

/** The models in a handshake (`session_start.data.models`), if the agent offered a choice. */
export function agentModels(agent: JsonValue | null): Choices | undefined {
  return offered(isObject(agent) ? agent.models : undefined, 'availableModels', 'modelId', 'currentModelId', 2);
}

/** The choices in `list` (`{[idKey], name}` each) and the current one, if there are at least `least`. */
function offered(set: JsonValue | undefined, list: string, idKey: string, currentKey: string, least: number): Choices | undefined {
  if (set === undefined || !isObject(set)) return undefined;
  const items = set[list];
  const available: AgentMode[] = [];
  for (const m of Array.isArray(items) ? items : []) {
    const id = isObject(m) ? m[idKey] : undefined;
    if (isObject(m) && typeof id === 'string') available.push({ id, name: typeof m.name === 'string' ? m.name : id });
  }
  if (available.length < least) return undefined;
  const current = set[currentKey];
  return { current: typeof current === 'string' ? current : undefined, available };
}

/** The handshake with the current model changed to `model`. */
export function withCurrentModel(agent: JsonValue | null, model: string): JsonValue | null {
  if (!isObject(agent) || !isObject(agent.models)) return agent;
  return { ...agent, models: { ...agent.models, currentModelId: model } };
}

/** A `<select>` of the agent's modes (or models); hidden when it has none or the role cannot drive. */
export class ModePicker {
  readonly root: HTMLElement;
  private readonly select: HTMLSelectElement;
  private readonly error: HTMLElement;
  private shown = '';
  /** The mode the agent last said it is in. */
  private current: string | undefined;

  constructor(private readonly onChoose: (mode: string) => Promise<void>, private readonly what: 'Mode' | 'Model' = 'Mode') {
    this.select = h('select', { class: 'mode-select', 'aria-label': `Agent ${what.toLowerCase()}`, onchange: () => { void this.choose(); } });
    this.error = h('span', { class: 'mode-error', role: 'alert', hidden: true });
    this.root = h('label', { class: 'mode-picker', hidden: true }, h('span', { class: 'mode-label' }, what), this.select, this.error);
  }

  update(modes: Choices | undefined, canDrive: boolean): void {
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
      this.error.textContent = `${this.what} not changed: ${e instanceof Error ? e.message : String(e)}`;
      this.error.hidden = false;
      // Back to what the agent last said.
      if (this.current !== undefined) this.select.value = this.current;
    } finally {
      this.select.disabled = false;
    }
  }
}
