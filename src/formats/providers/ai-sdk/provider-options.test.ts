import { modelMessageSchema, type ModelMessage, type SystemModelMessage } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import type { ImageBlock, Message } from "../../../model/message.ts";
import { aiSdkPromptArbitrary, fixedImportOptions, storedForm } from "../test-support/index.ts";
import { withAiSdkBreakpoints } from "./ai-sdk-breakpoints.ts";
import { fromAiSdk } from "./from-ai-sdk.ts";
import { toAiSdk, type AiSdkPrompt } from "./to-ai-sdk.ts";

/** A value as plain JSON (URLs as strings), so prompts compare field by field. */
const plain = <Value>(value: Value): Value => JSON.parse(JSON.stringify(value)) as Value;

type Json = { [key: string]: unknown };
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `value` with every `providerOptions` rewritten by `change` (removed where it returns `undefined`). */
function mapOptions(value: unknown, change: (options: Json) => Json | undefined): unknown {
  if (Array.isArray(value)) return value.map((item) => mapOptions(item, change));
  // Plain objects only: a URL stays the URL it is.
  if (!isRecord(value) || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const result: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key !== "providerOptions") result[key] = mapOptions(item, change);
    else if (isRecord(item)) {
      const changed = change(item);
      if (changed !== undefined) result[key] = changed;
    }
  }
  return result;
}

const isMarker = (key: string): boolean => key === "cacheControl" || key === "cache_control";

/** Options without cache markers (providers left with nothing are kept, as `{}`). */
const withoutMarkers = (options: Json): Json =>
  Object.fromEntries(
    Object.entries(options).map(([provider, values]) => [
      provider,
      isRecord(values)
        ? Object.fromEntries(Object.entries(values).filter(([key]) => !isMarker(key)))
        : values,
    ]),
  );

/** Cache markers in a prompt as ctxkit counts them: `cacheControl` / `cache_control` objects under any provider. */
function markerCount(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + markerCount(item), 0);
  if (!isRecord(value)) return 0;
  let count = 0;
  for (const [key, item] of Object.entries(value)) {
    if (key === "providerOptions" && isRecord(item))
      for (const values of Object.values(item))
        if (isRecord(values) && (isRecord(values["cacheControl"]) || isRecord(values["cache_control"])))
          count++;
    count += markerCount(item);
  }
  return count;
}

