import type { Usage } from "../../model/message.ts";
import type { TextOrLines } from "../text-lines.ts";
import { CodexConverter } from "./codex-converter.ts";
import {
  codexCompactedSchema,
  codexLineSchema,
  codexSessionMetaSchema,
  codexTokenCountSchema,
} from "./codex-records.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries } from "./json-or-string.ts";
import { parseJsonLines } from "./json-lines.ts";
import { expectShape } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expectedLine = "a Codex rollout line {timestamp, type, payload}";

/**
 * Imports an OpenAI Codex CLI rollout JSONL file as one conversation, from its `response_item` records:
 * - `base_instructions` becomes the first `system` message (metadata `origin: "base_instructions"`);
 * - user messages that the user did not type (no matching `user_message` event: AGENTS.md, environment
 *   context) get metadata `meta: true`, as Claude Code's injected records do;
 * - `developer` messages become `system` messages with metadata `role: "developer"` (they are harness
 *   instructions, and a user message would open a turn);
 * - consecutive output items (reasoning, assistant text, function/custom tool calls, web searches) are one
 *   request's output and merge into one assistant message; the `token_count` event that follows carries that
 *   request's usage;
 * - encrypted reasoning is kept opaque in `providerData` with `redacted: true`;
 * - a `web_search_call` (run by the server, its result never logged) gets a synthetic empty result with
 *   metadata `synthetic: true`, so every call stays paired;
 * - any other client-run call (`tool_search_call`, …) is a tool call named after its type, its `*_output` the
 *   result (`tool_search_output`: the tools it loaded, as the model saw them);
 * - the largest `model_context_window` its events report is the conversation's `contextWindow` metadata;
 * - a `compacted` line becomes a compaction marker, then Codex's summary as a `summary` message;
 * - a call with no output (the rollout ends mid-call) gets a result that says so (see `MessageListBuilder`).
 *
 * @example
 * const [conversation] = importCodex(readFileSync(path, "utf8"), path);
 */
export function importCodex(text: TextOrLines, source: string): ImportedConversation[] {
  const lines = parseJsonLines(text, source, expectedLine).map(({ line, value }) => ({
    line,
    record: expectShape(codexLineSchema, value, { source, line }, expectedLine),
  }));
  const metaLine = lines.find((entry) => entry.record.type === "session_meta");
  const meta = metaLine
    ? expectShape(
        codexSessionMetaSchema,
        metaLine.record.payload,
        { source, line: metaLine.line, path: "payload" },
        expectedLine,
      )
    : undefined;
  const prompts = new Set<string>();
  let contextWindow: number | undefined;
  for (const { record } of lines) {
    const window = record.payload["model_context_window"] ?? infoOf(record.payload)?.["model_context_window"];
    if (typeof window === "number") contextWindow = Math.max(contextWindow ?? 0, window);
    const message = record.payload["message"];
    if (
      record.type === "event_msg" &&
      record.payload.type === "user_message" &&
      typeof message === "string"
    ) {
      prompts.add(message);
    }
  }
  const converter = new CodexConverter(meta?.id ?? sourceStem(source), prompts);
  if (meta?.base_instructions) {
    converter.addSystem(meta.base_instructions.text, metaLine?.record.timestamp, {
      origin: "base_instructions",
    });
  }
  for (const { line, record } of lines) {
    const location = { source, line, path: "payload" };
    if (record.type === "turn_context")
      converter.model = stringOf(record.payload["model"]) ?? converter.model;
    else if (record.type === "response_item") converter.addItem(record.payload, record.timestamp, location);
    else if (record.type === "compacted") {
      const compacted = expectShape(codexCompactedSchema, record.payload, location, "a Codex compacted line");
      converter.addCompaction(compacted.message ?? "", record.timestamp);
    } else if (record.type === "event_msg" && record.payload.type === "token_count") {
      const event = expectShape(codexTokenCountSchema, record.payload, location, "a Codex token_count event");
      const usage = event.info?.last_token_usage;
      if (usage) {
        converter.addUsage(
          definedEntries({
            input: usage.input_tokens,
            output: usage.output_tokens,
            cacheRead: usage.cached_input_tokens,
            reasoning: usage.reasoning_output_tokens,
          }) as Usage,
        );
      }
    }
  }
  return [
    {
      id: converter.id,
      format: "codex",
      source,
      messages: converter.finish(),
      metadata: definedEntries({
        cwd: meta?.cwd,
        cliVersion: meta?.cli_version,
        originator: meta?.originator,
        modelProvider: meta?.model_provider,
        contextWindow,
      }),
    },
  ];
}

/** The `info` object of a `token_count` event payload, when it has one. */
function infoOf(payload: {
  readonly [key: string]: unknown;
}): { readonly [key: string]: unknown } | undefined {
  const info = payload["info"];
  return typeof info === "object" && info !== null
    ? (info as { readonly [key: string]: unknown })
    : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
