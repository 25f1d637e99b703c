import {
  readTranscriptFile,
  transcriptFileConversations,
} from "../../formats/transcripts/import-transcript.ts";
import type { TranscriptFormat } from "../../formats/transcripts/imported-conversation.ts";
import { DEFAULT_PRICES, type PriceTable } from "../../pricing/model-prices.ts";
import type { SessionStore } from "../session-store.ts";
import { conversationDump } from "./conversation-dump.ts";
import {
  parseSessionsJsonl,
  restoreDumps,
  type ImportResult,
  type ImportSessionsOptions,
} from "./import-sessions-jsonl.ts";

/** Options of `importTranscriptSessions`. */
export interface ImportTranscriptSessionsOptions extends Pick<
  ImportSessionsOptions,
  "onExisting" | "onProgress"
> {
  /** The transcript format, or `auto` (default) to detect it. */
  readonly format?: TranscriptFormat | "auto";
  /**
   * A JSONL transcript's last line cut off mid-record (still being written): `error` (default) raises
   * `PartialLastLineError`; `drop` imports up to the last whole line.
   */
  readonly partialLastLine?: "error" | "drop";
  /** Time stamped as the sessions' `updatedAt` (default: now), so retention counts from the import. */
  readonly now?: string;
  /** Prices for the cost totals (default: `DEFAULT_PRICES`). */
  readonly prices?: PriceTable;
}

/**
 * Imports a transcript file in any supported format (Claude Code, Codex, Gemini CLI, OpenAI chat, SWE-agent,
 * ctxkit JSONL) into a store, one session per conversation, all or nothing: everything is read and validated
 * first, then every session is written in one transaction. A ctxkit JSONL export is restored as
 * `importSessionsJsonl` restores it (its sessions' figures, summaries and media blobs included). An existing session refuses the whole import unless
 * `onExisting` is `replace` or `skip`. Throws `ParseError`, `UnknownFormatError` or `NotFoundError` for a bad
 * file.
 *
 * @example
 * const { sessions } = await importTranscriptSessions(store, "~/.claude/projects/p/abc.jsonl");
 * sessions[0]; // { id, messages, turns, toolCalls }
 */
export async function importTranscriptSessions(
  store: SessionStore,
  path: string,
  options: ImportTranscriptSessionsOptions = {},
): Promise<ImportResult> {
  const file = await readTranscriptFile(path, {
    format: options.format ?? "auto",
    partialLastLine: options.partialLastLine ?? "error",
  });
  const context = { now: options.now ?? new Date().toISOString(), prices: options.prices ?? DEFAULT_PRICES };
  // A ctxkit export's session and blob lines (figures, summaries, media) are restored, not dropped.
  const dumps =
    file.format === "ctxkit"
      ? parseSessionsJsonl(file.text, { source: path, ...context })
      : (await transcriptFileConversations(file, path)).map((conversation) =>
          conversationDump(conversation, context),
        );
  return restoreDumps(store, dumps, options);
}
