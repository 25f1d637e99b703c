import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { ParseError, PartialLastLineError } from "../../errors/errors.ts";
import { importTranscriptFile } from "./import-transcript.ts";
import { withoutPartialLastLine } from "./partial-last-line.ts";
import { readTranscriptText } from "./read-transcript-text.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-read-transcript-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
const codex = transcriptPath(
  "codemie-code/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
);
const tauBench = transcriptPath("tau-bench/gpt-4o-airline.json");

describe("reading a transcript larger than one string can hold", () => {
  // V8 strings stop at about 512 MB ("Invalid string length"); a lowered limit stands in for that here.
  it("reads a JSONL file line by line and imports exactly what reading it whole gives", async () => {
    const read = await readTranscriptText(spotter, { maxTextBytes: 1000 });
    const whole = readFileSync(spotter, "utf8");
    expect(Array.isArray(read?.text)).toBe(true);
    // 3 MB in 1 MB chunks: lines that straddle chunks are joined back.
    expect(read?.text).toEqual(whole.split("\n").slice(0, -1));
    expect(read?.terminated).toBe(true);
    for (const file of [spotter, codex]) {
      expect(await importTranscriptFile(file, { maxTextBytes: 1000 })).toEqual(
        await importTranscriptFile(file),
      );
    }
  });

  it("refuses a JSON document over the limit with a ParseError naming the limit", async () => {
    const error = await importTranscriptFile(tauBench, { maxTextBytes: 1000 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ParseError);
    expect((error as Error).message).toBe(
      `${tauBench}: the file is too large to read as one JSON document; expected a JSONL transcript, or a JSON document of at most 1000 bytes`,
    );
  });
});

describe("a JSONL transcript whose last line is cut off (still being written)", () => {
  const lines = readFileSync(transcriptPath("claude-code__marot-spotter/short.jsonl"), "utf8")
    .trimEnd()
    .split("\n");
  const live = join(folder, "live.jsonl");
  writeFileSync(live, `${lines.join("\n")}\n${lines[3]!.slice(0, 50)}`);
  const whole = join(folder, "whole.jsonl");
  writeFileSync(whole, `${lines.join("\n")}\n`);

  it("is refused by default, naming the line; with drop it imports every whole line", async () => {
    for (const maxTextBytes of [undefined, 100]) {
      const options = maxTextBytes === undefined ? {} : { maxTextBytes };
      const error = await importTranscriptFile(live, options).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PartialLastLineError);
      expect(error).toMatchObject({ line: lines.length + 1 });
      expect((error as Error).message).toMatch(
        new RegExp(
          `^${live}:${lines.length + 1}: the last line is incomplete \\(the transcript may still be being written\\)`,
        ),
      );
      const dropped = await importTranscriptFile(live, { ...options, partialLastLine: "drop" });
      expect(JSON.parse(JSON.stringify(dropped).replaceAll(live, whole))).toEqual(
        await importTranscriptFile(whole),
      );
    }
  });

  it("leaves complete files alone and still refuses a damaged line elsewhere", async () => {
    const unterminated = { text: lines.join("\n"), terminated: false };
    expect(withoutPartialLastLine(unterminated, "x.jsonl", "drop")).toBe(unterminated.text);
    const brokenMiddle = join(folder, "broken-middle.jsonl");
    writeFileSync(brokenMiddle, [lines[0], lines[1]!.slice(0, 30), ...lines.slice(2)].join("\n"));
    const error = await importTranscriptFile(brokenMiddle, { partialLastLine: "drop" }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ParseError);
    expect(error).not.toBeInstanceOf(PartialLastLineError);
    expect(error).toMatchObject({ line: 2 });
  });
});

describe("a transcript saved with a byte-order mark", () => {
  it("imports the same conversations as the file without it, read whole or line by line", async () => {
    const messagesOf = async (path: string, maxTextBytes?: number) =>
      (await importTranscriptFile(path, maxTextBytes === undefined ? {} : { maxTextBytes })).map(
        (conversation) => conversation.messages,
      );
    for (const source of [tauBench, spotter]) {
      // Under the same name: ids are made from it.
      mkdirSync(join(folder, "bom"), { recursive: true });
      const marked = join(folder, "bom", source.split("/").at(-1)!);
      writeFileSync(marked, `\uFEFF${readFileSync(source, "utf8")}`);
      const expected = await messagesOf(source);
      expect(await messagesOf(marked)).toEqual(expected);
      if (source === spotter) expect(await messagesOf(marked, 1000)).toEqual(expected);
    }
  });
});
