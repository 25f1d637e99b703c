import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
  SharedV4Warning,
} from "@ai-sdk/provider";
import { basename } from "node:path";
import { z } from "zod";
import { randomIds } from "../model/ids.ts";
import type { JsonValue } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import { toCliPrompt, type CliFunction, type CliPromptOptions } from "./cli-prompt.ts";
import { parseCliReply } from "./cli-reply.ts";
import { readCliOutput, type CliOutputFormat } from "./cli-output.ts";
import { fromLanguageModelPrompt } from "./language-model-prompt.ts";
import { runCliCommand } from "./run-cli-command.ts";

/** Options of `new CliModel()`. */
export interface CliModelOptions {
  /** The program to run (no shell): `claude`, `gemini`, `/usr/local/bin/my-agent`. */
  readonly command: string;
  /** Its arguments, e.g. `["-p"]` or `["-p", "--output-format", "json"]`. */
  readonly args?: readonly string[];
  /** Reported as the model id (default: the command's file name). */
  readonly modelId?: string;
  /** Reported as the provider (default "cli"). */
  readonly provider?: string;
  /** `text` (default): stdout is the reply. `json`: stdout is JSON and the reply is at `jsonPath`. */
  readonly output?: CliOutputFormat;
  /** Dot path of the reply in JSON output (default "result", as `claude -p --output-format json` prints). */
  readonly jsonPath?: string;
  /** Time limit of one call; the process is killed after it (default 300 000 ms). */
  readonly timeoutMs?: number;
  /** Largest stdout accepted (default 16 MiB). */
  readonly maxOutputBytes?: number;
  readonly cwd?: string;
  /** Environment of the process (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How the prompt is rendered (see `toCliPrompt`). */
  readonly prompt?: Pick<
    CliPromptOptions,
    "listFunctions" | "neutralizeSystemPrompt" | "rewriteRules" | "rules"
  >;
}

const optionsSchema = z.object({
  command: z.string().min(1, "name the program to run"),
  args: z.array(z.string()).optional(),
  output: z.enum(["text", "json"]).optional(),
  jsonPath: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxOutputBytes: z.number().int().positive().optional(),
});

const UNSUPPORTED_SETTINGS = [
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
] as const;

const EMPTY_USAGE: LanguageModelV4Usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/**
 * A language model (AI SDK specification v4) backed by a command-line program: each call starts one fresh
 * process, writes the conversation to its stdin as the XML prompt of `toCliPrompt`, and reads the reply from
 * stdout (text, or JSON). Function calls come back through the `<json_format>` convention, so `generateText`
 * tools work. Failures are `CliModelError`s.
 *
 * @example
 * ```ts
 * const model = new CliModel({ command: "claude", args: ["-p", "--output-format", "json"], output: "json" });
 * const { text } = await generateText({ model, prompt: "What is 2+2?" });
 * ```
 */
