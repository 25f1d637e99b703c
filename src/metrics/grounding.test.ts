import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { GroundingTracker } from "./grounding.ts";
import { anchorLine, distinctiveTokens, isDistinctiveIdentifier } from "./grounding-units.ts";
import { replySpans } from "./reply-spans.ts";

const FILE = [
  "     1→import { readConfig } from './config';",
  "     2→",
  "     3→export function parseSettings(raw: string): Settings {",
  "     4→  const merged = readConfig(raw);",
  "     5→  return validateSettings(merged);",
  "     6→}",
].join("\n");

/** A session where the agent read src/settings.ts, then edits it (the last message is the reply). */
function editSession(): { history: Message[]; reply: Message[] } {
  const messages = new HistoryBuilder()
    .user("Make parseSettings tolerate empty input")
    .step([{ name: "Read", input: { file_path: "src/settings.ts" }, output: FILE }])
    .step([
      {
        name: "Edit",
        input: {
          file_path: "src/settings.ts",
          old_string: "  const merged = readConfig(raw);\n  return validateSettings(merged);",
          new_string:
            "  const merged = readConfig(raw ?? '');\n  return validateSettings(merged, inventedHelper);",
        },
        output: "ok",
      },
    ])
    .build();
  const reply = messages.findLastIndex((message) => message.role === "assistant");
  return { history: messages.slice(0, reply), reply: messages.slice(reply, reply + 1) };
}

describe("reply spans", () => {
  it("takes each line an edit replaces, and the paths and identifiers it types", () => {
    const spans = replySpans(editSession().reply);
    const anchors = spans.filter((span) => span.kind === "anchor").map((span) => span.text);
    expect(anchors).toEqual(["const merged = readConfig(raw);", "return validateSettings(merged);"]);
    const tokens = spans.filter((span) => span.kind !== "anchor").map((span) => span.text);
    expect(tokens).toEqual(
      expect.arrayContaining(["src/settings.ts", "readConfig", "validateSettings", "inventedHelper"]),
    );
  });

  it("takes the lines a patch expects (context and removed lines), not the ones it adds", () => {
    const reply = new HistoryBuilder()
      .user("patch it")
      .step([
        {
          name: "apply_patch",
          input:
            "*** Begin Patch\n*** Update File: src/a.ts\n@@\n export const limit = computeLimit();\n-const oldValue = 1;\n+const newValue = 2;\n*** End Patch\n",
          output: "done",
        },
      ])
      .build()
      .filter((message) => message.role === "assistant");
    const anchors = replySpans(reply)
      .filter((span) => span.kind === "anchor")
      .map((span) => span.text);
    expect(anchors).toEqual(["export const limit = computeLimit();", "const oldValue = 1;"]);
  });

  it("takes whole lines carried into new text and hyphenated names and flags", () => {
    const reply = new HistoryBuilder()
      .user("rewrite it")
      .step([
        {
          name: "Write",
          input: { file_path: "src/settings.ts", content: "  const merged = readConfig(raw);\n// new\n" },
          output: "ok",
        },
        {
          name: "Bash",
          input: { command: "git commit --no-verify -m x && npx ts-node-dev run" },
          output: "",
        },
      ])
      .build()
      .filter((message) => message.role === "assistant");
    const spans = replySpans(reply);
    expect(spans.filter((span) => span.kind === "line").map((span) => span.text)).toContain(
      "const merged = readConfig(raw);",
    );
    const names = spans.filter((span) => span.kind === "name").map((span) => span.text);
    expect(names).toEqual(expect.arrayContaining(["no-verify", "ts-node-dev"]));
    // One hyphen and no flag: prose.
    expect(distinctiveTokens("a well-known fix")).toEqual([]);
  });

  it("scores a copied line that only a dropped read held as missing", () => {
    const { history } = editSession();
    const reply = new HistoryBuilder()
      .user("x")
      .step([
        {
          name: "Write",
          input: {
            file_path: "src/copy.ts",
            content: "export function parseSettings(raw: string): Settings {",
          },
          output: "ok",
        },
      ])
      .build()
      .filter((message) => message.role === "assistant");
    const read = history.find((message) => message.role === "tool")!;
    const observation = new GroundingTracker().observe(
      history,
      history.filter((message) => message !== read),
      reply,
    );
    expect(observation.missing.map(({ span }) => span.kind)).toContain("line");
  });

  it("tells distinctive identifiers from words and strips read gutters from lines", () => {
    expect(
      ["parseConfig", "max_tokens", "utf8Decode", "config.maxTokens", "HTTPServer"].every(
        isDistinctiveIdentifier,
      ),
    ).toBe(true);
    expect(["return", "Summary", "function", "a.b"].some(isDistinctiveIdentifier)).toBe(false);
    expect(anchorLine("    12→  return total + tax;")).toBe("return total + tax;");
    expect(anchorLine("src/a.ts:12:  const value = compute();")).toBe("const value = compute();");
    expect(anchorLine("  });")).toBeUndefined();
    expect(distinctiveTokens("see https://example.com/x and 0a1b2c3d4e")).toEqual([
      ["https://example.com/x", "literal"],
      ["0a1b2c3d4e", "literal"],
    ]);
  });
});

