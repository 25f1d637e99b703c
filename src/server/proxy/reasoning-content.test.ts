import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAIServer, type FakeOpenAIRequest } from "../../test/fake-openai-server.ts";
import type { FakeOpenAIResponse } from "../../test/fake-openai-responses.ts";
import { startHarness, type ServerHarness } from "../test-support/server-harness.test-helpers.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const tools = [
  {
    type: "function",
    function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } },
  },
];

/**
 * DeepSeek's thinking mode: every assistant message with tool calls must carry its `reasoning_content`
 * ("The reasoning_content in the thinking mode must be passed back to the API", 400, otherwise).
 */
function deepSeekLike(script: FakeOpenAIResponse[]) {
  return (request: FakeOpenAIRequest): FakeOpenAIResponse => {
    const missing = (request.body.messages ?? []).some(
      (message) =>
        message.role === "assistant" &&
        Array.isArray(message["tool_calls"]) &&
        typeof message["reasoning_content"] !== "string",
    );
    if (missing) {
      return {
        status: 400,
        error: {
          message: "The reasoning_content in the thinking mode must be passed back to the API.",
          type: "invalid_request_error",
        },
      };
    }
    return script.shift() ?? "done";
  };
}

/** A harness whose proxy forwards to a DeepSeek-like scripted upstream with `options`. */
async function setup(options: Partial<UpstreamOptions> = {}) {
  const upstream = await startFakeOpenAIServer({
    responses: deepSeekLike([
      {
        reasoning: "I should read the file",
        toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.ts" } }],
      },
      { reasoning: "It exports main", text: "a.ts exports main()" },
      { reasoning: "Nothing to call", text: "Yes." },
    ]),
  });
  closers.push(() => upstream.close());
  const harness = await startHarness({
    server: { upstream: { baseURL: upstream.url, model: "deepseek-v4-pro", ...options } },
  });
  closers.push(() => harness.close());
  return { harness, upstream };
}

const post = (harness: ServerHarness, messages: unknown[]) =>
  harness.call("/v1/chat/completions", {
    method: "POST",
    headers: { "x-ctxkit-session": "ds-1" },
    json: { model: "deepseek-v4-pro", tools, messages },
  });

describe("reasoning sent back upstream in stateful chat (DeepSeek's thinking-mode tool loops)", () => {
  it("the tool-calling turn's reasoning goes back as reasoning_content, on every later request; other reasoning does not", async () => {
    const { harness, upstream } = await setup();
    expect((await post(harness, [{ role: "user", content: "What does a.ts export?" }])).status).toBe(200);
    const second = await post(harness, [
      { role: "tool", tool_call_id: "call_1", content: "export function main() {}" },
    ]);
    expect(second.status).toBe(200);
    const third = await post(harness, [{ role: "user", content: "Is that all?" }]);
    expect(third.status).toBe(200);
    const assistants = (index: number) =>
      (upstream.requests[index]?.body.messages ?? [])
        .filter((message) => message.role === "assistant")
        .map((message) => message["reasoning_content"]);
    expect(assistants(1)).toEqual(["I should read the file"]);
    // The final answer of the tool loop made no call: its reasoning is left out (DeepSeek ignores it).
    expect(assistants(2)).toEqual(["I should read the file", undefined]);
  });

  it("reasoningContent: false sends none (servers that refuse the field)", async () => {
    const { harness, upstream } = await setup({ reasoningContent: false });
    await post(harness, [{ role: "user", content: "What does a.ts export?" }]);
    const second = await post(harness, [
      { role: "tool", tool_call_id: "call_1", content: "export function main() {}" },
    ]);
    expect(second.status).toBe(400);
    const assistant = upstream.requests
      .at(-1)
      ?.body.messages?.find((message) => message.role === "assistant");
    expect(assistant?.["tool_calls"]).toBeDefined();
    expect(assistant).not.toHaveProperty("reasoning_content");
  });
});
