import type { AssistantContent, ModelMessage, SystemModelMessage, ToolResultPart, UserContent } from "ai";
import fc from "fast-check";
import type { JsonValue } from "../../../model/message.ts";
import type { ProviderOptions, TaggedFileData } from "../ai-sdk/ai-sdk-types.ts";
import { compactJson, TOOL_ERROR_PREFIX } from "../tool-result-text.ts";

const word = fc.stringMatching(/^[a-z]{1,8}$/);
/** Free text that no decoder mistakes for something else (compact JSON, the error prefix). */
const freeText = fc
  .string({ minLength: 1, maxLength: 30 })
  .filter((text) => compactJson(text) === undefined && !text.startsWith(TOOL_ERROR_PREFIX));
const base64 = fc
  .uint8Array({ minLength: 1, maxLength: 16 })
  .map((bytes) => Buffer.from(bytes).toString("base64"));
// Values go through JSON once: fast-check's JSON values include -0, which JSON (and a store) turns into 0.
const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as JsonValue);
const jsonObject = fc
  .dictionary(word, json, { maxKeys: 3 })
  .map((value) => JSON.parse(JSON.stringify(value)) as { [key: string]: JsonValue });

/** Provider names the AI SDK packages read, and arbitrary ones. */
const providerName = fc.oneof(
  fc.constantFrom("anthropic", "openai", "google", "vertex", "bedrock", "xai"),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/),
);
/** Option names ctxkit itself reads or writes (signatures, image detail, cache control), and arbitrary ones. */
const optionName = fc.oneof(
  fc.constantFrom(
    "cacheControl",
    "imageDetail",
    "signature",
    "redactedData",
    "thoughtSignature",
    "itemId",
    "reasoningEncryptedContent",
  ),
  fc.string({ maxLength: 8 }),
);
const optionValue = fc.oneof(
  json,
  base64,
  fc.constantFrom("auto", "low", "high", "original"),
  fc.constant({ type: "ephemeral" }),
);

/** Arbitrary `providerOptions`: one to three providers, each with up to three JSON options. */
export const providerOptionsArbitrary: fc.Arbitrary<ProviderOptions> = fc
  .dictionary(providerName, fc.dictionary(optionName, optionValue, { maxKeys: 3 }), {
    minKeys: 1,
    maxKeys: 3,
  })
  .map((options) => JSON.parse(JSON.stringify(options)) as ProviderOptions);

const maybeOptions = fc.option(providerOptionsArbitrary, { nil: undefined, freq: 2 });

/** `part` with `providerOptions` when there are some. */
function withOptions<Part extends object>(
  part: Part,
  providerOptions: ProviderOptions | undefined,
): Part & { providerOptions?: ProviderOptions } {
  return providerOptions === undefined ? part : { ...part, providerOptions };
}

type Media = { type: "file"; data: TaggedFileData; mediaType: string; filename?: string };

/** An image or a file as `toAiSdk` writes it: a `file` part with tagged data (images have no file name). */
const media: fc.Arbitrary<Media> = fc.oneof(
  base64.map((data): Media => ({ type: "file", mediaType: "image/png", data: { type: "data", data } })),
  word.map((name): Media => ({
    type: "file",
    mediaType: "image/jpeg",
    data: { type: "url", url: new URL(`https://example.com/${name}.jpg`) },
  })),
  fc.record({ data: base64, name: fc.option(word, { nil: undefined }) }).map(({ data, name }): Media => ({
    type: "file",
    mediaType: "application/pdf",
    data: { type: "data", data },
    ...(name !== undefined && { filename: `${name}.pdf` }),
  })),
);

const userContent: fc.Arbitrary<UserContent> = fc.oneof(
  freeText,
  fc.array(
    fc.oneof(
      fc
        .record({ text: freeText, options: maybeOptions })
        .map(({ text, options }) => withOptions({ type: "text" as const, text }, options)),
      fc
        .record({ part: media, options: maybeOptions })
        .map(({ part, options }) => withOptions(part, options)),
    ),
    { minLength: 1, maxLength: 3 },
  ),
);

type AssistantPart = Exclude<AssistantContent, string>[number];

/** An assistant part; tool calls get their ids later. */
const assistantPart = (calls: boolean): fc.Arbitrary<AssistantPart> =>
  fc.oneof(
    fc
      .record({ text: freeText, options: maybeOptions })
      .map(({ text, options }) => withOptions({ type: "text" as const, text }, options)),
    fc
      .record({ text: fc.oneof(freeText, fc.constant("")), options: maybeOptions })
      .map(({ text, options }) => withOptions({ type: "reasoning" as const, text }, options)),
    fc.record({ part: media, options: maybeOptions }).map(({ part, options }) => withOptions(part, options)),
    ...(calls
      ? [
          fc
            .record({ name: word, input: jsonObject, options: maybeOptions })
            .map(({ name, input, options }) =>
              withOptions({ type: "tool-call" as const, toolCallId: "", toolName: name, input }, options),
            ),
        ]
      : []),
  );

type Output = ToolResultPart["output"];

