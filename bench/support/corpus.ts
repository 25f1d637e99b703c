// The real transcripts the benchmarks replay, read from ../shared/data/transcripts (never copied into the repo).
import { importTranscriptFile, type ImportedConversation } from "../../src/formats/transcripts/index.ts";
import type { Message } from "../../src/model/message.ts";
import { replayableMessages, requestPoints } from "../../src/replay/replay.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";
import { transcriptFiles, transcriptName, transcriptPath } from "../../test/support/transcripts.ts";

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
  for (const file of transcriptFiles) corpus.push(...(await conversationsOf(counter, file)));
  return corpus;
}

/** The main conversations of one transcript file, by its name relative to the corpus root. */
export function loadCorpusFile(counter: TokenCounter, name: string): Promise<CorpusConversation[]> {
  return conversationsOf(counter, transcriptPath(name));
}

async function conversationsOf(counter: TokenCounter, file: string): Promise<CorpusConversation[]> {
  const found: CorpusConversation[] = [];
  for (const conversation of await importTranscriptFile(file)) {
    if (conversation.sidechain === true) continue;
    const messages = replayableMessages(conversation.messages);
    let tokens = 0;
    for (const message of messages) tokens += counter.countMessage(message);
    found.push({
      name: transcriptName(file),
      conversation,
      messages,
      requests: requestPoints(messages).length,
      tokens,
    });
  }
  return found;
}

/** A conversation's position among its file's main conversations (what `loadCorpusFile` returns). */
export function conversationIndex(corpus: readonly CorpusConversation[], entry: CorpusConversation): number {
  return corpus.filter((other) => other.name === entry.name).indexOf(entry);
}

/** Claude Code's standard window; sessions whose requests outgrew it ran with the 1M-token one. */
const CLAUDE_CODE_WINDOW = 200_000;
const LONG_CONTEXT_WINDOW = 1_048_576;

/**
 * The window the recorded agent really had: Codex the `model_context_window` its rollout reports (else its GPT-5
 * input window, 272k), Claude Code 200k — or 1M where a recorded request or compaction outgrew 200k —, Gemini CLI
 * 1M, the OpenAI-chat (tau-bench) and SWE-agent recordings 128k (GPT-4o).
 */
export function recordedWindow(entry: Pick<CorpusConversation, "conversation">): number {
  const { conversation } = entry;
  switch (conversation.format) {
    case "codex": {
      const reported = conversation.metadata?.["contextWindow"];
      return typeof reported === "number" ? reported : 272_000;
    }
    case "claude-code": {
      const largest = Math.max(
        0,
        ...conversation.messages.map((message) => {
          const preTokens = message.metadata?.["preTokens"];
          return Math.max(message.usage?.input ?? 0, typeof preTokens === "number" ? preTokens : 0);
        }),
      );
      return largest > CLAUDE_CODE_WINDOW ? LONG_CONTEXT_WINDOW : CLAUDE_CODE_WINDOW;
    }
    case "gemini-cli":
      return LONG_CONTEXT_WINDOW;
    default:
      return 128_000;
  }
}

/** The agent family of a corpus conversation, from its detected format (for tables). */
export function agentOf(entry: Pick<CorpusConversation, "name" | "conversation">): string {
  switch (entry.conversation.format) {
    case "claude-code":
      return "Claude Code";
    case "codex":
      return "Codex";
    case "gemini-cli":
      return "Gemini CLI";
    case "swe-agent":
      return "SWE-agent";
    default:
      return entry.name.startsWith("tau-bench/") ? "tau-bench" : "OpenAI chat";
  }
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
