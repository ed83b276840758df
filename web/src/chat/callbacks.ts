// What the chat view and its entries are given: the owner's callbacks for
// user intents and the context beside the chat state.
import type { BudgetStatus, ChannelInfo, Role, UsageTotals } from '../generated/protocol';
import type { HistorySegment } from './history';


/** An answer to a tool approval: one of the agent's options, or plain yes/no when it offered none. */
export type ApprovalChoice = { readonly option: string } | { readonly allowed: boolean };

/** What the chat asks its owner to do. */
export interface ChatCallbacks {
  /** Send a prompt; false when it could not be sent (the text stays in the box). */
  onSubmit(text: string): boolean;
  onApprove(requestId: string, choice: ApprovalChoice): void;
  /** Interrupt the program (Escape into the terminal). */
  onCancel(): void;
  /** Show the terminal and give it the keyboard (a slash command's output is there). */
  onShowTerminal(): void;
  /** Resume the ended conversation in a new session; rejects with the reason. */
  onResume(): Promise<void>;
  /** Forget a prompt that was not sent. */
  onDiscard(pendingId: string): void;
  /** Switch the agent to one of its modes; rejects with the reason. */
  onSetMode(mode: string): Promise<void>;
  /** Switch the agent to one of its models; rejects with the reason. */
  onSetModel(model: string): Promise<void>;
  /** Where the unsent text is kept (sessionStorage), so a reload does not lose it; none: not kept. */
  readonly draftKey?: string;
}

/** Extra facts the view needs besides the chat state. */
export interface ChatContext {
  /** The session's side channel; undefined until the server said. */
  readonly channel: ChannelInfo | undefined;
  /** The socket is open (the composer still works through REST when it is not). */
  readonly connected: boolean;
  /** The session ended and the agent can pick its conversation up again. */
  readonly resumable: boolean;
  /** The ended session this one resumed, if it is a resumption. */
  readonly resumedFrom?: string | undefined;
  /** The earlier conversation (the chain of sessions this one resumed), shown above its own. */
  readonly history?: readonly HistorySegment[] | undefined;
  /** This client's role (undefined until the hello: assume all). */
  readonly role?: Role | undefined;
  /** The newest session that resumed this one: the conversation goes on there. */
  readonly resumedBy?: string | undefined;
  /** The connection was up and dropped: the state shown may be old. */
  readonly reconnecting?: boolean | undefined;
  /** The chat of a replay: read-only, at a moment of the recording. */
  readonly replay?: boolean | undefined;
  /** What the agent spent so far (the board's word). */
  readonly usage?: UsageTotals | undefined;
  /** The session's budget, when it has one. */
  readonly budget?: BudgetStatus | undefined;
}
