// How a LangGraph.js graph with a `messages` channel (a ReAct agent: a model node and a tools node) writes a turn
// through its checkpointer: one super-step per step of the turn — the user's input, each model reply, the tool
// results of one tools node together — and for each, the step's writes (`putWrites`, against the checkpoint the
// step ran from) and a new checkpoint (`put`) holding the thread's whole message list. Loading a thread is
// `getTuple` of its latest checkpoint.
import { randomUUID } from "node:crypto";
import type { MessageInput } from "../../src/model/message.ts";

/** The slice of a LangGraph.js checkpointer the bench uses. */
export interface Checkpointer {
  put(config: unknown, checkpoint: unknown, metadata: unknown, versions: unknown): Promise<unknown>;
  putWrites(config: unknown, writes: [string, unknown][], taskId: string): Promise<void>;
  getTuple(
    config: unknown,
  ): Promise<{ checkpoint: { channel_values: { messages?: unknown[] } } } | undefined>;
}

/** A turn's super-steps: the user's input, each model reply, and each run of tool results. */
function steps(turn: readonly MessageInput[]): MessageInput[][] {
  const grouped: MessageInput[][] = [];
  for (const message of turn) {
    const last = grouped.at(-1);
    if (last && message.role === "tool" && last[0]!.role === "tool") last.push(message);
    else if (
      last &&
      message.role === "user" &&
      last.every((entry) => entry.role !== "assistant" && entry.role !== "tool")
    )
      last.push(message);
    else grouped.push([message]);
  }
  return grouped;
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
      let thread = threads.get(session) ?? { messages: [], config: configOf(session), step: -1 };
      for (const written of steps(turn)) {
        if (thread.step >= 0) await saver.putWrites(thread.config, [["messages", written]], randomUUID());
        const messages = [...thread.messages, ...written];
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
        thread = { messages, config, step };
      }
      threads.set(session, thread);
    },
    load: async (session) =>
      (await saver.getTuple(configOf(session)))?.checkpoint.channel_values.messages?.length ?? 0,
  };
}
