import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import { CliModelError } from "../errors/cli-model-error.ts";
import { valueAtPath } from "./cli-reply.ts";

/** How a CLI prints its reply: plain text, or a JSON document holding it. */
export type CliOutputFormat = "text" | "json";

/** The reply read from a CLI's stdout, with usage when the output reported it. */
export interface CliOutput {
  readonly text: string;
  readonly usage: LanguageModelV4Usage | undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Usage in the shape `claude -p --output-format json` prints (`usage.input_tokens`, …), if present. */
function usageOf(document: unknown): LanguageModelV4Usage | undefined {
  const usage = valueAtPath(document, "usage");
  if (usage === null || typeof usage !== "object") return undefined;
  const fields = usage as Record<string, unknown>;
  const noCache = count(fields["input_tokens"]);
  const cacheRead = count(fields["cache_read_input_tokens"]);
  const cacheWrite = count(fields["cache_creation_input_tokens"]);
  const output = count(fields["output_tokens"]);
  if (noCache === undefined && output === undefined) return undefined;
  const total = noCache === undefined ? undefined : noCache + (cacheRead ?? 0) + (cacheWrite ?? 0);
  return {
    inputTokens: { total, noCache, cacheRead, cacheWrite },
    outputTokens: { total: output, text: undefined, reasoning: undefined },
    raw: usage as NonNullable<LanguageModelV4Usage["raw"]>,
  };
}

/**
 * Reads a reply from stdout. Text output is used as printed (trailing whitespace removed). JSON output must parse,
 * must not report `is_error: true`, and must hold a string at `jsonPath` (default "result").
 *
 * @example
 * readCliOutput('{"result":"4","usage":{"input_tokens":12,"output_tokens":1}}', "json", undefined, "claude").text; // "4"
 */
export function readCliOutput(
  stdout: string,
  format: CliOutputFormat,
  jsonPath = "result",
  command = "cli",
): CliOutput {
  if (format === "text") return { text: stdout.replace(/\s+$/, ""), usage: undefined };
  let document: unknown;
  try {
    document = JSON.parse(stdout);
  } catch (error) {
    throw new CliModelError(
      "output",
      `"${command}" printed output that is not JSON; set output: "text" or pass the flag that makes it print JSON`,
      { command, cause: error },
    );
  }
  const text = valueAtPath(document, jsonPath);
  if (valueAtPath(document, "is_error") === true) {
    const detail = typeof text === "string" ? `: ${text.slice(0, 300)}` : "";
    throw new CliModelError("output", `"${command}" reported an error${detail}; run it by hand to see why`, {
      command,
    });
  }
  if (typeof text !== "string") {
    throw new CliModelError(
      "output",
      `"${command}" printed JSON without a string at "${jsonPath}"; set jsonPath to where its reply is`,
      { command },
    );
  }
  return { text, usage: usageOf(document) };
}
