import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import type { Message } from "../../../model/message.ts";
import { buildMessages } from "../message-builder.ts";
import {
  fixedImportOptions,
  historyArbitrary,
  sampleHistory,
  thoughtReasoning,
  signedBy,
  withoutMarkers,
} from "../test-support/index.ts";
import { fromAnthropic, toAnthropic } from "../anthropic/index.ts";
import { fromGemini } from "./from-gemini.ts";
import type { GeminiPayload } from "./gemini-content.ts";
import { toGemini } from "./to-gemini.ts";

const thought = [{ type: "reasoning", text: "**Checking the build**", signature: "CiQBcsjafF8=" }] as const;

function roundTrip(messages: readonly Message[]): Message[] {
  return fromGemini(toGemini(messages), fixedImportOptions());
}

describe("Gemini", () => {
  it("sends each provider only its own reasoning signatures", () => {
    const [fromClaude] = fromAnthropic(
      [
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "plan", signature: "anthropic-sig" },
            { type: "text", text: "ok" },
          ],
        },
      ],
      fixedImportOptions(),
    );
    const [fromGoogle] = fromGemini(
      {
        contents: [
          {
            role: "model",
            parts: [{ text: "plan", thought: true, thoughtSignature: "gemini-sig" }, { text: "ok" }],
          },
        ],
      },
      fixedImportOptions(),
    );
    const asked = { ...fromClaude!, role: "user" as const, content: [{ type: "text" as const, text: "go" }] };
    // Anthropic's signature never reaches Gemini, nor Gemini's Anthropic.
    expect(JSON.stringify(toGemini([asked, fromClaude!]))).not.toContain("anthropic-sig");
    expect(JSON.stringify(toGemini([asked, fromGoogle!]))).toContain("gemini-sig");
    expect(JSON.stringify(toAnthropic([asked, fromGoogle!]))).not.toContain("gemini-sig");
    expect(JSON.stringify(toAnthropic([asked, fromClaude!]))).toContain("anthropic-sig");
  });

  it("leaves out empty text parts and a turn left empty, merging the user turns around it", () => {
    const messages = buildMessages(
      [
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "assistant", content: [{ type: "text", text: "" }] },
        { role: "user", content: [{ type: "text", text: "second" }] },
        { role: "assistant", content: [] },
      ],
      fixedImportOptions(),
    );
    expect(toGemini(messages).contents).toEqual([
      { role: "user", parts: [{ text: "first" }, { text: "second" }] },
    ]);
  });

  it("round-trips a history with every feature, dropping only the marker", () => {
    const history = sampleHistory({ reasoning: thought, filenames: false });
    expect(roundTrip(history)).toEqual(signedBy(withoutMarkers(history), "google"));
  });

  it("sends function responses as { output } / { error } with media parts, in one user turn", () => {
    const { systemInstruction, contents } = toGemini(sampleHistory({ reasoning: thought, filenames: false }));
    expect(systemInstruction).toEqual({ parts: [{ text: "You are a careful coding agent." }] });
    expect(contents[1]!.parts[0]).toEqual({
      text: "**Checking the build**",
      thought: true,
      thoughtSignature: "CiQBcsjafF8=",
    });
    expect(contents[2]).toEqual({
      role: "user",
      parts: [
        {
          functionResponse: {
            name: "bash",
            id: "call_build",
            response: { error: "src/app.ts(3,1): error TS2304: Cannot find name 'x'." },
          },
        },
        {
          functionResponse: {
            name: "screenshot",
            id: "call_page",
            response: { status: 200, title: "Home", links: ["/a", "/b"] },
            parts: [{ inlineData: { mimeType: "image/png", data: expect.any(String) } }],
          },
        },
      ],
    });
  });

  it("generates stable ids for calls without one and matches responses by name", () => {
    const payload: GeminiPayload = {
      systemInstruction: { parts: [{ text: "You are a weather bot." }] },
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris and Oslo?" }] },
        {
          role: "model",
          parts: [
            { text: "Let me think about which cities.", thought: true },
            { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "Q2lRQmNz" },
            { functionCall: { name: "get_weather", args: { city: "Oslo" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { output: "21C" } } },
            { functionResponse: { name: "get_weather", response: { error: "timeout" } } },
            { text: "Use Celsius." },
          ],
        },
        { role: "model", parts: [{ text: "Paris: 21C. Oslo timed out.", thoughtSignature: "U2lnMg==" }] },
      ],
    };
    const messages = fromGemini(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "user",
      "assistant",
    ]);
    const calls = messages[2]!.content.filter((block) => block.type === "tool-call");
    expect(calls.map((call) => call.id)).toEqual(["gemini-call-1-1", "gemini-call-1-2"]);
    expect(messages[3]!.content[0]).toEqual({
      type: "tool-result",
      callId: "gemini-call-1-1",
      toolName: "get_weather",
      content: "21C",
    });
    expect(messages[4]!.content[0]).toMatchObject({
      callId: "gemini-call-1-2",
      content: "timeout",
      isError: true,
    });
    expect(fromGemini(payload, fixedImportOptions())).toEqual(messages);
    expect(toGemini(messages)).toEqual(payload);
  });

  it("accepts the older `function` role for responses", () => {
    const messages = fromGemini(
      {
        contents: [
          { role: "model", parts: [{ functionCall: { name: "ls", args: {}, id: "c1" } }] },
          {
            role: "function",
            parts: [{ functionResponse: { name: "ls", id: "c1", response: { output: "a b" } } }],
          },
        ],
      },
      fixedImportOptions(),
    );
    expect(messages[1]!.content).toEqual([
      { type: "tool-result", callId: "c1", toolName: "ls", content: "a b" },
    ]);
  });

  it("leaves call ids out when asked", () => {
    const [message] = buildMessages(
      [{ role: "assistant", content: [{ type: "tool-call", id: "c1", name: "ls", input: {} }] }],
      fixedImportOptions(),
    );
    expect(toGemini([message!], { callIds: false }).contents[0]!.parts).toEqual([
      { functionCall: { name: "ls", args: {} } },
    ]);
  });

  it("rejects bad input with a ValidationError naming the index and field", () => {
    const bad = { contents: [{ role: "model", parts: [{ functionCall: { args: {} } }] }] };
    expect(() => fromGemini(bad)).toThrow(ValidationError);
    expect(() => fromGemini(bad)).toThrow(/payload\.contents\[0\]\.parts\[0\]\.functionCall\.name/);
    expect(() => fromGemini({ contents: [{ role: "assistant", parts: [] }] })).toThrow(
      /payload\.contents\[0\]\.role/,
    );
  });

  it("round-trips random valid histories", () => {
    fc.assert(
      fc.property(historyArbitrary({ reasoning: thoughtReasoning, filenames: false }), (history) => {
        expect(roundTrip(history)).toEqual(signedBy(history, "google"));
      }),
      { numRuns: 150 },
    );
  });
});
