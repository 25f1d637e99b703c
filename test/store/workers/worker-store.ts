// Shared by the child processes of the crash and concurrency tests: which store to open, and turns that
// carry enough metadata to check afterwards that each one is complete.
import type { MessageInput } from "../../../src/model/message.ts";
import type { SessionStore } from "../../../src/store/index.ts";

/** Where a worker's store is. */
export type StoreSpec =
  | { readonly backend: "sqlite"; readonly path: string; readonly writer?: "worker" | "inline" }
  | { readonly backend: "postgres"; readonly url: string; readonly schema: string };

/** Opens the store a spec names (no retention cleanup); loads only that backend (workers start by the dozen). */
export async function openStore(spec: StoreSpec): Promise<SessionStore> {
  if (spec.backend === "sqlite") {
    const { openSqliteSessionStore } = await import("../../../src/store/sqlite/index.ts");
    return openSqliteSessionStore({
      path: spec.path,
      retentionDays: 0,
      ...(spec.writer !== undefined && { writer: spec.writer }),
    });
  }
  const { openPostgresSessionStore } = await import("../../../src/store/postgres/index.ts");
  return openPostgresSessionStore({
    connectionString: spec.url,
    schema: spec.schema,
    retentionDays: 0,
    poolSize: 2,
  });
}

/**
 * A turn whose every message carries `{ tag, parts }`: `parts` messages in all, so a reader can tell a whole
 * turn from a partial one. `size` scales the tool outputs (bigger turns make longer transactions).
 */
export function taggedTurn(tag: string, steps: number, size: number): MessageInput[] {
  const parts = 2 + steps * 2;
  const metadata = { tag, parts };
  const messages: MessageInput[] = [
    { role: "user", content: [{ type: "text", text: `do ${tag}` }], metadata },
  ];
  for (let step = 0; step < steps; step++) {
    const id = `${tag}-call-${step}`;
    messages.push({
      role: "assistant",
      content: [{ type: "tool-call", id, name: "read", input: { step } }],
      metadata,
    });
    messages.push({
      role: "tool",
      content: [{ type: "tool-result", callId: id, toolName: "read", content: `${tag} `.repeat(size) }],
      metadata,
    });
  }
  messages.push({ role: "assistant", content: [{ type: "text", text: `done ${tag}` }], metadata });
  return messages;
}

/** Writes one line to stdout and resolves once it is flushed to the pipe. */
export function say(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}
