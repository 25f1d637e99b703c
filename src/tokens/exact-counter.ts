import type { Message } from "../model/message.ts";
import { boundedPieces } from "./bounded-pieces.ts";
import { estimatorProfile } from "./estimator-profiles.ts";
import { sumMessageTokens } from "./message-costs.ts";
import type { TokenCounter } from "./token-counter.ts";
import type { ExactEncoding } from "./tokenizer-family.ts";
import { yieldWhenBusy } from "./yield-when-busy.ts";
import { countOnWorker, WORKER_COUNT_FROM } from "./worker-counting.ts";
import { optionalPeer } from "../errors/optional-peer.ts";

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

/**
 * Loads one encoding's ranks. Each literal import is its own entry point, so only the ranks asked for are
 * loaded, and only when first asked for (never at module load of the core index).
 */
function loadEncoding(encoding: ExactEncoding): Promise<Encoding> {
  const feature = `exact ${encoding} token counts (OpenAI models)`;
  return encoding === "o200k_base"
    ? optionalPeer("gpt-tokenizer", feature, () => import("gpt-tokenizer/encoding/o200k_base"))
    : optionalPeer("gpt-tokenizer", feature, () => import("gpt-tokenizer/encoding/cl100k_base"));
}

const loading = new Map<ExactEncoding, Promise<Encoding>>();

/** Special-token text in content (`<|endoftext|>`) is ordinary text to a chat API; count it as such. */
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Texts at least this long have their counts remembered. Not only the huge ones: a message governance derives
 * from another (its reasoning stripped, one input elided) keeps its other texts, so counting it costs lookups
 * instead of a second tokenisation (a checkpoint's reasoning strip: 2.2 ms to 0.9 ms at 10,000 messages).
 */
const REMEMBER_FROM = 1024;
/** Characters of remembered texts kept at most, the least recently used dropped first. */
const REMEMBERED_CHARACTERS = 4 * 1024 * 1024;

/**
 * Counts of long texts (`REMEMBER_FROM` characters or more), least recently used first, so a count made
 * asynchronously is reused synchronously. Shorter texts are neither kept nor looked up.
 */
class LongTextCounts {
  readonly #counts = new Map<string, number>();
  #characters = 0;

  get(text: string): number | undefined {
    if (text.length < REMEMBER_FROM) return undefined;
    const count = this.#counts.get(text);
    if (count !== undefined) {
      this.#counts.delete(text);
      this.#counts.set(text, count);
    }
    return count;
  }

  set(text: string, count: number): void {
    if (text.length < REMEMBER_FROM || text.length > REMEMBERED_CHARACTERS || this.#counts.has(text)) return;
    this.#counts.set(text, count);
    this.#characters += text.length;
    for (const [oldest] of this.#counts) {
      if (this.#characters <= REMEMBERED_CHARACTERS) break;
      this.#counts.delete(oldest);
      this.#characters -= oldest.length;
    }
  }
}

/**
 * Loads `encoding` (once per process; later calls share the load) and returns an exact counter.
 * `countMessage` adds OpenAI's chat framing to the exact content tokens: 4 per message (3 delimiters and the
 * role), 10 per tool call and 8 per tool result beyond their text (measured on a Codex rollout), reported
 * reasoning for encrypted reasoning, and tile-based image costs.
 *
 * Counting is linear in the text whatever it holds: long runs without a safe cut (one repeated character, a
 * long word without spaces) are counted in pieces of `MAX_RUN` characters, each such cut adding at most one
 * token (see `boundedPieces`); all other text counts exactly as gpt-tokenizer counts it whole.
 * `countTextAsync` and `countMessageAsync` count the same, but let the event loop run every few milliseconds, and
 * count texts of `WORKER_COUNT_FROM` characters or more on a thread of their own (`worker-counting.ts`), so other
 * requests of a server are not slowed by one huge text;
 * the counts of texts of 1,024 characters or more are remembered (up to 4 Mi characters in all, per counter), so
 * counting the same text again is a lookup. Each call makes a counter with its own memory; `counterForModel`
 * shares one per encoding.
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
  const remembered = new LongTextCounts();
  const countPiece = (piece: string) => tokenizer.countTokens(piece, NO_SPECIAL_TOKENS);

  const countText = (text: string): number => {
    if (text === "") return 0;
    const known = remembered.get(text);
    if (known !== undefined) return known;
    let count = 0;
    for (const piece of boundedPieces(text)) count += countPiece(piece);
    remembered.set(text, count);
    return count;
  };

  const countTextAsync = async (text: string): Promise<number> => {
    await yieldWhenBusy();
    const known = remembered.get(text);
    if (known !== undefined) return known;
    if (text.length >= WORKER_COUNT_FROM) {
      const counted = await countOnWorker(encoding, text);
      if (counted !== undefined) {
        remembered.set(text, counted);
        return counted;
      }
    }
    let count = 0;
    for (const piece of boundedPieces(text)) {
      count += countPiece(piece);
      await yieldWhenBusy();
    }
    remembered.set(text, count);
    return count;
  };

  const countMessageAsync = async (message: Message): Promise<number> => {
    // The texts in the order sumMessageTokens counts them; the second pass takes their counts in that order.
    const texts: string[] = [];
    sumMessageTokens(message, costs, (text) => (texts.push(text), 0));
    const counts: number[] = [];
    for (const text of texts) counts.push(await countTextAsync(text));
    let next = 0;
    return sumMessageTokens(message, costs, () => counts[next++]!);
  };

  return Object.freeze({
    name: encoding,
    countText,
    countMessage: (message: Message) => sumMessageTokens(message, costs, countText),
    countTextAsync,
    countMessageAsync,
  });
}
