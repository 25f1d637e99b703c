import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { generateText, modelMessageSchema } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import type { Message, ReasoningBlock } from "../../../model/message.ts";
import { toAnthropic } from "../anthropic/to-anthropic.ts";
import { fromGemini } from "../gemini/from-gemini.ts";
import { buildMessages } from "../message-builder.ts";
import { fromOpenAIChat } from "../openai-chat/from-openai-chat.ts";
import { fromOpenAIResponses } from "../openai-responses/from-openai-responses.ts";
import { partOptionsCarrier } from "../part-options-carrier.ts";
import {
  fixedImportOptions,
  historyArbitrary,
  openAIReasoning,
  sampleHistory,
  signedReasoning,
  storedForm,
  withoutMarkers,
} from "../test-support/index.ts";
import { fromAiSdk } from "./from-ai-sdk.ts";
import { toAiSdk, type AiSdkPrompt } from "./to-ai-sdk.ts";

const reasoning: ReasoningBlock[] = [
  { type: "reasoning", text: "Check the build.", signature: "RXVnQ2lnRUFTRkE=" },
  { type: "reasoning", text: "", redacted: true, signature: "cmVkYWN0ZWQ=" },
  {
    type: "reasoning",
    text: "**Plan**",
    providerData: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAA" } },
  },
];

function roundTrip(messages: readonly Message[]): Message[] {
  return fromAiSdk(toAiSdk(messages), fixedImportOptions());
}

