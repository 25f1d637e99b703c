import fc from "fast-check";
import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  ImageDetail,
  JsonValue,
  Message,
  ReasoningBlock,
  ToolCallBlock,
  ToolResultBlock,
} from "../../../model/message.ts";
import { sequentialIds } from "../../../model/ids.ts";
import { buildMessages, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { compactJson, TOOL_ERROR_PREFIX } from "../tool-result-text.ts";

/** Import options that make `buildMessages` and every `fromX` deterministic, so results compare with `toEqual`. */
export function fixedImportOptions(): ImportOptions {
  return { sessionId: "s1", ids: sequentialIds(), clock: () => new Date("2026-01-01T00:00:00.000Z") };
}

/** What a format can carry; the generator only produces histories inside it. */
export interface HistoryShape {
  /** The reasoning blocks of an assistant message (an array, because OpenAI items expand to several blocks). */
  readonly reasoning: fc.Arbitrary<ReasoningBlock[]>;
  /** Generate string (free-form) tool inputs too. */
  readonly stringToolInputs?: boolean;
  /** Generate file names on files (Gemini has no place for them). */
  readonly filenames?: boolean;
  /** Image detail levels to put on some images (formats that carry one; none by default). */
  readonly imageDetails?: readonly ImageDetail[];
  /** Mark some assistant texts as refusals (formats that carry them). */
  readonly refusals?: boolean;
}

const word = fc.stringMatching(/^[a-z]{1,8}$/);
/** Free text that no decoder mistakes for something else (compact JSON, error prefix, envelopes). */
const freeText = fc
  .string({ minLength: 1, maxLength: 40 })
  .filter((text) => compactJson(text) === undefined && !text.startsWith(TOOL_ERROR_PREFIX));
const base64 = fc
  .uint8Array({ minLength: 1, maxLength: 24 })
  .map((bytes) => Buffer.from(bytes).toString("base64"));
const signature = base64;

const plainImage: fc.Arbitrary<ImageBlock> = fc.oneof(
  base64.map((data): ImageBlock => ({ type: "image", mediaType: "image/png", data })),
  word.map((name): ImageBlock => ({
    type: "image",
    mediaType: "image/jpeg",
    url: `https://example.com/images/${name}.jpg`,
  })),
);

function image(shape: HistoryShape): fc.Arbitrary<ImageBlock> {
  const details = shape.imageDetails ?? [];
  if (details.length === 0) return plainImage;
  return fc
    .record({ image: plainImage, detail: fc.option(fc.constantFrom(...details), { nil: undefined }) })
    .map(({ image, detail }) => (detail === undefined ? image : { ...image, detail }));
}

function file(shape: HistoryShape): fc.Arbitrary<FileBlock> {
  return fc.record({ data: base64, name: word }).map(({ data, name }): FileBlock => ({
    type: "file",
    mediaType: "application/pdf",
    data,
    ...(shape.filenames !== false && { filename: `${name}.pdf` }),
  }));
}

/** Plain reasoning with an optional signature (or redacted reasoning whose opaque data is the signature). */
export const signedReasoning: fc.Arbitrary<ReasoningBlock[]> = fc.oneof(
  fc
    .record({ text: freeText, signature })
    .map(({ text, signature }): ReasoningBlock[] => [{ type: "reasoning", text, signature }]),
  signature.map((data): ReasoningBlock[] => [
    { type: "reasoning", text: "", redacted: true, signature: data },
  ]),
);

/** Reasoning with the text always present and an optional signature (Gemini thoughts). */
export const thoughtReasoning: fc.Arbitrary<ReasoningBlock[]> = fc
  .record({ text: freeText, signature: fc.option(signature, { nil: undefined }) })
  .map(({ text, signature }): ReasoningBlock[] => [
    { type: "reasoning", text, ...(signature !== undefined && { signature }) },
  ]);

/** OpenAI Responses reasoning: one block per summary part, all carrying the item id and encrypted content. */
export const openAIReasoning: fc.Arbitrary<ReasoningBlock[]> = fc
  .record({
    id: word.map((name) => `rs_${name}`),
    encrypted: fc.option(signature, { nil: undefined }),
    summaries: fc.array(freeText, { minLength: 0, maxLength: 3 }),
  })
  .map(({ id, encrypted, summaries }) => {
    const openai = { itemId: id, ...(encrypted !== undefined && { reasoningEncryptedContent: encrypted }) };
    const texts = summaries.length === 0 ? [""] : summaries;
    return texts.map((text): ReasoningBlock => ({
      type: "reasoning",
      text,
      ...(text === "" && encrypted !== undefined && { redacted: true }),
      providerData: { openai },
    }));
  });

// ctxkit messages are JSON data, so values go through JSON once (fast-check's JSON values include -0).
const jsonObject = fc
  .dictionary(word, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
  .map((value) => JSON.parse(JSON.stringify(value)) as { [key: string]: JsonValue });

function toolInput(shape: HistoryShape): fc.Arbitrary<JsonValue> {
  return shape.stringToolInputs === true ? fc.oneof(jsonObject, freeText) : jsonObject;
}

function toolResult(call: ToolCallBlock, shape: HistoryShape): fc.Arbitrary<ToolResultBlock> {
  return fc
    .record({
      content: fc.oneof(freeText, jsonObject, fc.array(fc.integer(), { maxLength: 3 })),
      isError: fc.boolean(),
      attachments: fc.option(fc.array(fc.oneof(image(shape), file(shape)), { minLength: 1, maxLength: 2 }), {
        nil: undefined,
        freq: 4,
      }),
    })
    .map(({ content, isError, attachments }) => ({
      type: "tool-result",
      callId: call.id,
      toolName: call.name,
      content,
      ...(isError && { isError: true }),
      ...(attachments !== undefined && { attachments }),
    }));
}

/** One step; only the last step of a turn may end without tool calls (else two assistant messages would touch). */
function step(
  shape: HistoryShape,
  callIds: { next: number },
  withCalls: boolean,
): fc.Arbitrary<MessageDraft[]> {
  return fc
    .record({
      reasoning: fc.option(shape.reasoning, { nil: undefined }),
      texts: fc.array(
        fc.record({ text: freeText, refusal: shape.refusals === true ? fc.boolean() : fc.constant(false) }),
        { maxLength: 2 },
      ),
      calls: fc.array(fc.record({ name: word, input: toolInput(shape) }), {
        minLength: withCalls ? 1 : 0,
        maxLength: withCalls ? 3 : 0,
      }),
    })
    .filter(({ reasoning, texts, calls }) => reasoning !== undefined || texts.length > 0 || calls.length > 0)
    .chain(({ reasoning, texts, calls }) => {
      const toolCalls = calls.map(({ name, input }): ToolCallBlock => ({
        type: "tool-call",
        id: `call_${callIds.next++}`,
        name,
        input,
      }));
      const content: ContentBlock[] = [
        ...(reasoning ?? []),
        ...texts.map(({ text, refusal }): ContentBlock => ({
          type: "text",
          text,
          ...(refusal && { refusal }),
        })),
        ...toolCalls,
      ];
      const results = toolCalls.map((call) => toolResult(call, shape));
      return fc
        .tuple(...results)
        .map((blocks): MessageDraft[] => [
          { role: "assistant", content },
          ...blocks.map((block): MessageDraft => ({ role: "tool", content: [block] })),
        ]);
    });
}

function userMessage(shape: HistoryShape): fc.Arbitrary<MessageDraft> {
  return fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: freeText.map((text): ContentBlock => ({ type: "text", text })) },
        image(shape),
        file(shape),
      ),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((content): MessageDraft => ({ role: "user", content }));
}

