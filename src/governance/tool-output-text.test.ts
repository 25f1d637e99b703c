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
