import { describe, expect, it } from "vitest";
import { errorLinesIn, normalizeFact } from "../metrics/fact-patterns.ts";
import { outputPreview } from "./tool-output-text.ts";

const filler = (count: number, from = 0) =>
  Array.from({ length: count }, (_, line) => `  ok ${line + from} ${"x".repeat(40)}`);

describe("outputPreview", () => {
  it("returns a short output whole", () => {
    const text = filler(8).join("\n");
    expect(outputPreview(text, 5, false)).toBe(text);
  });

  it("keeps head, tail, every distinct error line of the hidden part and the paths it mentions", () => {
    const errors = Array.from(
      { length: 30 },
      (_, line) => `src/mod${line}.ts:3:1 - error TS2322: bad type ${line}`,
    );
    const lines = [
      ...filler(5),
      ...filler(50, 5),
      ...errors,
      ...errors,
      ...filler(50, 100),
      ...filler(5, 200),
    ];
    const text = lines.join("\n");
    const preview = outputPreview(text, 5, false);
    expect(preview.startsWith(lines.slice(0, 5).join("\n"))).toBe(true);
    expect(preview).toContain(lines.slice(-5).join("\n"));
    expect(preview).not.toContain("ok 60 ");
    // Every error fact of the output survives (repeated lines once), so retention of what failed is whole.
    const kept = normalizeFact(preview);
    for (const fact of errorLinesIn(text)) expect(kept).toContain(normalizeFact(fact));
    expect(preview.match(/bad type 7$/gm)).toHaveLength(1);
    expect(preview.length).toBeLessThan(text.length / 2);
  });

  it("bounds the error lines it keeps by a share of the output, more for shell output", () => {
    const errors = Array.from({ length: 400 }, (_, line) => `error ${line}: ${"e".repeat(60)}`);
    const text = [...filler(5), ...errors, ...filler(5, 10)].join("\n");
    const plain = outputPreview(text, 5, false);
    const shell = outputPreview(text, 5, true);
    expect(plain.length).toBeLessThan(text.length * 0.15 + 2_000);
    expect(shell.length).toBeGreaterThan(plain.length);
    expect(shell.length).toBeLessThan(text.length * 0.25 + 2_000);
  });

  it("clips very long lines", () => {
    const long = `fatal: ${"y".repeat(1_000)}`;
    const text = [...filler(5), long, ...filler(20, 5)].join("\n");
    const preview = outputPreview(text, 5, false);
    expect(preview).toContain(`fatal: ${"y".repeat(100)}`);
    expect(preview).not.toContain("y".repeat(300));
  });
});

describe("outputPreview focus", () => {
  const source = Array.from({ length: 200 }, (_, line) =>
    line % 20 === 5
      ? `${String(line).padStart(5)}→export function handler${line}(event: Event) {`
      : `${String(line).padStart(5)}→  total += step(${line});`,
  ).join("\n");

  it("keeps a file's outline — the lines declaring what the agent calls or edits next — verbatim", () => {
    const preview = outputPreview(source, 3, false, "outline");
    for (let line = 25; line < 180; line += 20)
      expect(preview).toContain(`→export function handler${line}(event: Event) {`);
    expect(preview).not.toContain("total += step(100)");
    expect(outputPreview(source, 3, false)).not.toContain("handler105");
  });

  it("keeps a search's matches, in order, within the preview budget", () => {
    const matches = Array.from(
      { length: 300 },
      (_, line) => `src/module${line}.ts:${line}: const value = lookup(${line});`,
    ).join("\n");
    const preview = outputPreview(matches, 3, false, "matches");
    expect(preview).toContain("src/module10.ts:10: const value = lookup(10);");
    expect(preview.indexOf("module10.ts")).toBeLessThan(preview.indexOf("module20.ts"));
    expect(preview.length).toBeLessThan(0.3 * matches.length);
    expect(outputPreview(matches, 3, false)).not.toContain("module10.ts:10");
  });

  it("keeps failing test names from a test run", () => {
    const run = [
      ...Array.from({ length: 80 }, (_, line) => ` ✓ passes case ${line}`),
      " × rejects an empty body",
      ...Array.from({ length: 80 }, (_, line) => ` ✓ more ${line}`),
    ].join("\n");
    expect(outputPreview(run, 3, true)).toContain("× rejects an empty body");
  });
});
