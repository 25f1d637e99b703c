import { describe, expect, it } from "vitest";
import { NotFoundError, UnknownFormatError, ValidationError } from "../../errors/errors.ts";
import { detectFormat } from "./detect-format.ts";
import { importTranscript, importTranscriptFile } from "./import-transcript.ts";

const claudeLine = JSON.stringify({
  type: "user",
  uuid: "u1",
  parentUuid: null,
  sessionId: "s",
  message: { role: "user", content: "hi" },
});

describe("detectFormat", () => {
  it.each([
    ["claude-code", `${JSON.stringify({ type: "file-history-snapshot", messageId: "m" })}\n${claudeLine}`],
    ["claude-code", JSON.stringify({ type: "summary", summary: "Title", leafUuid: "u" })],
    ["codex", JSON.stringify({ timestamp: "t", type: "session_meta", payload: { id: "r" } })],
    ["ctxkit", JSON.stringify({ type: "ctxkit", version: 1 })],
    ["gemini-cli", JSON.stringify({ sessionId: "g", messages: [] }, null, 2)],
    ["gemini-cli", JSON.stringify({ messages: [{ type: "gemini", content: "x" }] })],
    ["openai", JSON.stringify([{ role: "user", content: "hi" }], null, 2)],
    ["openai", JSON.stringify({ messages: [{ role: "user", content: "hi" }] })],
    ["openai", JSON.stringify([{ task_id: 1, traj: [] }])],
    ["swe-agent", JSON.stringify({ history: [], trajectory: [] }, null, 2)],
  ])("recognises %s", (format, text) => {
    expect(detectFormat(text, "input")).toBe(format);
  });

  it("recognises a JSONL file whose first line is damaged, so the importer can name that line", () => {
    const text = `{"type":"user","uuid":\n${claudeLine}\n`;
    expect(detectFormat(text, "session.jsonl")).toBe("claude-code");
    expect(() => importTranscript(text, { source: "session.jsonl" })).toThrow(
      /^session\.jsonl:1: invalid JSON/,
    );
  });

  it("throws UnknownFormatError for anything else", () => {
    for (const text of ["", "hello", "[1, 2]", '{"a": 1}', '{"type": 3}']) {
      expect(() => detectFormat(text, "mystery.txt")).toThrow(UnknownFormatError);
    }
  });
});

describe("importTranscript options", () => {
  it("uses the format it is given instead of detecting one", () => {
    const text = JSON.stringify([{ role: "user", content: "hi" }]);
    expect(importTranscript(text, { source: "chat.json", format: "openai" })[0]!.format).toBe("openai");
    expect(() => importTranscript(text, { source: "chat.json", format: "gemini-cli" })).toThrow(
      /^chat\.json: /,
    );
    expect(() => importTranscript(text, { source: "chat.json", format: "yaml" as never })).toThrow(
      ValidationError,
    );
  });

  it("reports a missing file as NotFoundError", async () => {
    await expect(importTranscriptFile("/nonexistent/session.jsonl")).rejects.toThrow(NotFoundError);
  });
});
