import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { transcriptFiles, transcriptName } from "../../../test/support/transcripts.ts";
import { ParseError, SchemaTooNewError, ValidationError } from "../../errors/errors.ts";
import type { ContentBlock, Message } from "../../model/message.ts";
import { importCtxkitJsonl } from "../transcripts/ctxkit-jsonl-importer.ts";
import { importTranscript, importTranscriptFile } from "../transcripts/import-transcript.ts";
import { readCtxkitJsonl } from "./read-ctxkit-jsonl.ts";
import { exportCtxkitJsonl, formatCtxkitRecord } from "./write-ctxkit-jsonl.ts";

const message = (fields: Partial<Message> = {}): Message => ({
  id: "s1:0",
  sessionId: "s1",
  seq: 0,
  turn: 1,
  role: "user",
  content: [{ type: "text", text: "hi" }],
  createdAt: "2026-01-01T00:00:00.000Z",
  ...fields,
});

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("ctxkit JSONL round trip over the transcript corpus", () => {
  for (const file of transcriptFiles) {
    it(`${transcriptName(file)}: export → import → export is byte-identical and lossless`, async () => {
      const conversations = await importTranscriptFile(file);
      const exported = exportCtxkitJsonl(conversations);
      const imported = importTranscript(exported, { source: "export.jsonl" });
      expect(exportCtxkitJsonl(imported)).toBe(exported);
      expect(imported).toEqual(conversations);
    });
  }
});

const jsonValue = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as never);
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record(
    { type: fc.constant("text" as const), text: fc.string(), refusal: fc.constant(true as const) },
    { requiredKeys: ["type", "text"] },
  ),
  fc.record(
    {
      type: fc.constant("reasoning" as const),
      text: fc.string(),
      signature: fc.string(),
      redacted: fc.boolean(),
      providerData: jsonValue,
    },
    { requiredKeys: ["type", "text"] },
  ),
  fc.record({
    type: fc.constant("tool-call" as const),
    id: fc.string({ minLength: 1 }),
    name: fc.string({ minLength: 1 }),
    input: jsonValue,
  }),
  fc.record(
    {
      type: fc.constant("tool-result" as const),
      callId: fc.string({ minLength: 1 }),
      toolName: fc.string(),
      content: fc.oneof(fc.string(), jsonValue),
      isError: fc.boolean(),
      attachments: fc.array(
        fc.record(
          {
            type: fc.constant("image" as const),
            mediaType: fc.constant("image/png"),
            data: fc.base64String(),
            detail: fc.constantFrom("auto" as const, "low" as const, "high" as const, "original" as const),
          },
          { requiredKeys: ["type", "mediaType", "data"] },
        ),
        { maxLength: 2 },
      ),
      compactSummary: fc.string(),
    },
    { requiredKeys: ["type", "callId", "toolName", "content"] },
  ),
  fc.record({
    type: fc.constant("file" as const),
    mediaType: fc.constant("application/pdf"),
    url: fc.webUrl(),
  }),
);
const messages = fc.array(
  fc.record({
    role: fc.constantFrom("system" as const, "user" as const, "assistant" as const, "tool" as const),
    content: fc.array(block, { maxLength: 4 }),
    kind: optional(fc.constantFrom("summary" as const, "marker" as const)),
    usage: optional(
      fc.record(
        { input: fc.nat(), output: fc.nat(), cacheRead: fc.nat() },
        { requiredKeys: ["input", "output"] },
      ),
    ),
    metadata: optional(fc.dictionary(fc.string(), jsonValue, { maxKeys: 3 })),
    model: optional(fc.string()),
  }),
  { maxLength: 6 },
);