const summary: fc.Arbitrary<MessageDraft> = freeText.map((text): MessageDraft => ({
  role: "user",
  kind: "summary",
  content: [{ type: "text", text }],
}));

/**
 * Random valid histories: an optional system message, then turns of a user message (optionally after a
 * summary) and steps; every tool call is answered by tool messages right after its assistant message.
 *
 * @example
 * fc.assert(fc.property(historyArbitrary({ reasoning: signedReasoning }), (history) => …));
 */
export function historyArbitrary(shape: HistoryShape): fc.Arbitrary<Message[]> {
  const callIds = { next: 1 };
  const turn = fc
    .record({
      summary: fc.option(summary, { nil: undefined, freq: 4 }),
      user: userMessage(shape),
      steps: fc.array(step(shape, callIds, true), { maxLength: 3 }),
      answer: fc.option(step(shape, callIds, false), { nil: undefined }),
    })
    .map(({ summary, user, steps, answer }) => [
      ...(summary ? [summary] : []),
      user,
      ...steps.flat(),
      ...(answer ?? []),
    ]);
  return fc
    .record({
      system: fc.option(freeText, { nil: undefined }),
      turns: fc.array(turn, { minLength: 1, maxLength: 3 }),
    })
    .map(({ system, turns }) => {
      const drafts: MessageDraft[] = [
        ...(system === undefined
          ? []
          : [{ role: "system", content: [{ type: "text", text: system }] } as MessageDraft]),
        ...turns.flat(),
      ];
      return buildMessages(drafts, fixedImportOptions());
    });
}
