// The chat's data model: the transcript's items, approvals as the chat knows
// them, prompts in flight, the message being streamed, and the reducer's
// inputs. Plain immutable data; the reducer is in state.ts.
import type { AgentModes, ApprovalOption, ApprovalState, Decider, ExitInfo, JsonValue, ServerMessage } from '../generated/protocol';

/**
 * How far a tool call has come. `interrupted`: it was under way (its input
 * streaming, running, an answer on its way) when the program ended, and no
 * result came.
 */
export type ToolStatus = 'streaming' | 'running' | 'awaiting_approval' | 'sent' | 'done' | 'error' | 'denied' | 'abandoned' | 'interrupted';

/** A prompt (from the chat or typed into the terminal). */
export interface UserItem {
  readonly kind: 'user';
  readonly id: string;
  readonly text: string;
  /**
   * A slash command this tab sent: the agent acts on it in its terminal and
   * writes no event for it, so the chat shows it from the server's ack.
   * `queued`: held until the agent is ready.
   */
  readonly command?: 'sent' | 'queued';
}

/** One text block of an assistant message; `streaming` until the final message replaced it. */
export interface AssistantItem {
  readonly kind: 'assistant';
  readonly id: string;
  readonly messageId: string;
  readonly index: number;
  readonly text: string;
  readonly streaming: boolean;
}

/** One thinking block of an assistant message. */
export interface ThinkingItem {
  readonly kind: 'thinking';
  readonly id: string;
  readonly messageId: string;
  readonly index: number;
  readonly text: string;
  readonly streaming: boolean;
}

/** A tool call's result, from the `user` message's `tool_result` block. */
export interface ToolResult {
  readonly isError: boolean;
  readonly content: JsonValue | undefined;
}

/** A tool call, its approval and its result. */
export interface ToolItem {
  readonly kind: 'tool';
  readonly id: string;
  readonly toolUseId: string;
  readonly messageId: string | undefined;
  /** The block index in its assistant message, to route streamed input to it. */
  readonly index: number | undefined;
  readonly name: string;
  /** The parsed input; `{}` until the streamed JSON is complete. */
  readonly input: JsonValue;
  /** The raw JSON streamed so far (shown while it is incomplete). */
  readonly partialJson: string;
  readonly inputComplete: boolean;
  readonly requestId: string | undefined;
  readonly result: ToolResult | undefined;
  readonly status: ToolStatus;
}

/** Something the user should know that is not part of the conversation. */
export interface NoticeItem {
  readonly kind: 'notice';
  readonly id: string;
  readonly level: 'info' | 'warning' | 'error';
  readonly text: string;
  /** How many times in a row it happened (repeats collapse into one notice). */
  readonly count: number;
}

/** One entry of the transcript. */
export type ChatItem = UserItem | AssistantItem | ThinkingItem | ToolItem | NoticeItem;

/** An approval as the chat knows it: the server's word when it has spoken. */
export interface ApprovalView {
  readonly requestId: string;
  readonly toolUseId: string | undefined;
  readonly toolName: string;
  readonly input: JsonValue;
  readonly state: ApprovalState;
  readonly decidedBy: Decider | undefined;
  /** Which credential decided, when a client did (`owner`, a token's name, `share:<id>`); for a policy, the rule. */
  readonly decidedByName?: string | undefined;
  /** What the agent was told of a denial (a policy's message). */
  readonly reason?: string | undefined;
  /** The agent's choices, in its order (empty: only yes/no is known). */
  readonly options: readonly ApprovalOption[];
  /** The option id a client chose, once the server says so. */
  readonly chosen: string | undefined;
  /** The agent confirmed the outcome (a client's choice is only "sent" until then). */
  readonly confirmed: boolean;
  /** This tab sent an answer and waits for the server's word on it. */
  readonly sending: boolean;
  /** The option this tab sent (while `sending`). */
  readonly sentOption: string | undefined;
  /** Why this tab's answer could not be delivered (a failed REST call), shown on the card. */
  readonly error: string | undefined;
}

/**
 * A prompt this tab submitted that the program has not echoed yet, or one
 * the server holds for the program (`held`) or says it never took
 * (`unsent`), from any tab.
 */
export interface PendingSubmit {
  readonly id: string;
  readonly text: string;
  /**
   * `sending`: on its way; `queued`: the server holds it until the program is
   * ready; `unconfirmed`: the connection dropped before the server said so;
   * `failed`: it could not be delivered (`error` says why); `unsent`: the
   * server held it and the program ended first (this session's, or the
   * earlier one's that this session resumed), kept until discarded.
   */
  readonly state: 'sending' | 'queued' | 'unconfirmed' | 'failed' | 'unsent';
  readonly error?: string;
  /** An `unsent` prompt's number on the server (what `discard` names). */
  readonly n?: number;
  /** A held prompt's number on the server (state `queued`, shown in every tab). */
  readonly held?: number;
}

/** The assistant message being streamed. */
export interface StreamState {
  readonly messageId: string;
  /** A delta arrived (the status line says "responding" rather than "thinking"). */
  readonly sawDelta: boolean;
  /** The final `assistant` message arrived; later deltas must not touch its text. */
  readonly finalised: boolean;
  /** This message's blocks: block index → item id, so a delta finds its item without a search. */
  readonly blocks: Readonly<Record<number, string>>;
  /**
   * Text streamed into open blocks (item id → text) and not yet in the item:
   * appending here costs O(1), where a new item would cost a new transcript
   * array per token. The item takes it once per block; `liveText` reads both.
   */
  readonly live: Readonly<Record<string, string>>;
}

/** Everything the chat pane shows. */
export interface ChatState {
  /** The highest event seq applied; reconnects resume with `from=lastSeq`. */
  readonly lastSeq: number;
  readonly items: readonly ChatItem[];
  readonly approvals: Readonly<Record<string, ApprovalView>>;
  readonly stream: StreamState | null;
  /** A prompt or a tool result went to the model and nothing came back yet. */
  readonly awaitingReply: boolean;
  readonly exit: ExitInfo | null;
  readonly pending: readonly PendingSubmit[];
  /** The program's handshake (`session_start.data`). */
  readonly agent: JsonValue | null;
  /** The agent's modes, as the server last told (`hello.modes`, `modes`). */
  readonly modes: AgentModes | null;
  /** Events of a type the chat does not know (kept only as a count). */
  readonly unknownEvents: number;
  /** Bumped for every notice, to give each a unique id. */
  readonly noticeCount: number;
  /** The highest warning id shown (the server replays its warnings on every connection). */
  readonly lastWarningId: number;
}

/** Actions that start in this tab rather than on the server. */
export type LocalAction =
  | { readonly type: 'local_submit'; readonly id: string; readonly text: string }
  | { readonly type: 'local_approve'; readonly requestId: string; readonly option?: string }
  | { readonly type: 'local_notice'; readonly level: NoticeItem['level']; readonly text: string }
  /** A request this tab made over REST failed: the failure belongs to that prompt or that card. */
  | { readonly type: 'local_failure'; readonly target: 'submit' | 'approve'; readonly id: string; readonly message: string }
  /** The user let go of a prompt that was not sent. */
  | { readonly type: 'local_discard'; readonly id: string };

/** What the reducer accepts. */
export type ChatInput = ServerMessage | LocalAction;

/** The state before anything arrived. */
export const initialChatState: ChatState = {
  lastSeq: 0,
  items: [],
  approvals: {},
  stream: null,
  awaitingReply: false,
  exit: null,
  pending: [],
  agent: null,
  modes: null,
  unknownEvents: 0,
  noticeCount: 0,
  lastWarningId: 0,
};
