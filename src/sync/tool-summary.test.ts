import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stripBinaryFields } from "./strip-binary-fields.ts";
import { formatToolSummary, truncateText, type ToolCallRecord } from "./tool-summary.ts";

describe("formatToolSummary", () => {
  it("writes the seed's prefix: one Called/Result pair per call", () => {
    expect(
      formatToolSummary("Desktop agent", [
        { name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "file1.txt file2.txt" },
      ]),
    ).toBe(
      '[Desktop agent used: Called: execute_cli({"command":"ls ~/Desktop"})\nResult: file1.txt file2.txt]',
    );
  });

  it("returns undefined when no tool was called", () => {
    expect(formatToolSummary("desktop", [])).toBeUndefined();
  });

  it("marks failed calls, writes JSON results as JSON, and counts the calls past the limit", () => {
    const calls: ToolCallRecord[] = [
      { name: "read_file", input: { path: "a" }, result: { size: 3, lines: ["x"] } },
      { name: "rm", input: { path: "/" }, result: "permission denied", isError: true },
      { name: "ls", input: {}, result: "" },
      { name: "pwd", input: null, result: "/home" },
    ];
    expect(formatToolSummary("desktop", calls, { maxCalls: 2 })).toBe(
      '[desktop used: Called: read_file({"path":"a"})\nResult: {"size":3,"lines":["x"]}\n' +
        'Called: rm({"path":"/"})\nError: permission denied\n(and 2 more calls)]',
    );
  });

  it("truncates each call's arguments and result to the configured size", () => {
    const summary = formatToolSummary(
      "desktop",
      [{ name: "write", input: { text: "x".repeat(500) }, result: "y".repeat(500) }],
      { maxInputChars: 20, maxResultChars: 10 },
    );
    expect(summary).toBe(
      `[desktop used: Called: write({"text":"${"x".repeat(10)}…)\nResult: ${"y".repeat(9)}…]`,
    );
  });

  it("property: every listed call stays within its limits and the list within maxCalls", () => {
    const call = fc.record({
      name: fc.stringMatching(/^[a-z_]{1,12}$/),
      input: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 80 })),
      result: fc.string({ maxLength: 400 }),
    });
    fc.assert(
      fc.property(
        fc.array(call, { minLength: 1, maxLength: 15 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (calls, maxInputChars, maxResultChars, maxCalls) => {
          const summary = formatToolSummary("a", calls, { maxInputChars, maxResultChars, maxCalls })!;
          const listed = Math.min(calls.length, maxCalls);
          let rest = summary.slice("[a used: ".length, -1);
          for (const current of calls.slice(0, listed)) {
            const head = `Called: ${current.name}(`;
            expect(rest.startsWith(head)).toBe(true);
            const input = truncateText(JSON.stringify(current.input), maxInputChars);
            const result = truncateText(current.result, maxResultChars);
            expect(input.length).toBeLessThanOrEqual(maxInputChars);
            expect(result.length).toBeLessThanOrEqual(maxResultChars);
            const expected = `${head}${input})\nResult: ${result}`;
            expect(rest.startsWith(expected)).toBe(true);
            rest = rest.slice(expected.length).replace(/^\n/, "");
          }
          expect(rest).toBe(calls.length > maxCalls ? `(and ${calls.length - maxCalls} more calls)` : "");
        },
      ),
    );
  });
});

describe("screenshots and encoded binaries in the prefix", () => {
  // A PNG header and then pixels, as a desktop agent's screenshot tool returns them.
  const screenshot = `iVBORw0KGgoAAAANSUhEUgAA${"QUJDREVGR0hJSktMTU5PUFFSU1RVVldY".repeat(3_000)}`;

  it("the seed's desktop agent: the screenshot's image_b64 is left out, the rest of the result stays", () => {
    const prefix = formatToolSummary("Desktop agent", [
      {
        name: "take_screenshot",
        input: {},
        result: { status: "success", image_b64: screenshot, width: 1920 },
      },
      { name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "file1.txt file2.txt" },
    ]);
    expect(prefix).toBe(
      "[Desktop agent used: Called: take_screenshot({})\n" +
        `Result: {"status":"success","image_b64":"[image_b64 omitted, ${screenshot.length} characters]","width":1920}\n` +
        'Called: execute_cli({"command":"ls ~/Desktop"})\nResult: file1.txt file2.txt]',
    );
  });

  it("strips data URLs and base64 runs from text results and arguments, and keeps paths and prose", () => {
    const prefix = formatToolSummary(
      "desktop",
      [
        {
          name: "click",
          input: { screenshot: `data:image/png;base64,${screenshot}`, path: "shots/screenshot-1.png" },
          result: `clicked; state: {"frame":"${screenshot}"}`,
        },
      ],
      { maxInputChars: 1_000, maxResultChars: 1_000 },
    )!;
    expect(prefix).not.toMatch(/QUJDREVGR0hJ/);
    expect(prefix).toContain(`"screenshot":"[data URL omitted, ${screenshot.length + 22} characters]"`);
    expect(prefix).toContain('"path":"shots/screenshot-1.png"');
    expect(prefix).toContain(
      `Result: clicked; state: {"frame":"[base64 omitted, ${screenshot.length} characters]"}`,
    );
  });

  it("returns a value without binaries as it is", () => {
    const value = { command: "ls", output: ["a.txt", "b.txt"], note: "short text" };
    expect(stripBinaryFields(value)).toBe(value);
  });
});

describe("truncateText", () => {
  it("never splits a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        (text, max) => {
          const cut = truncateText(text, max);
          expect(cut.length).toBeLessThanOrEqual(max);
          expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
          if (text.length <= max) expect(cut).toBe(text);
          else if (max > 0) expect(cut.endsWith("…")).toBe(true);
        },
      ),
    );
  });
});
