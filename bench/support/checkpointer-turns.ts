// How a LangGraph.js graph with a `messages` channel writes a thread through its checkpointer: each turn one
// checkpoint (`put`) holding the thread's whole message list (the fewest a graph writes: it checkpoints every
// super-step, about one per message of a turn). Loading a thread is `getTuple` of its latest checkpoint.
import type { MessageInput } from "../../src/model/message.ts";

/** The slice of a LangGraph.js checkpointer the bench uses. */
export interface Checkpointer {
  put(config: unknown, checkpoint: unknown, metadata: unknown, versions: unknown): Promise<unknown>;
  getTuple(
    config: unknown,
  ): Promise<{ checkpoint: { channel_values: { messages?: unknown[] } } } | undefined>;
}

/** Appends turns to threads and loads them through `saver`. */
export function checkpointerTurns(
  saver: Checkpointer,
  uuid6: (clock: number) => string,
): {
  append(session: string, turn: readonly MessageInput[]): Promise<void>;
  load(session: string): Promise<number>;
} {
  const threads = new Map<string, { messages: MessageInput[]; config: unknown; step: number }>();
  const configOf = (session: string) => ({ configurable: { thread_id: session, checkpoint_ns: "" } });
  return {
    append: async (session, turn) => {
      const thread = threads.get(session) ?? { messages: [], config: configOf(session), step: -1 };
      const messages = [...thread.messages, ...turn];
      const step = thread.step + 1;
      const checkpoint = {
        v: 4,
        id: uuid6(-1),
        ts: new Date().toISOString(),
        channel_values: { messages },
        channel_versions: { messages: step + 1 },
        versions_seen: {},
      };
      const config = await saver.put(
        thread.config,
        checkpoint,
        { source: "loop", step, parents: {} },
        { messages: step + 1 },
      );
      threads.set(session, { messages, config, step });
    },
    load: async (session) =>
      (await saver.getTuple(configOf(session)))?.checkpoint.channel_values.messages?.length ?? 0,
  };
}
