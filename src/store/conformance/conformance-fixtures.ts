import type { ContentBlock, MessageInput, Usage } from "../../model/message.ts";
import type { SessionStore, SessionStoreOptions } from "../session-store.ts";

/** A backend under test. */
export interface ConformanceBackend {
  readonly name: string;
  /** A fresh, empty store. */
  readonly open: (options: SessionStoreOptions) => Promise<SessionStore>;
  /** A second store on the same database as `store` (another process or server), when the backend has one. */
  readonly openSecond?: (store: SessionStore, options: SessionStoreOptions) => Promise<SessionStore>;
  /** Closes `store` and opens its database again (durability), when the backend persists. */
  readonly reopen?: (store: SessionStore, options: SessionStoreOptions) => Promise<SessionStore>;
}

/** What each conformance test sees. */
export interface ConformanceContext {
  readonly backend: ConformanceBackend;
  /** The test's store (fresh per test). */
  store(): SessionStore;
  /** Options every store of the test is opened with (deterministic clock and ids, a test price table). */
  options(): SessionStoreOptions;
  /** Moves the test clock forward. */
  advance(milliseconds: number): void;
  /** The test clock's time. */
  now(): string;
  /** Registers a store to close after the test; returns it. */
  track(store: SessionStore): SessionStore;
  /** Replaces the test's store (after `reopen`). */
  replaceStore(store: SessionStore): void;
}

/** The price table the suite uses. */
export const TEST_PRICES = { "test-model": { input: 2, output: 10, cacheRead: 0.5, cacheWrite: 2.5 } };

/** A user instruction. */
export function user(text: string): MessageInput {
  return { role: "user", content: [{ type: "text", text }] };
}

/** An assistant reply with text. */
export function reply(text: string, usage?: Usage): MessageInput {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    ...(usage && { usage, model: "test-model" }),
  };
}

let callNumber = 0;

/** An assistant tool call and the tool's result. */
export function toolStep(name: string, output: string): MessageInput[] {
  const id = `call_${++callNumber}`;
  const call: ContentBlock = { type: "tool-call", id, name, input: { path: `src/${name}.ts` } };
  return [
    { role: "assistant", content: [call] },
    { role: "tool", content: [{ type: "tool-result", callId: id, toolName: name, content: output }] },
  ];
}

/** A whole turn: instruction, a tool step, final reply. */
export function fullTurn(number: number): MessageInput[] {
  return [user(`instruction ${number}`), ...toolStep("read", `output ${number}`), reply(`answer ${number}`)];
}

/** Texts of messages' first text block (or their role), to compare views compactly. */
export function texts(messages: readonly { role: string; content: readonly ContentBlock[] }[]): string[] {
  return messages.map((message) => {
    const block = message.content[0];
    if (block?.type === "text") return block.text;
    if (block?.type === "tool-call") return `call:${block.name}`;
    if (block?.type === "tool-result")
      return `result:${typeof block.content === "string" ? block.content : JSON.stringify(block.content)}`;
    return message.role;
  });
}
