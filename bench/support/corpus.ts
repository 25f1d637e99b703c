// The real transcripts the benchmarks replay, read from ../shared/data/transcripts (never copied into the repo).
import { importTranscriptFile, type ImportedConversation } from "../../src/formats/transcripts/index.ts";
import type { Message } from "../../src/model/message.ts";
import { replayableMessages, requestPoints } from "../../src/replay/replay.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";
import { transcriptFiles, transcriptName } from "../../test/support/transcripts.ts";

/** One main (not subagent) conversation of the corpus with its size. */
export interface CorpusConversation {
  /** Path relative to the corpus root. */
  readonly name: string;
  readonly conversation: ImportedConversation;
  /** The messages an agent really exchanged (see `replayableMessages`). */
  readonly messages: readonly Message[];
  /** Model requests a replay makes (one per assistant reply). */
  readonly requests: number;
  /** Tokens of all replayable messages under the bench counter. */
  readonly tokens: number;
}

/** Every main conversation of every transcript file, in file order (subagent sidechains left out). */
export async function loadCorpus(counter: TokenCounter): Promise<CorpusConversation[]> {
  const corpus: CorpusConversation[] = [];
  for (const file of transcriptFiles) {
    for (const conversation of await importTranscriptFile(file)) {
      if (conversation.sidechain === true) continue;
      const messages = replayableMessages(conversation.messages);
      let tokens = 0;
      for (const message of messages) tokens += counter.countMessage(message);
      corpus.push({
        name: transcriptName(file),
        conversation,
        messages,
        requests: requestPoints(messages).length,
        tokens,
      });
    }
  }
  return corpus;
}

/**
 * The window the recorded agent really had: Claude Code 200k, Codex its GPT-5 input window (272k), Gemini CLI
 * 1M, the OpenAI-chat (tau-bench) and SWE-agent recordings 128k (GPT-4o).
 */
export function recordedWindow(name: string): number {
  const agent = agentOf(name);
  if (agent === "Claude Code") return 200_000;
  if (agent === "Codex") return 272_000;
  if (agent === "Gemini CLI") return 1_048_576;
  return 128_000;
}

/** The agent family of a corpus file, from its folder (for tables). */
export function agentOf(name: string): string {
  if (name.startsWith("tau-bench/")) return "tau-bench";
  if (name.startsWith("swe-agent/")) return "SWE-agent";
  if (name.includes("/codex/")) return "Codex";
  if (name.includes("/gemini-cli/")) return "Gemini CLI";
  return "Claude Code";
}

/**
 * A history of exactly `size` messages made by repeating `pool` (fresh ids and seq, so every copy is a distinct
 * message of one session). `start` offsets into the endless repetition, so consecutive calls continue it.
 */
export function repeatedHistory(pool: readonly Message[], size: number, start = 0): Message[] {
  const history: Message[] = [];
  for (let index = start; index < start + size; index++) history.push(copyAt(pool, index));
  return history;
}

/** The message at `index` of the endless repetition of `pool` (a fresh object each call). */
export function copyAt(pool: readonly Message[], index: number): Message {
  const original = pool[index % pool.length]!;
  const round = Math.floor(index / pool.length);
  return {
    ...original,
    id: `r${round}-${original.id}`,
    sessionId: "bench",
    seq: index,
    turn: round * 100_000 + original.turn,
  };
}

let shared: Promise<CorpusConversation[]> | undefined;

/** `loadCorpus` once per process (the bench runner imports every section into one process). */
export function sharedCorpus(counter: TokenCounter): Promise<CorpusConversation[]> {
  shared ??= loadCorpus(counter);
  return shared;
}
