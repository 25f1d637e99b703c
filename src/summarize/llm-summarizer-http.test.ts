import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterEach, describe, expect, it } from "vitest";
import { contextLengthExceeded, rateLimited } from "../test/fake-openai-responses.ts";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../test/fake-openai-server.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { createLlmSummarizer } from "./llm-summarizer.ts";

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function modelOn(responses: Parameters<typeof startFakeOpenAIServer>[0]["responses"]) {
  const server = await startFakeOpenAIServer({ responses });
  servers.push(server);
  const provider = createOpenAICompatible({ name: "fake", baseURL: server.url, apiKey: "local-key" });
  return { server, model: provider.chatModel("summary-model") };
}

const messages = new HistoryBuilder()
  .user("Add retries to the HTTP client in src/http/client.ts. Never retry POST requests.")
  .step([
    { name: "Read", input: { file_path: "src/http/client.ts" }, output: "export async function send() {}" },
  ])
  .reply("Added retries for GET and HEAD only.")
  .build();

const SNAPSHOT =
  "## Goal & instructions\n- Add retries to the HTTP client in src/http/client.ts.\n\n## Next steps\n- tests";

describe("createLlmSummarizer over HTTP (@ai-sdk/openai-compatible → fake OpenAI server)", () => {
  it("sends a system and a user message with no tools and returns the model's snapshot", async () => {
    const { server, model } = await modelOn([
      { text: SNAPSHOT, usage: { promptTokens: 900, completionTokens: 40 } },
    ]);
    const summarizer = createLlmSummarizer({ model, maxRetries: 0 });
    expect(summarizer.name).toBe("llm:fake.chat:summary-model");
    const summary = await summarizer.summarize({ messages, maxTokens: 1_200, focus: "retry policy" });
    expect(summary).toBe(SNAPSHOT);
    expect(server.requests).toHaveLength(1);
    const { body, headers, path } = server.requests[0]!;
    expect(path).toBe("/v1/chat/completions");
    expect(headers.authorization).toBe("Bearer local-key");
    expect(body.model).toBe("summary-model");
    expect(body.tools).toBeUndefined();
    expect(body["max_tokens"]).toBe(1_200);
    expect(body.messages?.map((message) => message.role)).toEqual(["system", "user"]);
    const prompt = String(body.messages?.[1]?.content);
    expect(prompt).toContain("Never retry POST requests.");
    expect(prompt).toContain('→ called Read {"file_path":"src/http/client.ts"}');
    expect(prompt).toContain('focus on: "retry policy"');
  });

  it("verifies the draft with a second request", async () => {
    const { server, model } = await modelOn(["## Goal & instructions\n- draft", SNAPSHOT]);
    const summary = await createLlmSummarizer({ model, verify: true, maxRetries: 0 }).summarize({
      messages,
      maxTokens: 800,
    });
    expect(summary).toBe(SNAPSHOT);
    expect(server.requests).toHaveLength(2);
    expect(String(server.requests[1]!.body.messages?.[1]?.content)).toContain("<draft_summary>");
  });

  it("retries a 429 through the AI SDK and succeeds", async () => {
    const { server, model } = await modelOn([rateLimited({ retryAfterSeconds: 0 }), SNAPSHOT]);
    const summary = await createLlmSummarizer({ model, maxRetries: 1 }).summarize({
      messages,
      maxTokens: 500,
    });
    expect(summary).toBe(SNAPSHOT);
    expect(server.requests).toHaveLength(2);
  });

  it("falls back to the extractive summary when the provider rejects the request", async () => {
    const { server, model } = await modelOn([contextLengthExceeded({ maxTokens: 8_192 })]);
    const errors: unknown[] = [];
    const summary = await createLlmSummarizer({
      model,
      maxRetries: 0,
      onFallback: (notice) => errors.push(notice.error),
    }).summarize({ messages, maxTokens: 800 });
    expect(server.requests).toHaveLength(1);
    expect(summary).toContain(
      "- Add retries to the HTTP client in src/http/client.ts. Never retry POST requests.",
    );
    expect(summary).toContain("Read(src/http/client.ts)");
    expect(String(errors[0])).toContain("maximum context length is 8192 tokens");
  });

  it("gives up on a slow server after timeoutMs and falls back", async () => {
    const { model } = await modelOn([{ text: SNAPSHOT, delayMs: 5_000 }]);
    const notices: boolean[] = [];
    const summary = await createLlmSummarizer({
      model,
      maxRetries: 0,
      timeoutMs: 200,
      onFallback: (notice) => notices.push(notice.usedMarker),
    }).summarize({ messages, maxTokens: 800 });
    expect(summary).toContain("## Goal & instructions");
    expect(notices).toEqual([false]);
  });
});
