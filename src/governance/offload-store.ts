import { createHash } from "node:crypto";
import type { ContentBlock, Message } from "../model/message.ts";
import { withContent } from "./rewrite.ts";

/**
 * Where offloaded tool outputs go. The session stores' blob stores satisfy it; `MemoryOffloadStore` is the
 * in-process default.
 */
export interface OffloadStore {
  /** Stores `content` and returns a reference to read it back. Equal content may share one reference. */
  putText(content: string): Promise<string>;
  /** Reads back `limit` characters from `offset` (the whole text by default). Undefined when unknown. */
  getText(ref: string, range?: { offset?: number; limit?: number }): Promise<string | undefined>;
  /**
   * The reference `putText(content)` would return, without storing anything (content-addressed stores). Lets
   * governance prepare an offload's preview ahead of the checkpoint that stores it; a store without it, or a
   * reference that turns out different, only means the preview is built at the checkpoint.
   */
  refFor?(content: string): string;
}

/** The reference `MemoryOffloadStore` gives `content`. */
function memoryRef(content: string): string {
  return `blob:${createHash("sha256").update(content).digest("hex").slice(0, 32)}`;
}

/**
 * A content-addressed in-memory offload store.
 *
 * @example
 * const store = new MemoryOffloadStore();
 * const ref = await store.putText(hugeOutput);
 */
export class MemoryOffloadStore implements OffloadStore {
  readonly #texts = new Map<string, string>();

  async putText(content: string): Promise<string> {
    const ref = memoryRef(content);
    this.#texts.set(ref, content);
    return ref;
  }

  refFor(content: string): string {
    return memoryRef(content);
  }

  async getText(ref: string, range: { offset?: number; limit?: number } = {}): Promise<string | undefined> {
    const text = this.#texts.get(ref);
    if (text === undefined) return undefined;
    const offset = range.offset ?? 0;
    return text.slice(offset, range.limit === undefined ? undefined : offset + range.limit);
  }
}

/**
 * `messages` with every offloaded tool output read back from `store` (an output the store no longer has keeps
 * its preview): what the tools really returned, e.g. for a summary to be made from rather than the previews.
 *
 * @example
 * const originals = await withOffloadedOutputs(view.slice(0, 10), governor.offloadStore);
 */
export async function withOffloadedOutputs(
  messages: readonly Message[],
  store: OffloadStore,
): Promise<readonly Message[]> {
  const output: Message[] = [];
  for (const message of messages) {
    if (!message.content.some((block) => block.type === "tool-result" && block.offloadRef !== undefined)) {
      output.push(message);
      continue;
    }
    const content: ContentBlock[] = [];
    for (const block of message.content) {
      const original =
        block.type === "tool-result" && block.offloadRef !== undefined
          ? await store.getText(block.offloadRef)
          : undefined;
      content.push(
        block.type !== "tool-result" || original === undefined ? block : { ...block, content: original },
      );
    }
    output.push(withContent(message, content));
  }
  return output;
}
