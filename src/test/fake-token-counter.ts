import { toolResultText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";

/**
 * A deterministic token counter for tests: one token per `charsPerToken` characters (rounded up) of every
 * block's text (an opaque block's JSON), 1,000 tokens per image or file, plus `overhead` per message. Counts how
 * often it ran.
 *
 * @example
 * const counter = new FakeTokenCounter();
 * counter.countText("abcdefgh"); // 2
 */
export class FakeTokenCounter implements TokenCounter {
  readonly name: string;
  readonly charsPerToken: number;
  readonly overhead: number;
  /** How many messages and texts were counted. */
  calls = 0;

  constructor(options: { charsPerToken?: number; overhead?: number; name?: string } = {}) {
    this.charsPerToken = options.charsPerToken ?? 4;
    this.overhead = options.overhead ?? 4;
    this.name = options.name ?? `fake:${this.charsPerToken}`;
  }

  countText(text: string): number {
    this.calls++;
    return Math.ceil(text.length / this.charsPerToken);
  }

  countMessage(message: Message): number {
    this.calls++;
    let characters = 0;
    for (const block of message.content) {
      if (block.type === "text" || block.type === "reasoning") characters += block.text.length;
      else if (block.type === "tool-call")
        characters += block.name.length + JSON.stringify(block.input).length;
      else if (block.type === "tool-result")
        characters += toolResultText(block.content).length + block.toolName.length;
      else if (block.type === "opaque") characters += JSON.stringify(block.data).length;
      else characters += 4 * 1_000;
    }
    return Math.ceil(characters / this.charsPerToken) + this.overhead;
  }
}