const outputOptions = fc.option(providerOptionsArbitrary, { nil: undefined, freq: 3 });

/** A tool result output in the forms `toAiSdk` writes (JSON outputs hold non-strings: a string is a text). */
const output: fc.Arbitrary<Output> = fc.oneof(
  fc
    .record({ value: freeText, error: fc.boolean(), options: outputOptions })
    .map(({ value, error, options }) =>
      withOptions({ type: error ? ("error-text" as const) : ("text" as const), value }, options),
    ),
  fc
    .record({ value: jsonObject, error: fc.boolean(), options: outputOptions })
    .map(({ value, error, options }) =>
      withOptions({ type: error ? ("error-json" as const) : ("json" as const), value }, options),
    ),
  fc
    .array(
      fc.oneof(
        fc
          .record({ text: freeText, options: maybeOptions })
          .map(({ text, options }) => withOptions({ type: "text" as const, text }, options)),
        fc
          .record({ part: media, options: maybeOptions })
          .map(({ part, options }) => withOptions(part, options)),
      ),
      { maxLength: 3 },
    )
    .map((value): Output => ({ type: "content", value })),
);

const assistantMessage = (calls: boolean): fc.Arbitrary<ModelMessage> =>
  fc
    .record({
      content: fc.oneof(
        { weight: 1, arbitrary: fc.oneof(freeText, fc.constant("")) },
        { weight: 4, arbitrary: fc.array(assistantPart(calls), { maxLength: 4 }) },
      ),
      options: maybeOptions,
    })
    .map(({ content, options }) => withOptions({ role: "assistant" as const, content }, options));

/** A step: an assistant message, and a tool message answering its calls when it made any. */
const step: fc.Arbitrary<ModelMessage[]> = assistantMessage(true).chain((assistant) => {
  const calls = typeof assistant.content === "string" ? [] : assistant.content;
  const callCount = calls.filter((part) => part.type === "tool-call").length;
  if (callCount === 0) return fc.constant([assistant]);
  return fc
    .record({
      results: fc.array(
        fc.record({ output, options: outputOptions }).map(({ output, options }) => ({ output, options })),
        { minLength: callCount, maxLength: callCount },
      ),
      options: maybeOptions,
    })
    .map(({ results, options }) => {
      const tool = withOptions(
        {
          role: "tool" as const,
          content: results.map(({ output, options }) =>
            withOptions({ type: "tool-result" as const, toolCallId: "", toolName: "", output }, options),
          ),
        },
        options,
      );
      return [assistant, tool];
    });
});

const turn: fc.Arbitrary<ModelMessage[]> = fc
  .record({
    user: fc
      .record({ content: userContent, options: maybeOptions })
      .map(({ content, options }) => withOptions({ role: "user" as const, content }, options)),
    steps: fc.array(step, { maxLength: 2 }),
    answer: fc.option(assistantMessage(false), { nil: undefined }),
  })
  .map(({ user, steps, answer }) => [user, ...steps.flat(), ...(answer === undefined ? [] : [answer])]);

/** Gives the tool calls unique ids, and each tool result the id and name of the call it answers, in order. */
function linkCalls(messages: ModelMessage[]): ModelMessage[] {
  let next = 1;
  let pending: { id: string; name: string }[] = [];
  return messages.map((message): ModelMessage => {
    if (message.role === "assistant" && typeof message.content !== "string") {
      pending = [];
      return {
        ...message,
        content: message.content.map((part) => {
          if (part.type !== "tool-call") return part;
          const call = { id: `call_${next++}`, name: part.toolName };
          pending.push(call);
          return { ...part, toolCallId: call.id };
        }),
      };
    }
    if (message.role !== "tool") return message;
    return {
      ...message,
      content: message.content.map((part, at) =>
        part.type === "tool-result"
          ? { ...part, toolCallId: pending[at]!.id, toolName: pending[at]!.name }
          : part,
      ),
    };
  });
}

/**
 * Random AI SDK prompts in the forms `toAiSdk` writes (tagged file data, `file` parts, outputs whose JSON is not a
 * string), with arbitrary `providerOptions` on the instructions, every message and every part that takes them:
 * user text and files, assistant text, reasoning, files and tool calls, tool results, their outputs and the
 * parts of `content` outputs. Every tool call is answered by the tool message right after it.
 *
 * @example
 * fc.assert(fc.property(aiSdkPromptArbitrary, (prompt) => expect(toAiSdk(fromAiSdk(prompt))).toEqual(prompt)));
 */
export const aiSdkPromptArbitrary: fc.Arbitrary<{
  instructions?: SystemModelMessage[];
  messages: ModelMessage[];
}> = fc
  .record({
    instructions: fc.array(
      fc
        .record({ content: freeText, options: maybeOptions })
        .map(({ content, options }) => withOptions({ role: "system" as const, content }, options)),
      { maxLength: 2 },
    ),
    turns: fc.array(turn, { minLength: 1, maxLength: 3 }),
  })
  .map(({ instructions, turns }) => ({
    ...(instructions.length > 0 && { instructions }),
    messages: linkCalls(turns.flat()),
  }));