const markerOf = (message: { providerOptions?: unknown }): unknown =>
  (message.providerOptions as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic
    ?.cacheControl;

/** `message` as ctxkit marks it: `anthropic.cacheControl` added to its own options, nothing else changed. */
function marked<Item extends { providerOptions?: unknown }>(message: Item, control: unknown): Item {
  const options = (message.providerOptions ?? {}) as { [provider: string]: Json };
  return {
    ...message,
    providerOptions: { ...options, anthropic: { ...options["anthropic"], cacheControl: control } },
  };
}

function breakpoints(prompt: AiSdkPrompt) {
  return withAiSdkBreakpoints(
    { system: prompt.instructions ?? [], messages: prompt.messages },
    { minTokens: 40, anchors: [0, 2] },
  );
}

/** `prompt`'s messages after `withAiSdkBreakpoints`, with the marker ctxkit put on each (or undefined). */
function markers(result: { system: SystemModelMessage[]; messages: ModelMessage[] }): unknown[] {
  return [...result.system, ...result.messages].map(markerOf);
}

function expectMarkedCopy(
  original: { providerOptions?: unknown },
  result: { providerOptions?: unknown },
  control: unknown,
): void {
  expect(plain(result)).toEqual(plain(control === undefined ? original : marked(original, control)));
}

describe("AI SDK providerOptions", () => {
  it("survive fromAiSdk → toAiSdk on every message and part, also from the stored form", () => {
    fc.assert(
      fc.property(aiSdkPromptArbitrary, (prompt) => {
        // The generated prompts are ones the AI SDK itself accepts.
        for (const message of [...(prompt.instructions ?? []), ...prompt.messages])
          expect(modelMessageSchema.safeParse(message).success).toBe(true);
        const messages = fromAiSdk(prompt, fixedImportOptions());
        expect(plain(toAiSdk(messages))).toEqual(plain(prompt));
        expect(plain(toAiSdk(storedForm(messages)))).toEqual(plain(prompt));
      }),
      { numRuns: 300 },
    );
  });

  it("survive on a reasoning part whose signature and redacted data hold the same value", () => {
    // A case the property above found: the signature was taken from one key and written back to the other.
    const prompt: AiSdkPrompt = {
      messages: [
        { role: "user", content: "Why?" },
        {
          role: "assistant",
          content: [
            {
              type: "reasoning",
              text: "",
              providerOptions: { anthropic: { redactedData: "low", signature: "low" } },
            },
            { type: "text", text: "Because." },
          ],
        },
      ],
    };
    const messages = fromAiSdk(prompt, fixedImportOptions());
    expect(plain(toAiSdk(messages))).toEqual(plain(prompt));
    expect(plain(toAiSdk(storedForm(messages)))).toEqual(plain(prompt));
  });

  it("survive from the deprecated forms, onto the file parts toAiSdk writes", () => {
    const options = { anthropic: { cacheControl: { type: "ephemeral" } }, acme: { tier: 2 } };
    const image = { openai: { imageDetail: "low", fileIdPrefix: "x" }, acme: { tier: 1 } };
    const messages = fromAiSdk(
      [
        {
          role: "user",
          content: [
            {
              type: "image",
              image: "https://x.test/cat.png",
              mediaType: "image/png",
              providerOptions: image,
            },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "shot", input: {} }],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "shot",
              output: {
                type: "content",
                value: [
                  { type: "image-url", url: "https://x.test/shot.png", providerOptions: image },
                  {
                    type: "file-data",
                    data: "JVBERg==",
                    mediaType: "application/pdf",
                    providerOptions: options,
                  },
                ],
              },
            },
          ],
        },
      ],
      fixedImportOptions(),
    );
    expect(messages[0]!.content[0]).toMatchObject({ type: "image", detail: "low" });
    const [user, , tool] = toAiSdk(messages).messages;
    expect(user!.content).toEqual([
      {
        type: "file",
        mediaType: "image/png",
        data: { type: "url", url: new URL("https://x.test/cat.png") },
        providerOptions: image,
      },
    ]);
    const output =
      tool!.role === "tool" && tool!.content[0]!.type === "tool-result" && tool!.content[0]!.output;
    expect(output).toEqual({
      type: "content",
      value: [
        {
          type: "file",
          mediaType: "image/png",
          data: { type: "url", url: new URL("https://x.test/shot.png") },
          providerOptions: image,
        },
        {
          type: "file",
          mediaType: "application/pdf",
          data: { type: "data", data: "JVBERg==" },
          providerOptions: options,
        },
      ],
    });
  });

  it("leave an image's detail level to its block: an unknown one stays an option, a block's own wins", () => {
    const part = (imageDetail: string) => ({
      type: "file" as const,
      mediaType: "image/png",
      data: { type: "url" as const, url: new URL("https://x.test/cat.png") },
      providerOptions: { openai: { imageDetail, user: "u1" } },
    });
    const [message] = fromAiSdk([{ role: "user", content: [part("medium")] }], fixedImportOptions());
    expect(message!.content[0]).not.toHaveProperty("detail");
    expect(toAiSdk([message!]).messages[0]!.content).toEqual([part("medium")]);
    // Set later (by the caller or governance), the block's detail level is what goes.
    const lowered: Message = {
      ...message!,
      content: [{ ...(message!.content[0] as ImageBlock), detail: "low" }],
    };
    expect(toAiSdk([lowered]).messages[0]!.content).toEqual([part("low")]);
  });

  it("are refused with a ValidationError when they are not JSON objects keyed by provider", () => {
    const user = (providerOptions: unknown) => [
      { role: "user", content: [{ type: "text", text: "hi", providerOptions }] },
    ];
    expect(() => fromAiSdk(user({ anthropic: "ephemeral" }))).toThrow(ValidationError);
    expect(() => fromAiSdk(user({ anthropic: "ephemeral" }))).toThrow(
      /messages\[0\]\.content\[0\]\.providerOptions\.anthropic/,
    );
    expect(() => fromAiSdk(user({ acme: { when: new Date(0) } }))).toThrow(ValidationError);
    const output = [
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "ls",
            output: { type: "text", value: "ok", providerOptions: { acme: [1] } },
          },
        ],
      },
    ];
    expect(() => fromAiSdk(output)).toThrow(/messages\[0\]\.content\[0\]\.output\.providerOptions\.acme/);
  });

  it("stay on their own part: after governance changes a part, its options are left out, not moved", () => {
    const cache = { anthropic: { cacheControl: { type: "ephemeral" } } };
    const [user, , tool] = fromAiSdk(
      [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?", providerOptions: cache },
            {
              type: "file",
              mediaType: "image/png",
              data: { type: "url", url: new URL("https://x.test/cat.png") },
              providerOptions: { acme: { tier: 1 } },
            },
          ],
        },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "cat", input: {} }] },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "cat",
              output: {
                type: "content",
                value: [
                  { type: "text", text: "line 1", providerOptions: cache },
                  { type: "text", text: "line 2" },
                ],
              },
            },
          ],
        },
      ],
      fixedImportOptions(),
    );
    // What replace-older-binaries does: the image becomes a text placeholder in its place.
    const placeholder: Message = {
      ...user!,
      content: [user!.content[0]!, { type: "text", text: "[image (image/png) omitted from context]" }],
    };
    expect(toAiSdk([placeholder]).messages[0]!.content).toEqual([
      { type: "text", text: "What is this?", providerOptions: cache },
      { type: "text", text: "[image (image/png) omitted from context]" },
    ]);
    // What truncate-tool-results does: the text no longer splits into the recorded parts.
    const result = tool!.content[0]!;
    const truncated: Message = {
      ...tool!,
      content: [{ ...result, content: "line 1 [truncated]" } as typeof result],
    };
    const output = toAiSdk([truncated]).messages[0]!;
    expect(output.role === "tool" && output.content[0]).toMatchObject({
      output: { type: "text", value: "line 1 [truncated]" },
    });
    expect(JSON.stringify(output)).not.toContain("cacheControl");
  });
});