function expectValidModelMessages(prompt: AiSdkPrompt): void {
  for (const [index, message] of [...(prompt.instructions ?? []), ...prompt.messages].entries()) {
    const result = modelMessageSchema.safeParse(message);
    expect(result.success, `message ${index}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
  }
}

describe("AI SDK", () => {
  it("round-trips a history with every feature, dropping only the marker", () => {
    const history = sampleHistory({ reasoning });
    expect(roundTrip(history)).toEqual(withoutMarkers(history));
  });

  it("produces messages that pass the AI SDK's own modelMessageSchema", () => {
    expectValidModelMessages(toAiSdk(sampleHistory({ reasoning })));
  });

  it("maps tool results to the output union and reasoning material to providerOptions", () => {
    const { instructions, messages } = toAiSdk(sampleHistory({ reasoning }));
    expect(instructions).toEqual([{ role: "system", content: "You are a careful coding agent." }]);
    expect(messages[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_build",
          toolName: "bash",
          output: { type: "error-text", value: "src/app.ts(3,1): error TS2304: Cannot find name 'x'." },
        },
        {
          type: "tool-result",
          toolCallId: "call_page",
          toolName: "screenshot",
          output: {
            type: "content",
            value: [
              { type: "text", text: '{"status":200,"title":"Home","links":["/a","/b"]}' },
              { type: "file", data: { type: "data", data: expect.any(String) }, mediaType: "image/png" },
            ],
          },
        },
      ],
    });
    expect(messages[1]!.content.slice(0, 3)).toEqual([
      {
        type: "reasoning",
        text: "Check the build.",
        providerOptions: { anthropic: { signature: "RXVnQ2lnRUFTRkE=" } },
      },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "cmVkYWN0ZWQ=" } } },
      {
        type: "reasoning",
        text: "**Plan**",
        providerOptions: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAA" } },
      },
    ]);
  });

  it("is accepted by generateText, which hands the model the same conversation", async () => {
    const model = new MockLanguageModelV4({
      // Declaring every URL supported keeps the SDK from downloading the sample's image URL.
      supportedUrls: { "*/*": [/.*/] },
      doGenerate: {
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      },
    });
    await generateText({ model, ...toAiSdk(sampleHistory({ reasoning })) });
    const prompt = (model.doGenerateCalls[0] as LanguageModelV4CallOptions).prompt;
    expect(prompt.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "user",
      "assistant",
    ]);
    const assistant = prompt[2]!;
    expect(assistant.role === "assistant" && assistant.content[0]).toMatchObject({
      type: "reasoning",
      text: "Check the build.",
      providerOptions: { anthropic: { signature: "RXVnQ2lnRUFTRkE=" } },
    });
    const tool = prompt[3]!;
    expect(
      tool.role === "tool" && tool.content.map((part) => part.type === "tool-result" && part.toolCallId),
    ).toEqual(["call_build", "call_page"]);
  });

  it("keeps a realistic payload stable through ctxkit", () => {
    const payload: AiSdkPrompt = {
      instructions: [{ role: "system", content: "You are a helpful assistant." }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Describe the chart and the report." },
            {
              type: "file",
              mediaType: "image/png",
              data: { type: "url", url: new URL("https://example.com/chart.png") },
            },
            {
              type: "file",
              mediaType: "application/pdf",
              filename: "q3.pdf",
              data: { type: "data", data: "JVBERi0x" },
            },
          ],
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
        },
        {
          role: "assistant",
          content: [
            {
              type: "reasoning",
              text: "Need the numbers first.",
              providerOptions: { google: { thoughtSignature: "Q2lR" } },
            },
            {
              type: "tool-call",
              toolCallId: "call_1",
              toolName: "readSheet",
              input: { sheet: "Q3" },
              providerOptions: { google: { thoughtSignature: "Q2lRQmNz" } },
            },
            { type: "tool-call", toolCallId: "call_2", toolName: "readSheet", input: { sheet: "Q4" } },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_1",
              toolName: "readSheet",
              output: { type: "json", value: { revenue: 12 } },
            },
            {
              type: "tool-result",
              toolCallId: "call_2",
              toolName: "readSheet",
              output: { type: "error-text", value: "no such sheet" },
            },
          ],
        },
        { role: "assistant", content: [{ type: "text", text: "Q3 revenue was 12; Q4 is missing." }] },
      ],
    };
    const messages = fromAiSdk(payload, { ...fixedImportOptions(), signatureProvider: "google" });
    expect(messages[2]!.content.slice(0, 2)).toEqual([
      { type: "reasoning", text: "Need the numbers first.", signature: "Q2lR" },
      {
        type: "reasoning",
        text: "",
        providerData: { partOptions: { google: { thoughtSignature: "Q2lRQmNz" } } },
      },
    ]);
    expect(messages[4]!.content[0]).toMatchObject({ content: "no such sheet", isError: true });
    expect(toAiSdk(messages, { signatureProvider: "google" })).toEqual(payload);
  });

  it("keeps tool content outputs part for part: order of text and files, and text parts", () => {
    const file = {
      type: "file" as const,
      mediaType: "image/png",
      data: { type: "url" as const, url: new URL("https://x.test/shot.png") },
    };
    const outputs = [
      [file, { type: "text" as const, text: "the page" }],
      [{ type: "text" as const, text: "before" }, file, { type: "text" as const, text: "after" }],
      [
        { type: "text" as const, text: "one" },
        { type: "text" as const, text: "two" },
      ],
    ];
    const payload: AiSdkPrompt = {
      messages: [
        {
          role: "assistant",
          content: outputs.map((_, at) => ({
            type: "tool-call" as const,
            toolCallId: `c${at}`,
            toolName: "shot",
            input: {},
          })),
        },
        {
          role: "tool",
          content: outputs.map((value, at) => ({
            type: "tool-result" as const,
            toolCallId: `c${at}`,
            toolName: "shot",
            output: { type: "content" as const, value },
          })),
        },
      ],
    };
    const messages = fromAiSdk(payload, fixedImportOptions());
    expect(messages[1]!.content[0]).toMatchObject({ content: "the page", attachments: [{ type: "image" }] });
    expect(toAiSdk(messages)).toEqual(payload);
    expect(toAiSdk(storedForm(messages))).toEqual(payload);
  });

  it("puts an image's detail level where the AI SDK's OpenAI provider reads it, and reads it back", () => {
    const payload: AiSdkPrompt = {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            {
              type: "file",
              mediaType: "image/png",
              data: { type: "url", url: new URL("https://x.test/cat.png") },
              providerOptions: { openai: { imageDetail: "low" } },
            },
          ],
        },
      ],
    };
    const messages = fromAiSdk(payload, fixedImportOptions());
    expect(messages[0]!.content[1]).toMatchObject({ type: "image", detail: "low" });
    expect(toAiSdk(messages)).toEqual(payload);
  });

  it("keeps a content list of one text part a list, and an assistant's string content a string", () => {
    const payload: AiSdkPrompt = {
      messages: [
        { role: "user", content: [{ type: "text", text: "List the files." }] },
        { role: "assistant", content: "Which folder?" },
        { role: "user", content: "src" },
        { role: "assistant", content: [{ type: "text", text: "Listing src." }] },
        { role: "user", content: [{ type: "text", text: "Thanks." }], providerOptions: { x: { y: 1 } } },
        { role: "assistant", content: "" },
      ],
    };
    const messages = fromAiSdk(payload, fixedImportOptions());
    expect(toAiSdk(messages)).toEqual(payload);
    expect(toAiSdk(storedForm(messages))).toEqual(payload);
  });

  it("keeps an image's detail level in tool output content, as in user content", () => {
    const shot = {
      type: "file" as const,
      mediaType: "image/png",
      data: { type: "url" as const, url: new URL("https://x.test/shot.png") },
      providerOptions: { openai: { imageDetail: "high" } },
    };
    const payload: AiSdkPrompt = {
      messages: [
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
              output: { type: "content", value: [{ type: "text", text: "taken" }, shot] },
            },
          ],
        },
      ],
    };
    const messages = fromAiSdk(payload, fixedImportOptions());
    expect(messages[1]!.content[0]).toMatchObject({ attachments: [{ type: "image", detail: "high" }] });
    expect(toAiSdk(messages)).toEqual(payload);
    expect(toAiSdk(storedForm(messages))).toEqual(payload);
    // The deprecated tool-output image parts carry it the same way.
    const deprecated = fromAiSdk(
      [
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
                  {
                    type: "image-url",
                    url: "https://x.test/shot.png",
                    providerOptions: { openai: { imageDetail: "low" } },
                  },
                ],
              },
            },
          ],
        },
      ],
      fixedImportOptions(),
    );
    expect(deprecated[0]!.content[0]).toMatchObject({ attachments: [{ type: "image", detail: "low" }] });
  });

  it("adds an assistant image's carried provider options to its detail level instead of replacing it", () => {
    const [message] = buildMessages(
      [
        {
          role: "assistant",
          content: [
            partOptionsCarrier({ google: { thoughtSignature: "c2ln" } }),
            { type: "image", mediaType: "image/png", url: "https://x.test/chart.png", detail: "high" },
          ],
        },
      ],
      fixedImportOptions(),
    );
    expect(toAiSdk([message!]).messages[0]!.content).toEqual([
      {
        type: "file",
        mediaType: "image/png",
        data: { type: "url", url: new URL("https://x.test/chart.png") },
        providerOptions: { google: { thoughtSignature: "c2ln" }, openai: { imageDetail: "high" } },
      },
    ]);
  });

  it("hands the AI SDK the detail of images imported from OpenAI, in user and tool output content", () => {
    const detailOf = (part: unknown): unknown =>
      (part as { providerOptions?: { openai?: { imageDetail?: unknown } } }).providerOptions?.openai
        ?.imageDetail;
    const chat = fromOpenAIChat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "https://x.test/cat.png", detail: "low" } },
          ],
        },
      ],
      fixedImportOptions(),
    );
    const user = toAiSdk(chat).messages[0]!;
    expect(Array.isArray(user.content) && detailOf(user.content[1])).toBe("low");
    const responses = fromOpenAIResponses(
      [
        { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "c1",
          output: [
            { type: "input_text", text: "taken" },
            { type: "input_image", detail: "high", image_url: "https://x.test/shot.png" },
          ],
        },
      ],
      fixedImportOptions(),
    );
    const tool = toAiSdk(responses).messages[1]!;
    const output = tool.role === "tool" && tool.content[0]?.type === "tool-result" && tool.content[0].output;
    expect(output && output.type === "content" && detailOf(output.value[1])).toBe("high");
  });

  it("carries a Gemini function-call signature to where the AI SDK Google provider reads it", () => {
    const messages = fromGemini(
      {
        contents: [
          { role: "user", parts: [{ text: "ls" }] },
          {
            role: "model",
            parts: [{ functionCall: { name: "ls", args: {}, id: "c1" }, thoughtSignature: "c2ln" }],
          },
        ],
      },
      fixedImportOptions(),
    );
    expect(toAiSdk(messages).messages[1]).toEqual({
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "ls",
          input: {},
          providerOptions: { google: { thoughtSignature: "c2ln" } },
        },
      ],
    });
  });

  it("rejects bad input with a ValidationError naming the index and field", () => {
    const bad = [
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "txt", value: "" } },
        ],
      },
    ];
    expect(() => fromAiSdk(bad)).toThrow(ValidationError);
    expect(() => fromAiSdk(bad)).toThrow(/messages\[0\]\.content\[0\]\.output\.type/);
  });

  it("keeps provider-executed tool calls and results, custom and reasoning file parts opaque, in place", () => {
    const png = Buffer.from("89504e47", "hex");
    const assistant = {
      role: "assistant" as const,
      content: [
        {
          type: "reasoning" as const,
          text: "Search first.",
          providerOptions: { anthropic: { signature: "U0lH" } },
        },
        {
          type: "tool-call" as const,
          toolCallId: "ws1",
          toolName: "web_search",
          input: { query: "ctxkit" },
          providerExecuted: true,
          providerOptions: undefined,
        },
        {
          type: "tool-result" as const,
          toolCallId: "ws1",
          toolName: "web_search",
          output: {
            type: "json" as const,
            value: [
              { type: "web_search_result", url: "https://a.test", encryptedContent: "RQ==", pageAge: null },
            ],
          },
        },
        {
          type: "custom" as const,
          kind: "openai.compaction" as const,
          providerOptions: { openai: { itemId: "cmp_1" } },
        },
        { type: "reasoning-file" as const, data: png, mediaType: "image/png" },
        { type: "reasoning-file" as const, data: new URL("https://a.test/t.png"), mediaType: "image/png" },
        { type: "text" as const, text: "Found it." },
        { type: "tool-call" as const, toolCallId: "c1", toolName: "read_file", input: { path: "a.ts" } },
      ],
    };
    const imported = fromAiSdk([{ role: "user", content: "search" }, assistant], fixedImportOptions());
    expect(imported[1]!.content.map((block) => block.type)).toEqual([
      "reasoning",
      "opaque",
      "opaque",
      "opaque",
      "opaque",
      "opaque",
      "text",
      "tool-call",
    ]);
    expect(imported[1]!.content[1]).toEqual({
      type: "opaque",
      provider: "ai-sdk",
      data: {
        type: "tool-call",
        toolCallId: "ws1",
        toolName: "web_search",
        input: { query: "ctxkit" },
        providerExecuted: true,
      },
    });
    const exported = toAiSdk(imported);
    expectValidModelMessages(exported);
    const { providerOptions: _undefined, ...call } = assistant.content[1]!;
    expect(exported.messages[1]).toEqual({
      role: "assistant",
      content: [
        assistant.content[0],
        call,
        assistant.content[2],
        assistant.content[3],
        {
          type: "reasoning-file",
          data: { type: "data", data: png.toString("base64") },
          mediaType: "image/png",
        },
        {
          type: "reasoning-file",
          data: { type: "url", url: new URL("https://a.test/t.png") },
          mediaType: "image/png",
        },
        assistant.content[6],
        assistant.content[7],
      ],
    });
    // Stored, and read back the same.
    expect(fromAiSdk(exported, fixedImportOptions())).toEqual(imported);
    // Other formats leave the AI SDK's parts out.
    expect(JSON.stringify(toAnthropic(imported))).not.toContain("web_search");
  });

  it("refuses a provider-executed tool result whose output is not JSON", () => {
    const bytes = [
      {
        role: "assistant",
        content: [
          {
            type: "tool-result",
            toolCallId: "ws1",
            toolName: "web",
            output: {
              type: "content",
              value: [
                { type: "file", data: { type: "data", data: new Uint8Array([1]) }, mediaType: "image/png" },
              ],
            },
          },
        ],
      },
    ];
    expect(() => fromAiSdk(bytes)).toThrow(/kept as JSON/);
  });

  it("round-trips random valid histories, and every payload passes modelMessageSchema", () => {
    const reasoningKinds = fc.oneof(signedReasoning, openAIReasoning);
    fc.assert(
      fc.property(
        historyArbitrary({
          reasoning: reasoningKinds,
          stringToolInputs: true,
          imageDetails: ["auto", "low", "high", "original"],
        }),
        (history) => {
          const payload = toAiSdk(history);
          expectValidModelMessages(payload);
          expect(fromAiSdk(payload, fixedImportOptions())).toEqual(history);
        },
      ),
      { numRuns: 150 },
    );
  });
});
