import fc from "fast-check";
import type {
  ChatCompletionContentPartImage,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { describe, expect, expectTypeOf, it } from "vitest";
import { UnsupportedError, ValidationError } from "../../../errors/errors.ts";
import type { Message } from "../../../model/message.ts";
import { buildMessages } from "../message-builder.ts";
import {
  fixedImportOptions,
  historyArbitrary,
  sampleHistory,
  signedReasoning,
  storedForm,
  withoutMarkers,
} from "../test-support/index.ts";
import { fromOpenAIChat } from "./from-openai-chat.ts";
import type { OpenAIChatImageDetail, OpenAIChatMessage } from "./openai-chat-message.ts";
import { toOpenAIChat, toOpenAIChatJson } from "./to-openai-chat.ts";
import { toOpenAIResponses } from "../openai-responses/index.ts";

const signed = [{ type: "reasoning", text: "The build log first.", signature: "c2lnbmF0dXJl" }] as const;

function roundTrip(messages: readonly Message[]): Message[] {
  return fromOpenAIChat(toOpenAIChat(messages), fixedImportOptions());
}

describe("OpenAI chat", () => {
  it("round-trips a history with every feature, dropping only the marker", () => {
    const history = sampleHistory({ reasoning: signed });
    expect(roundTrip(history)).toEqual(withoutMarkers(history));
  });

  it("produces messages the official OpenAI SDK types accept", () => {
    const payload: ChatCompletionMessageParam[] = toOpenAIChat(sampleHistory({ reasoning: signed }));
    expect(payload.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "user",
      "assistant",
      "user",
      "user",
      "assistant",
    ]);
  });

  it("emits only image detail levels that openai 6.x and 7.x both accept", () => {
    // openai 6.x types `detail` as "auto" | "low" | "high"; 7.x adds "original". A wider type here made the
    // README's quick start fail to type-check with openai 6.
    const accepted: readonly OpenAIChatImageDetail[] = ["auto", "low", "high"];
    expectTypeOf<OpenAIChatImageDetail>().toEqualTypeOf<"auto" | "low" | "high">();
    expectTypeOf<OpenAIChatImageDetail>().toExtend<
      NonNullable<ChatCompletionContentPartImage["image_url"]["detail"]>
    >();
    fc.assert(
      fc.property(historyArbitrary({ reasoning: signedReasoning }), (history) => {
        for (const message of toOpenAIChat(history)) {
          if (message.role !== "user" || typeof message.content === "string") continue;
          for (const part of message.content) {
            if (part.type !== "image_url") continue;
            const detail = part.image_url.detail;
            expect(detail === undefined || accepted.includes(detail)).toBe(true);
          }
        }
      }),
      { numRuns: 50 },
    );
  });

  it("marks failed results, serialises JSON and moves tool attachments into a note-opened user message", () => {
    const payload = toOpenAIChat(sampleHistory({ reasoning: signed }));
    expect(payload[3]).toEqual({
      role: "tool",
      tool_call_id: "call_build",
      content: "[tool error] src/app.ts(3,1): error TS2304: Cannot find name 'x'.",
    });
    expect(payload[4]).toEqual({
      role: "tool",
      tool_call_id: "call_page",
      content: '{"status":200,"title":"Home","links":["/a","/b"]}',
    });
    expect(payload[5]).toMatchObject({
      role: "user",
      content: [{ type: "text", text: "[attachments of tool call call_page]" }, { type: "image_url" }],
    });
    expect(payload[2]).toMatchObject({
      reasoning_content: "The build log first.",
      reasoning_details: [
        { type: "reasoning.text", text: "The build log first.", signature: "c2lnbmF0dXJl" },
      ],
    });
  });

  it("sends a summary as user text in the summary envelope and never sends markers", () => {
    const payload = toOpenAIChat(sampleHistory({ reasoning: [] }));
    const summary = payload.find(
      (message) =>
        message.role === "user" && typeof message.content === "string" && message.content.includes("Summary"),
    );
    expect(summary?.content).toBe(
      "<conversation-summary>\n[Summary of 6 earlier messages]\nThe build fails in src/app.ts.\n</conversation-summary>",
    );
    expect(JSON.stringify(payload)).not.toContain("compaction boundary");
  });

  it("reasoning: tool-calls keeps reasoning_content on assistant messages that call tools only; omit drops it all", () => {
    const payload: OpenAIChatMessage[] = [
      { role: "user", content: "Read a.ts" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Read it first.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "export {}" },
      { role: "assistant", content: "Nothing.", reasoning_content: "Empty module." },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    const reasoningOf = (options: Parameters<typeof toOpenAIChat>[1]) =>
      toOpenAIChat(messages, options)
        .filter((message) => message.role === "assistant")
        .map((message) => ("reasoning_content" in message ? message.reasoning_content : undefined));
    expect(reasoningOf({})).toEqual(["Read it first.", "Empty module."]);
    expect(reasoningOf({ reasoning: "tool-calls" })).toEqual(["Read it first.", undefined]);
    expect(reasoningOf({ reasoning: "omit" })).toEqual([undefined, undefined]);
  });

  it("keeps a realistic payload stable through ctxkit", () => {
    const payload: OpenAIChatMessage[] = [
      { role: "developer", content: "Answer tersely." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this image?" },
          { type: "image_url", image_url: { url: "https://upload.example.org/cat.png" } },
          { type: "file", file: { file_id: "file-abc123", filename: "notes.pdf" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Need the weather in two cities.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          {
            id: "call_3",
            type: "custom",
            custom: { name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"temp":21,"unit":"C"}' },
      { role: "tool", tool_call_id: "call_2", content: "[tool error] upstream timeout" },
      { role: "tool", tool_call_id: "call_3", content: "Done" },
      { role: "assistant", content: "Paris is 21°C; Oslo did not answer." },
      { role: "user", content: "Thanks" },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    expect(toOpenAIChat(messages)).toEqual(payload);
    expect(messages.map((message) => message.turn)).toEqual([0, 1, 1, 1, 1, 1, 1, 2]);
    expect(messages[3]!.content[0]).toEqual({
      type: "tool-result",
      callId: "call_1",
      toolName: "get_weather",
      content: { temp: 21, unit: "C" },
    });
    expect(messages[4]!.content[0]).toMatchObject({ content: "upstream timeout", isError: true });
    expect(messages[1]!.content[2]).toEqual({
      type: "file",
      mediaType: "application/pdf",
      url: "provider-file:openai/file-abc123",
      filename: "notes.pdf",
    });
  });

  it("keeps image detail levels, in user messages and in tool attachments, through ctxkit and its store", () => {
    const payload: OpenAIChatMessage[] = [
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
          { type: "image_url", image_url: { url: "https://example.com/b.png", detail: "auto" } },
          { type: "image_url", image_url: { url: "https://example.com/c.png" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "shot", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "taken" },
      {
        role: "user",
        content: [
          { type: "text", text: "[attachments of tool call c1]" },
          { type: "image_url", image_url: { url: "https://example.com/shot.png", detail: "low" } },
        ],
      },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    expect(messages[0]!.content[0]).toMatchObject({ type: "image", detail: "low" });
    expect(toOpenAIChat(messages)).toEqual(payload);
    expect(toOpenAIChat(storedForm(messages))).toEqual(payload);
    // Detail goes to the Responses API too, where "auto" is its default.
    expect(toOpenAIResponses(messages)[0]).toMatchObject({
      content: [{ detail: "low" }, { detail: "high" }, { detail: "auto" }, { detail: "auto" }],
    });
  });

  it("keeps refusals, content lists and annotations of assistant messages, through ctxkit and its store", () => {
    const citation = {
      type: "url_citation",
      url_citation: { start_index: 0, end_index: 6, url: "https://example.com/", title: "Example" },
    };
    const payload: OpenAIChatMessage[] = [
      { role: "user", content: "Help me with this." },
      { role: "assistant", content: null, refusal: "I can't help with that." },
      { role: "user", content: "Then cite something." },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Here:" },
          { type: "refusal", refusal: "but not that part." },
        ],
      },
      { role: "user", content: "Once more." },
      { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      { role: "user", content: "A list of one." },
      { role: "assistant", content: [{ type: "text", text: "One part." }] },
      { role: "user", content: "Search." },
      { role: "assistant", content: "Found it.", annotations: [citation] },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    expect(messages[1]!.content).toEqual([{ type: "text", text: "I can't help with that.", refusal: true }]);
    expect(toOpenAIChat(messages)).toEqual(payload);
    expect(toOpenAIChat(storedForm(messages))).toEqual(payload);
    // The Responses API gets refusals as refusal parts.
    expect(toOpenAIResponses(messages.slice(0, 2))[1]).toMatchObject({
      content: [{ type: "refusal", refusal: "I can't help with that." }],
    });
  });

  it("sends a list of one text part back as a list, not a string", () => {
    const payload: OpenAIChatMessage[] = [
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      { role: "assistant", content: "Sunny." },
      { role: "user", content: "Thanks." },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    expect(toOpenAIChat(messages)).toEqual(payload);
    expect(toOpenAIChat(storedForm(messages))).toEqual(payload);
  });

  it("sends a tool message's list of text parts back as that list", () => {
    const payload: OpenAIChatMessage[] = [
      { role: "user", content: "Run both." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "run", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "run", arguments: "{}" } },
        ],
      },
      {
        role: "tool",
        tool_call_id: "c1",
        content: [
          { type: "text", text: "stdout: ok" },
          { type: "text", text: "exit code 0" },
        ],
      },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "[tool error] one part" }] },
    ];
    const messages = fromOpenAIChat(payload, fixedImportOptions());
    expect(messages[3]!.content[0]).toMatchObject({ content: "one part", isError: true });
    expect(toOpenAIChat(messages)).toEqual(payload);
    expect(toOpenAIChat(storedForm(messages))).toEqual(payload);
  });

  it("keeps broken function arguments as text and sends them back as the function call they were", () => {
    for (const text of ['{"a":', "", '"abc"']) {
      const call = {
        role: "assistant" as const,
        content: null,
        tool_calls: [{ id: "c", type: "function" as const, function: { name: "f", arguments: text } }],
      };
      const [message] = fromOpenAIChat([call], fixedImportOptions());
      expect(message!.content).toEqual([
        { type: "tool-call", id: "c", name: "f", input: text, unparsed: true },
      ]);
      expect(toOpenAIChat([message!])).toEqual([call]);
      expect(toOpenAIResponses([message!])).toEqual([
        expect.objectContaining({ type: "function_call", call_id: "c", name: "f", arguments: text }),
      ]);
    }
    // A free-form (custom) tool's call stays one.
    const custom = {
      role: "assistant" as const,
      content: null,
      tool_calls: [
        { id: "p", type: "custom" as const, custom: { name: "apply_patch", input: "*** Begin Patch" } },
      ],
    };
    const [patch] = fromOpenAIChat([custom], fixedImportOptions());
    expect(toOpenAIChat([patch!])).toEqual([custom]);
  });

  it("sends the original arguments text back while it still matches the input", () => {
    const call = (input: string) => ({
      role: "assistant" as const,
      content: null,
      tool_calls: [{ id: "c", type: "function" as const, function: { name: "f", arguments: input } }],
    });
    const [message] = fromOpenAIChat([call('{"path": "a.ts",  "n": 1}')], fixedImportOptions());
    expect(message!.content).toEqual([
      { type: "tool-call", id: "c", name: "f", input: { path: "a.ts", n: 1 } },
    ]);
    expect(toOpenAIChat([message!])).toEqual([call('{"path": "a.ts",  "n": 1}')]);
    // Once the input changes (governance rewrote it), the stale text is not sent.
    const edited = {
      ...message!,
      content: [{ type: "tool-call" as const, id: "c", name: "f", input: { path: "b.ts" } }],
    };
    expect(toOpenAIChat([edited])).toEqual([call('{"path":"b.ts"}')]);
  });

  it("rejects bad input with a ValidationError naming the index and field", () => {
    const bad = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "f" } }],
      },
    ];
    expect(() => fromOpenAIChat(bad)).toThrow(ValidationError);
    expect(() => fromOpenAIChat(bad)).toThrow(/messages\[1\]\.tool_calls\[0\]\.function\.arguments/);
    expect(() => fromOpenAIChat([{ role: "robot", content: "x" }])).toThrow(/messages\[0\]\.role/);
    expect(() => fromOpenAIChat({ messages: [] })).toThrow(ValidationError);
  });

  it("refuses unresolved blob references unless asked for placeholders", () => {
    const [message] = buildMessages(
      [{ role: "user", content: [{ type: "image", mediaType: "image/png", ref: "blob_1" }] }],
      fixedImportOptions(),
    );
    expect(() => toOpenAIChat([message!])).toThrow(UnsupportedError);
    expect(toOpenAIChatJson([message!])).toEqual([
      { role: "user", content: [{ type: "text", text: "[image (image/png) not sent: stored as blob_1]" }] },
    ]);
  });

  it("produces plain JSON for dumps", () => {
    const dump = toOpenAIChatJson(sampleHistory({ reasoning: signed }));
    expect(JSON.parse(JSON.stringify(dump))).toEqual(dump);
  });

  it("round-trips random valid histories", () => {
    const shape = {
      reasoning: signedReasoning,
      stringToolInputs: true,
      imageDetails: ["auto", "low", "high"] as const,
      refusals: true,
    };
    fc.assert(
      fc.property(historyArbitrary(shape), (history) => {
        expect(roundTrip(history)).toEqual(history);
      }),
      { numRuns: 150 },
    );
  });
});
