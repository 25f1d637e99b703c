import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import { renderTranscriptMessage } from "../../../summarize/render-transcript.ts";
import { createEstimatingCounter } from "../../../tokens/estimating-counter.ts";
import { toAiSdk } from "../ai-sdk/to-ai-sdk.ts";
import { toGemini } from "../gemini/to-gemini.ts";
import { toOpenAIChat } from "../openai-chat/to-openai-chat.ts";
import { toOpenAIResponses } from "../openai-responses/to-openai-responses.ts";
import { fixedImportOptions, storedForm } from "../test-support/index.ts";
import { fromAnthropic } from "./from-anthropic.ts";
import { toAnthropic } from "./to-anthropic.ts";

/** A conversation that used Anthropic's server tools, a search result, a content document and tool references. */
const payload = {
  messages: [
    {
      role: "user",
      content: [
        {
          type: "document",
          source: { type: "content", content: [{ type: "text", text: "Chapter 1" }] },
          citations: { enabled: true },
        },
        {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "The grass is green." },
          title: "Notes",
          citations: { enabled: true },
          context: "Field notes",
        },
        { type: "text", text: "Check the weather, then run the numbers." },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Searching." },
        {
          type: "server_tool_use",
          id: "srvtoolu_1",
          name: "web_search",
          input: { query: "paris weather" },
          caller: { type: "direct" },
        },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_1",
          content: [
            {
              type: "web_search_result",
              url: "https://x",
              title: "t",
              encrypted_content: "e",
              page_age: null,
            },
          ],
        },
        { type: "server_tool_use", id: "srvtoolu_2", name: "code_execution", input: { code: "print(2+2)" } },
        {
          type: "code_execution_tool_result",
          tool_use_id: "srvtoolu_2",
          content: { type: "code_execution_result", stdout: "4\n", stderr: "", return_code: 0, content: [] },
        },
        { type: "mcp_tool_use", id: "mcptoolu_1", name: "lookup", server_name: "db", input: { id: 7 } },
        {
          type: "mcp_tool_result",
          tool_use_id: "mcptoolu_1",
          is_error: false,
          content: [{ type: "text", text: "row 7" }],
        },
        { type: "text", text: "It is sunny; 2 + 2 = 4." },
        { type: "tool_use", id: "toolu_1", name: "search_docs", input: { q: "rain" } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [
            { type: "text", text: "Two hits:" },
            {
              type: "search_result",
              source: "https://docs/a",
              title: "A",
              content: [{ type: "text", text: "a" }],
            },
            { type: "tool_reference", tool_name: "get_weather" },
          ],
        },
        { type: "container_upload", file_id: "file_1" },
      ],
    },
  ],
};

describe("Anthropic blocks ctxkit does not model (server tools, search results, …)", () => {
  it("keeps them as opaque blocks in place (a document's citations setting too), through the store, and sends them back byte for byte", () => {
    const messages = fromAnthropic(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(messages[0]!.content.map((block) => block.type)).toEqual(["opaque", "file", "text"]);
    expect(messages[1]!.content.map((block) => block.type)).toEqual([
      "text",
      "opaque",
      "opaque",
      "opaque",
      "opaque",
      "opaque",
      "opaque",
      "text",
      "tool-call",
    ]);
    expect(messages[1]!.content[1]).toEqual({
      type: "opaque",
      provider: "anthropic",
      data: payload.messages[1]!.content[1],
    });
    expect(messages[3]!.content).toEqual([
      { type: "opaque", provider: "anthropic", data: { type: "container_upload", file_id: "file_1" } },
    ]);
    expect(JSON.stringify(toAnthropic(messages))).toBe(JSON.stringify(payload));
    expect(JSON.stringify(toAnthropic(storedForm(messages)))).toBe(JSON.stringify(payload));
  });

  it("leaves out a client's cache_control on them: ctxkit places its own breakpoints", () => {
    const marked = {
      messages: [
        { role: "user", content: "Search." },
        {
          role: "assistant",
          content: [
            {
              type: "server_tool_use",
              id: "s1",
              name: "web_search",
              input: {},
              cache_control: { type: "ephemeral" },
            },
            { type: "web_search_tool_result", tool_use_id: "s1", content: [] },
          ],
        },
      ],
    };
    const [, reply] = fromAnthropic(marked, fixedImportOptions());
    expect(reply!.content[0]).toEqual({
      type: "opaque",
      provider: "anthropic",
      data: { type: "server_tool_use", id: "s1", name: "web_search", input: {} },
    });
  });

  it("still refuses a malformed block of a type it models, naming the field", () => {
    const bad = { messages: [{ role: "user", content: [{ type: "image", source: { type: "base64" } }] }] };
    expect(() => fromAnthropic(bad)).toThrow(ValidationError);
    expect(() => fromAnthropic(bad)).toThrow(/payload\.messages\[0\]\.content\[0\]\.source/);
  });

  it("counts them as text, and shows them to a summarizer", () => {
    const messages = fromAnthropic(payload, fixedImportOptions());
    const counter = createEstimatingCounter();
    const reply = messages[1]!;
    const textOnly = { ...reply, content: reply.content.filter((block) => block.type !== "opaque") };
    const opaqueJson = reply.content.flatMap((block) =>
      block.type === "opaque" ? [JSON.stringify(block.data)] : [],
    );
    expect(counter.countMessage(reply) - counter.countMessage(textOnly)).toBeGreaterThanOrEqual(
      counter.countText(opaqueJson.join("")) - opaqueJson.length,
    );
    const transcript = renderTranscriptMessage(reply, { maxToolOutputChars: 8_000, headShare: 0.2 });
    expect(transcript).toContain("[anthropic server_tool_use web_search]");
    expect(transcript).toContain("paris weather");
  });

  it("is left out by the other formats, with a message that held nothing else", () => {
    const messages = fromAnthropic(payload, fixedImportOptions());
    const onlySearch = {
      ...messages[1]!,
      id: "msg_search",
      content: messages[1]!.content.slice(1, 3),
    };
    const history = [...messages.slice(0, 1), onlySearch, ...messages.slice(1)];
    const chat = toOpenAIChat(history);
    // The search-only reply and the upload-only user message are gone; the rest is there without the blocks.
    expect(chat.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(JSON.stringify(chat)).not.toContain("srvtoolu_1");
    expect(JSON.stringify(toOpenAIResponses(history))).not.toContain("srvtoolu_1");
    const gemini = toGemini(history);
    expect(gemini.contents.map((content) => content.role)).toEqual(["user", "model", "user"]);
    expect(JSON.stringify(gemini)).not.toContain("srvtoolu_1");
    expect(JSON.stringify(toAiSdk(history))).not.toContain("srvtoolu_1");
    // Anthropic sends its own back, the search-only reply included.
    expect(toAnthropic(history).messages[1]!.content).toEqual(payload.messages[1]!.content.slice(1, 3));
  });
});
