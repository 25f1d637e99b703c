import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type ServerHarness } from "../test-support/server-harness.test-helpers.ts";
import { preset } from "../../governance/presets.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: Parameters<typeof startHarness>[0]) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  return harness;
}

const post = (harness: ServerHarness, messages: unknown[]) =>
  harness.call("/v1/chat/completions", {
    method: "POST",
    json: { model: "anthropic/claude-sonnet-4.5", messages },
  });

describe("stateless chat: messages governance leaves alone go upstream as the client sent them", () => {
  it("keeps cache_control on parts, name, and Mistral's prefix when nothing is rewritten", async () => {
    const harness = await setup({ responses: () => "ok" });
    const messages = [
      {
        role: "system",
        content: [
          { type: "text", text: "You are a helpful assistant.", cache_control: { type: "ephemeral" } },
        ],
      },
      {
        role: "user",
        name: "alice",
        content: [
          { type: "text", text: "<big document>", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Summarise as JSON." },
        ],
      },
      { role: "assistant", content: "{", prefix: true },
    ];
    const response = await post(harness, messages);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ctxkit-checkpoint")).toBe("false");
    expect(harness.upstream.requests[0]?.body.messages).toEqual(messages);
  });

  it("converts only what governance rewrote: an offloaded output is rewritten, the newest messages keep their fields", async () => {
    const harness = await setup({
      contextWindow: 16_000,
      pipeline: preset("default", {
        cacheAware: false,
        offloadProtectTokens: 500,
        offloadMinPrunableTokens: 1_000,
      }),
      responses: () => "done",
    });
    const messages: Record<string, unknown>[] = [{ role: "user", content: "Read the files." }];
    for (let round = 0; round < 8; round++) {
      const listing = Array.from(
        { length: 120 },
        (_, line) => `f${round} line ${line}: const v${line} = ${line};`,
      );
      messages.push(
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: `call_${round}`,
              type: "function",
              function: { name: "read_file", arguments: JSON.stringify({ path: `f${round}` }) },
            },
          ],
        },
        { role: "tool", tool_call_id: `call_${round}`, content: listing.join("\n") },
      );
    }
    const last = {
      role: "user",
      name: "alice",
      content: [{ type: "text", text: "Now summarise them.", cache_control: { type: "ephemeral" } }],
    };
    messages.push(last);
    expect((await post(harness, messages)).status).toBe(200);
    const sent = harness.upstream.requests[0]!.body.messages!;
    expect(JSON.stringify(sent)).toContain("output offloaded");
    expect(sent.at(-1)).toEqual(last);
    // The first message and every tool call went through unchanged: the same objects as sent.
    expect(sent[0]).toEqual(messages[0]);
    expect(sent.filter((message) => message.role === "assistant")).toEqual(
      messages.filter((message) => message["role"] === "assistant"),
    );
    expect(sent).toHaveLength(messages.length);
  });
});