describe("units without allocation", () => {
  // The definitions the fast tests of anchorLine and distinctiveTokens stand for.
  const plainAnchorLine = (line: string) => {
    const text = line.replace(/^\s*\d+(?:→|\t)|^[^\s:]+:\d+[:-]|^\d+[:-](?=\S)/, "").trim();
    if (text.replace(/\s/g, "").length < 8) return undefined;
    if ((text.match(/[A-Za-z0-9]/g)?.length ?? 0) < 3) return undefined;
    return text;
  };
  const line = fc.array(
    fc.constantFrom(" ", "\t", "\u00a0", "a", "Z", "7", "_", ".", "}", ";", "→", ":", "-", "1"),
    {
      maxLength: 40,
    },
  );

  it("keeps the lines the plain counts keep (8 non-space characters, 3 letters or digits)", () => {
    fc.assert(
      fc.property(line, (chars) => {
        const text = chars.join("");
        expect(anchorLine(text)).toBe(plainAnchorLine(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it("finds no distinctive token in short runs and plain words, and still finds the rest", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^(?:[A-Z]?[a-z]+|[\w.$-]{1,3})$/), (word) => {
        expect(distinctiveTokens(word)).toEqual([]);
      }),
    );
    expect(distinctiveTokens("Summary of parseConfig, a1b2 and deadbeef1 in src/a.ts")).toEqual([
      ["src/a.ts", "path"],
      ["parseConfig", "identifier"],
      ["a1b2", "identifier"],
      ["deadbeef1", "literal"],
    ]);
  });
});

describe("GroundingTracker", () => {
  it("counts only spans the history held, and finds them kept when the view still shows them", () => {
    const { history, reply } = editSession();
    const grounding = new GroundingTracker();
    const observation = grounding.observe(history, history, reply);
    // inventedHelper was never in the context: it does not count.
    expect(observation.missing).toEqual([]);
    expect(observation.spans).toBe(observation.kept);
    expect(observation.anchors).toBe(2);
    expect(observation.score).toBe(1);
    expect(replySpans(reply).length).toBeGreaterThan(observation.spans);
  });

  it("reports a span copied from a tool output the view dropped as missing, with the output that held it", () => {
    const { history, reply } = editSession();
    const read = history.find((message) => message.role === "tool")!;
    const view = history.filter((message) => message !== read);
    const observation = new GroundingTracker().observe(history, view, reply);
    expect(observation.anchorsKept).toBe(0);
    const missing = observation.missing.map(({ span }) => span.text);
    expect(missing).toEqual(expect.arrayContaining(["return validateSettings(merged);", "readConfig"]));
    expect(observation.missing.every(({ source }) => source === read)).toBe(true);
    // The path is still in view: the Read call names it.
    expect(missing).not.toContain("src/settings.ts");
    expect(observation.score).toBeGreaterThan(0);
    expect(observation.score).toBeLessThan(1);
  });

  it("credits a span a summary in the view kept only in the lenient figures", () => {
    const { history, reply } = editSession();
    const read = history.find((message) => message.role === "tool")!;
    const summary: Message = {
      ...read,
      id: "summary",
      role: "user",
      kind: "summary",
      content: [
        { type: "text", text: "Read src/settings.ts: parseSettings calls readConfig then validateSettings." },
      ],
    };
    const view = history.map((message) => (message === read ? summary : message));
    const observation = new GroundingTracker().observe(history, view, reply);
    const missing = observation.missing.map(({ span }) => span.text);
    // The headline credits only messages sent as recorded: what the summary held is missing there.
    expect(missing).toContain("readConfig");
    expect(missing).toContain("const merged = readConfig(raw);");
    expect(observation.score!).toBeLessThan(observation.lenientScore!);
    expect(observation.lenientKept).toBeGreaterThan(observation.kept);
  });

  it("scores strictly the spans of recorded messages sent unmodified, as the view changes", () => {
    const { history, reply } = editSession();
    const read = history.find((message) => message.role === "tool")!;
    const grounding = new GroundingTracker();
    const whole = grounding.observe(history, history, reply);
    expect(whole.score).toBe(whole.lenientScore);
    // The read output replaced by a rewritten copy holding the same text (as an offload preview might).
    const copy: Message = { ...read, content: read.content.map((block) => ({ ...block })) };
    const rewritten = grounding.observe(
      history,
      history.map((message) => (message === read ? copy : message)),
      reply,
    );
    expect(rewritten.lenientScore).toBe(whole.lenientScore);
    expect(rewritten.score!).toBeLessThan(whole.score!);
    expect(rewritten.anchorsKept).toBe(0);
    expect(rewritten.lenientAnchorsKept).toBe(2);
    // Back to the recorded message: strict again.
    expect(grounding.observe(history, history, reply).score).toBe(whole.score);
    expect(grounding.totals.mean).toBeCloseTo((2 * whole.score! + rewritten.score!) / 3);
    expect(grounding.totals.lenientMean).toBe(1);
    expect(grounding.totals.anchorShare).toBeCloseTo(4 / 6);
    expect(grounding.totals.lenientAnchorShare).toBe(1);
  });

  it("credits strictly the blocks a rewritten message sent unchanged, not the ones governance rewrote", () => {
    const { history, reply } = editSession();
    const read = history.find((message) => message.role === "tool")!;
    const call = history.find(
      (message) =>
        message.role === "assistant" && message.content.some((block) => block.type === "tool-call"),
    )!;
    // The assistant message re-sent with a new (elided) copy of one block and its other blocks as recorded.
    const rewritten: Message = {
      ...call,
      content: [...call.content, { type: "text", text: "governance note" }],
    };
    const view = history.map((message) => (message === call ? rewritten : message));
    const observation = new GroundingTracker().observe(history, view, reply);
    expect(observation.missing.map(({ span }) => span.text)).not.toContain("src/settings.ts");
    // The read output rewritten as a copy: its spans are not credited.
    const copy: Message = { ...read, content: read.content.map((block) => ({ ...block })) };
    const both = new GroundingTracker().observe(
      history,
      view.map((message) => (message === read ? copy : message)),
      reply,
    );
    expect(both.missing.map(({ span }) => span.text)).toContain("readConfig");
  });

  it("follows the view as it changes between requests and totals the requests", () => {
    const { history, reply } = editSession();
    const read = history.find((message) => message.role === "tool")!;
    const grounding = new GroundingTracker();
    grounding.observe(history, history, reply);
    grounding.observe(
      history,
      history.filter((message) => message !== read),
      reply,
    );
    grounding.observe(history, history, reply);
    const totals = grounding.totals;
    expect(totals.requests).toBe(3);
    expect(totals.scoredRequests).toBe(3);
    expect(totals.anchors).toBe(6);
    expect(totals.anchorsKept).toBe(4);
    expect(totals.worst?.index).toBe(1);
    expect(totals.mean).toBeLessThan(1);
  });
});
