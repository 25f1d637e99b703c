import { describe, expect, it } from "vitest";
import { AnthropicStreamAccumulator, replyFromAnthropic } from "./anthropic-reply.ts";

const search = {
  type: "server_tool_use",
  id: "srvtoolu_1",
  name: "web_search",
  input: { query: "paris weather" },
};
const results = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content: [{ type: "web_search_result", url: "https://x", title: "t", encrypted_content: "e" }],
};

describe("replyFromAnthropic", () => {
  it("keeps a server tool's call and result as opaque blocks, in place", () => {
    const reply = replyFromAnthropic({
      content: [search, results, { type: "text", text: "Sunny." }],
      stop_reason: "end_turn",
    });
    expect(reply.content).toEqual([
      { type: "opaque", provider: "anthropic", data: search },
      { type: "opaque", provider: "anthropic", data: results },
      { type: "text", text: "Sunny." },
    ]);
  });

  it("rebuilds them from a stream: the call's input from its JSON deltas, the result whole", () => {
    const accumulator = new AnthropicStreamAccumulator();
    const events = [
      {
        type: "message_start",
        message: { id: "msg_1", model: "m", content: [], usage: { input_tokens: 5 } },
      },
      { type: "content_block_start", index: 0, content_block: { ...search, input: {} } },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"query": ' },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '"paris weather"}' },
      },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: results },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Sunny." } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } },
    ];
    for (const event of events) accumulator.push(event);
    expect(replyFromAnthropic(accumulator.message()).content).toEqual([
      { type: "opaque", provider: "anthropic", data: search },
      { type: "opaque", provider: "anthropic", data: results },
      { type: "text", text: "Sunny." },
    ]);
  });
});