describe("ctxkit JSONL export", () => {
  it("is byte-identical after export → import → export for any valid messages", () => {
    fc.assert(
      fc.property(messages, fc.string({ minLength: 1 }), (drafts, id) => {
        const conversation = {
          id,
          format: "ctxkit" as const,
          source: "memory",
          messages: drafts.map((draft, seq) => {
            const defined = Object.fromEntries(
              Object.entries(draft).filter(([, value]) => value !== undefined),
            );
            return {
              ...defined,
              id: `${id}:${seq}`,
              sessionId: id,
              seq,
              turn: seq,
              createdAt: "2026-01-01T00:00:00.000Z",
            } as Message;
          }),
        };
        const exported = exportCtxkitJsonl([conversation]);
        const [imported] = importCtxkitJsonl(exported, "memory.jsonl");
        expect(exportCtxkitJsonl([imported!])).toBe(exported);
        expect(imported!.messages).toEqual(conversation.messages);
      }),
      { numRuns: 300 },
    );
  });

  it("writes a header, then the conversation record, then one line per message", () => {
    const text = exportCtxkitJsonl([
      { id: "s1", format: "codex", source: "r.jsonl", title: "T", messages: [message()] },
    ]);
    expect(text.split("\n")).toEqual([
      '{"type":"ctxkit","version":1}',
      '{"type":"conversation","id":"s1","format":"codex","source":"r.jsonl","title":"T"}',
      '{"type":"message","id":"s1:0","sessionId":"s1","seq":0,"turn":1,"role":"user","content":[{"type":"text","text":"hi"}],"createdAt":"2026-01-01T00:00:00.000Z"}',
      "",
    ]);
  });

  it("keeps free-form JSON exactly, even keys named __proto__", () => {
    const input = JSON.parse('{"__proto__":{"x":1},"b":2,"1":3}') as never;
    const conversation = {
      id: "s1",
      format: "ctxkit",
      source: "x",
      messages: [
        message({ role: "assistant", content: [{ type: "tool-call", id: "c1", name: "t", input }] }),
      ],
    };
    const exported = exportCtxkitJsonl([conversation]);
    expect(exported).toContain('"input":{"1":3,"__proto__":{"x":1},"b":2}');
    const [imported] = importCtxkitJsonl(exported, "x.jsonl");
    expect(exportCtxkitJsonl([imported!])).toBe(exported);
    const block = imported!.messages[0]!.content[0] as { input: object };
    expect(Object.keys(block.input)).toEqual(["1", "__proto__", "b"]);
  });

  it("refuses messages that would not read back", () => {
    const conversation = {
      id: "s1",
      format: "ctxkit",
      source: "x",
      messages: [message({ sessionId: "other" })],
    };
    expect(() => exportCtxkitJsonl([conversation])).toThrow(ValidationError);
    const invalid = { ...conversation, messages: [message({ role: "robot" as never })] };
    expect(() => exportCtxkitJsonl([invalid])).toThrow(/invalid message s1:0/);
  });
});

describe("readCtxkitJsonl", () => {
  const header = '{"type":"ctxkit","version":1}';
  const line = formatCtxkitRecord({ type: "message", message: message() });

  it("passes session and blob records through untouched and groups messages without a conversation record", () => {
    const session = '{"type":"session","id":"s1","labels":{"b":1,"a":2}}';
    const blob = '{"type":"blob","ref":"sha256:ab","mediaType":"image/png","data":"AAAA"}';
    const text = [header, session, line, blob].join("\n");
    const records = [...readCtxkitJsonl(text, "store.jsonl")];
    expect(records.map((entry) => [entry.line, entry.record.type])).toEqual([
      [1, "ctxkit"],
      [2, "session"],
      [3, "message"],
      [4, "blob"],
    ]);
    expect(formatCtxkitRecord(records[1]!.record)).toBe(session);
    expect(formatCtxkitRecord(records[3]!.record)).toBe(blob);
    expect(importCtxkitJsonl(text, "store.jsonl")).toEqual([
      { id: "s1", format: "ctxkit", source: "store.jsonl", messages: [message()] },
    ]);
  });

  it("raises ParseError with the line and what was expected for a malformed line", () => {
    const cases: [string, number, RegExp][] = [
      [
        [header, line, "{oops"].join("\n"),
        3,
        /^f\.jsonl:3: invalid JSON; expected one JSON object per line$/,
      ],
      [
        [header, '{"type":"message","id":"x"}'].join("\n"),
        2,
        /^f\.jsonl:2: sessionId: .*; expected a message record$/,
      ],
      [
        [header, "", '{"type":"mystery"}'].join("\n"),
        3,
        /^f\.jsonl:3: unknown record type "mystery"; expected a record whose type is one of ctxkit, conversation, message, session, blob$/,
      ],
      [line, 1, /^f\.jsonl:1: type: .*; expected a header line \{"type":"ctxkit","version":1\}$/],
      ["", 1, /^f\.jsonl:1: the file is empty/],
      [
        [header, '{"type":"conversation","id":"s1","format":"yaml","source":"x"}'].join("\n"),
        2,
        /unknown format "yaml"/,
      ],
    ];
    for (const [text, lineNumber, pattern] of cases) {
      const error = thrown(() => importCtxkitJsonl(text, "f.jsonl"));
      expect(error).toBeInstanceOf(ParseError);
      expect((error as ParseError).line).toBe(lineNumber);
      expect((error as Error).message).toMatch(pattern);
    }
  });

  it("refuses a file written by a newer ctxkit", () => {
    expect(() => [...readCtxkitJsonl('{"type":"ctxkit","version":2}\n', "new.jsonl")]).toThrow(
      SchemaTooNewError,
    );
  });
});