export class CliModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly #options: CliModelOptions;

  constructor(options: CliModelOptions) {
    validate(optionsSchema, options, "CliModel options");
    this.#options = options;
    this.provider = options.provider ?? "cli";
    this.modelId = options.modelId ?? basename(options.command);
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { input, warnings, functions } = this.#prepare(options);
    const { stdout } = await this.#run(input, options.abortSignal);
    const { text, usage } = readCliOutput(stdout, this.#outputFormat(), this.#options.jsonPath, this.modelId);
    const content = this.#content(text, functions.length > 0);
    const calls = content.some((part) => part.type === "tool-call");
    return {
      content,
      finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined },
      usage: usage ?? EMPTY_USAGE,
      warnings,
      request: { body: input },
      response: { modelId: this.modelId, timestamp: new Date() },
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { input, warnings, functions } = this.#prepare(options);
    const live =
      functions.length === 0 && this.#outputFormat() === "text" && options.responseFormat?.type !== "json";
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start: async (controller) => {
        controller.enqueue({ type: "stream-start", warnings });
        try {
          if (live) await this.#streamText(input, options.abortSignal, controller);
          else for (const part of await this.#bufferedParts(options)) controller.enqueue(part);
        } catch (error) {
          controller.enqueue({ type: "error", error });
          controller.enqueue({
            type: "finish",
            usage: EMPTY_USAGE,
            finishReason: { unified: "error", raw: undefined },
          });
        }
        controller.close();
      },
    });
    return { stream, request: { body: input } };
  }

  async #streamText(
    input: string,
    signal: AbortSignal | undefined,
    controller: ReadableStreamDefaultController<LanguageModelV4StreamPart>,
  ): Promise<void> {
    const id = "text-0";
    let started = false;
    let pendingSpace = ""; // trailing whitespace is held back so the streamed text equals the generated text
    await this.#run(input, signal, (chunk) => {
      const combined = pendingSpace + chunk;
      const body = combined.replace(/\s+$/, "");
      pendingSpace = combined.slice(body.length);
      if (body === "") return;
      if (!started) controller.enqueue({ type: "text-start", id });
      started = true;
      controller.enqueue({ type: "text-delta", id, delta: body });
    });
    if (started) controller.enqueue({ type: "text-end", id });
    controller.enqueue({
      type: "finish",
      usage: EMPTY_USAGE,
      finishReason: { unified: "stop", raw: undefined },
    });
  }

  async #bufferedParts(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamPart[]> {
    const result = await this.doGenerate(options);
    const parts: LanguageModelV4StreamPart[] = [];
    result.content.forEach((part, index) => {
      if (part.type === "text") {
        const id = `text-${index}`;
        parts.push(
          { type: "text-start", id },
          { type: "text-delta", id, delta: part.text },
          { type: "text-end", id },
        );
      } else if (part.type === "tool-call") parts.push(part);
    });
    parts.push({ type: "finish", usage: result.usage, finishReason: result.finishReason });
    return parts;
  }

  #outputFormat(): CliOutputFormat {
    return this.#options.output ?? "text";
  }

  #run(input: string, signal: AbortSignal | undefined, onStdout?: (text: string) => void) {
    return runCliCommand({
      command: this.#options.command,
      args: this.#options.args ?? [],
      input,
      timeoutMs: this.#options.timeoutMs ?? 300_000,
      maxOutputBytes: this.#options.maxOutputBytes ?? 16 * 1024 * 1024,
      ...(this.#options.cwd !== undefined && { cwd: this.#options.cwd }),
      ...(this.#options.env !== undefined && { env: this.#options.env }),
      ...(signal !== undefined && { signal }),
      ...(onStdout !== undefined && { onStdout }),
    });
  }

  #content(text: string, withFunctions: boolean): LanguageModelV4Content[] {
    const reply = withFunctions ? parseCliReply(text) : { kind: "text" as const, text };
    if (reply.kind === "text") return [{ type: "text", text: reply.text }];
    return reply.toolCalls.map((call) => ({
      type: "tool-call",
      toolCallId: randomIds("call"),
      toolName: call.name,
      input: JSON.stringify(call.arguments),
    }));
  }

  #prepare(options: LanguageModelV4CallOptions) {
    const warnings: SharedV4Warning[] = UNSUPPORTED_SETTINGS.filter((key) => options[key] !== undefined).map(
      (feature) => ({ type: "unsupported", feature, details: "a CLI model cannot pass this setting" }),
    );
    const choice = options.toolChoice;
    const functions: CliFunction[] = [];
    for (const tool of choice?.type === "none" ? [] : (options.tools ?? [])) {
      if (tool.type === "provider")
        warnings.push({ type: "unsupported", feature: `provider tool ${tool.name}` });
      else
        functions.push({
          name: tool.name,
          parameters: tool.inputSchema as JsonValue,
          ...(tool.description !== undefined && { description: tool.description }),
        });
    }
    const rules = [...(this.#options.prompt?.rules ?? [])];
    if (choice?.type === "required") rules.push("The reply must call at least one function.");
    if (choice?.type === "tool") rules.push(`The reply must call the function "${choice.toolName}".`);
    if (options.responseFormat?.type === "json") {
      const schema = options.responseFormat.schema;
      rules.push(
        `Reply with only a JSON value${schema ? ` matching this JSON schema: ${JSON.stringify(schema)}` : ""}.`,
      );
    }
    const input = toCliPrompt(fromLanguageModelPrompt(options.prompt), {
      ...this.#options.prompt,
      functions,
      rules,
    });
    return { input, warnings, functions };
  }
}