describe("ctxkit's Anthropic breakpoints with the caller's providerOptions", () => {
  it("go where they would without any options, and only add anthropic.cacheControl to the caller's", () => {
    fc.assert(
      fc.property(aiSdkPromptArbitrary, (generated) => {
        const prompt = mapOptions(generated, withoutMarkers) as typeof generated;
        const bare = mapOptions(generated, () => undefined) as typeof generated;
        const imported = toAiSdk(fromAiSdk(prompt, fixedImportOptions()));
        const result = breakpoints(imported);
        const placed = markers(result);
        // The same places as for the prompt without any providerOptions.
        expect(placed).toEqual(markers(breakpoints(toAiSdk(fromAiSdk(bare, fixedImportOptions())))));
        const originals = [...(prompt.instructions ?? []), ...prompt.messages];
        [...result.system, ...result.messages].forEach((message, index) =>
          expectMarkedCopy(originals[index]!, message, placed[index]),
        );
      }),
      { numRuns: 200 },
    );
  });

  it("count the caller's markers (on messages, parts and tool outputs) and never make more than four", () => {
    fc.assert(
      fc.property(aiSdkPromptArbitrary, (prompt) => {
        const imported = toAiSdk(fromAiSdk(prompt, fixedImportOptions()));
        const existing = markerCount(imported);
        const result = breakpoints(imported);
        const added = markerCount(result) - existing;
        expect(added).toBeLessThanOrEqual(Math.max(0, 4 - existing));
        // ctxkit marks whole messages only, and never one the caller marked: everything else is as it came.
        const originals = [...(prompt.instructions ?? []), ...prompt.messages];
        [...result.system, ...result.messages].forEach((message, index) => {
          const original = originals[index]!;
          const same = JSON.stringify(markerOf(message)) === JSON.stringify(markerOf(original));
          const control = same ? undefined : markerOf(message);
          if (control !== undefined) expect(markerCount(original)).toBe(0);
          expectMarkedCopy(original, message, control);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("keep the caller's other options of a message they mark", () => {
    const prompt: AiSdkPrompt = {
      instructions: [
        { role: "system", content: "Be brief. ".repeat(200), providerOptions: { anthropic: { x: 1 } } },
      ],
      messages: [
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "Summarise the report. ".repeat(200),
              providerOptions: { openai: { y: 2 }, anthropic: { citations: { enabled: true } } },
            },
          ],
          providerOptions: { google: { z: 3 }, anthropic: { w: 4 } },
        },
      ],
    };
    const result = breakpoints(toAiSdk(fromAiSdk(prompt, fixedImportOptions())));
    const ephemeral = { type: "ephemeral" };
    expect(result.system).toEqual([marked(prompt.instructions![0]!, ephemeral)]);
    expect(plain(result.messages)).toEqual(plain([marked(prompt.messages[0]!, ephemeral)]));
  });
});
