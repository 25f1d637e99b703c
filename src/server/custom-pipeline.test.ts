// A user's own processor governs the proxy: the engine the server builds takes the pipeline it is given, for the
// session turns (X-Ctxkit-Session) and the stateless ones alike. Real HTTP on 127.0.0.1 against the scripted
// OpenAI-compatible upstream.
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import { createPipeline } from "../governance/pipeline.ts";
import { preset } from "../governance/presets.ts";
import type { Processor } from "../governance/processor.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

/** Hides a ticket number in every user message as it arrives, before it joins the view. */
function redactTickets(seen: string[]): Processor {
  return {
    name: "redact-tickets",
    triggers: [{ kind: "each-message" }],
    process: (messages) =>
      messages.map((message): Message => {
        seen.push(message.role);
        if (message.role !== "user") return message;
        return {
          ...message,
          content: message.content.map((block) =>
            block.type === "text"
              ? { ...block, text: block.text.replaceAll(/TICKET-\d+/g, "[ticket]") }
              : block,
          ),
        };
      }),
  };
}

async function harnessWith(processor: Processor): Promise<ServerHarness> {
  const base = preset("default");
  const harness = await startHarness({
    responses: (request) => ({ text: `reply ${request.index + 1}` }),
    pipeline: createPipeline({ processors: [processor, ...base.processors], settings: base.settings }),
  });
  harnesses.push(harness);
  return harness;
}

describe("a pipeline of one's own behind the proxy", () => {
  it("governs every session turn: the upstream never sees what the processor removes", async () => {
    const seen: string[] = [];
    const harness = await harnessWith(redactTickets(seen));
    const client = new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: harness.acme,
      maxRetries: 0,
      defaultHeaders: { "X-Ctxkit-Session": "support-1" },
    });
    const first = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "My order TICKET-4711 never arrived." }],
    });
    await client.chat.completions.create({
      model: "m",
      messages: [
        { role: "user", content: "My order TICKET-4711 never arrived." },
        { role: "assistant", content: first.choices[0]!.message.content },
        { role: "user", content: "And TICKET-4712 too." },
      ],
    });
    const sent = harness.upstream.requests.map((request) => JSON.stringify(request.body.messages));
    expect(sent).toHaveLength(2);
    expect(sent.every((body) => !/TICKET-\d+/.test(body))).toBe(true);
    expect(sent[1]).toContain("And [ticket] too.");
    expect(seen).toContain("user");
    // The store keeps the history as the client sent it: governance shapes only what is sent.
    const stored = await harness.store.loadMessages("acme/support-1");
    expect(stored.map((message) => messageText(message))).toContain("And TICKET-4712 too.");
  });

  it("governs stateless turns too", async () => {
    const harness = await harnessWith(redactTickets([]));
    const client = new OpenAI({ baseURL: `${harness.server.url}/v1`, apiKey: harness.acme, maxRetries: 0 });
    await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Look up TICKET-99, please." }],
    });
    expect(JSON.stringify(harness.upstream.requests[0]?.body.messages)).toContain(
      "Look up [ticket], please.",
    );
  });
});
