import type { Message } from "../model/message.ts";
import { estimatorProfile } from "./estimator-profiles.ts";
import { sumMessageTokens } from "./message-costs.ts";
import type { TokenCounter } from "./token-counter.ts";
import type { ExactEncoding } from "./tokenizer-family.ts";

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

/**
 * Loads one encoding's ranks. Each literal import is its own entry point, so only the ranks asked for are
 * loaded, and only when first asked for (never at module load of the core index).
 */
function loadEncoding(encoding: ExactEncoding): Promise<Encoding> {
  return encoding === "o200k_base"
    ? import("gpt-tokenizer/encoding/o200k_base")
    : import("gpt-tokenizer/encoding/cl100k_base");
}

const loading = new Map<ExactEncoding, Promise<Encoding>>();

/** Special-token text in content (`<|endoftext|>`) is ordinary text to a chat API; count it as such. */
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Loads `encoding` (once per process; later calls share the load) and returns a synchronous exact counter.
 * `countMessage` adds OpenAI's chat framing to the exact content tokens: 4 per message (3 delimiters and the
 * role), 10 per tool call and 8 per tool result beyond their text (measured on a Codex rollout), reported
 * reasoning for encrypted reasoning, and tile-based image costs.
 *
 * @example
 * const counter = await createExactCounter("o200k_base");
 * counter.countText("Hello, world"); // 3
 */
export async function createExactCounter(encoding: ExactEncoding): Promise<TokenCounter> {
  let pending = loading.get(encoding);
  if (pending === undefined) {
    pending = loadEncoding(encoding);
    loading.set(encoding, pending);
    void pending.catch(() => loading.delete(encoding));
  }
  const tokenizer = await pending;
  const costs = estimatorProfile(encoding).costs;
  const countText = (text: string) => (text === "" ? 0 : tokenizer.countTokens(text, NO_SPECIAL_TOKENS));
  return Object.freeze({
    name: encoding,
    countText,
    countMessage: (message: Message) => sumMessageTokens(message, costs, countText),
  });
}
