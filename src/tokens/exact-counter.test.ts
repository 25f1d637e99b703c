import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { transcriptFiles, transcriptName } from "../../test/support/transcripts.ts";
import { boundedPieces, MAX_RUN, PIECE_SIZE } from "./bounded-pieces.ts";
import { createExactCounter } from "./exact-counter.ts";
import { estimatorProfile } from "./estimator-profiles.ts";
import { sumMessageTokens } from "./message-costs.ts";

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

/** Deterministic pseudo-random text over `alphabet` (a linear congruential generator). */
function randomText(length: number, alphabet: string, seed: number): string {
  const characters = [...alphabet];
  let state = seed;
  let text = "";
  while (text.length < length) {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    text += characters[state % characters.length];
  }
  return text;
}

/** Every text the counter bills in the shared transcripts that is longer than `minLength`, with its file. */
async function corpusTexts(minLength: number): Promise<{ file: string; text: string }[]> {
  const costs = estimatorProfile("o200k_base").costs;
  const found: { file: string; text: string }[] = [];
  for (const file of transcriptFiles) {
    for (const conversation of await importTranscriptFile(file)) {
      for (const message of conversation.messages) {
        sumMessageTokens(message, costs, (text) => {
          if (text.length > minLength) found.push({ file: transcriptName(file), text });
          return 0;
        });
      }
    }
  }
  return found;
}

describe("createExactCounter", () => {
  it("counts o200k_base text exactly, treating special-token text as ordinary text", async () => {
    const counter = await createExactCounter("o200k_base");
    expect(counter.name).toBe("o200k_base");
    expect(counter.countText("hello world")).toBe(2);
    expect(counter.countText("")).toBe(0);
    expect(counter.countText("a <|endoftext|> b")).toBeGreaterThan(3);
  });

  it("adds OpenAI's chat framing: 4 per message, and the tool-call and tool-result overheads", async () => {
    const counter = await createExactCounter("o200k_base");
    const [user, assistant, tool] = new HistoryBuilder()
      .user("hello world")
      .step([{ name: "read_file", input: { path: "a.ts" }, output: "export {}" }])
      .build();
    expect(counter.countMessage(user!)).toBe(2 + 4);
    const argumentsTokens = counter.countText('{"path":"a.ts"}') + counter.countText("read_file");
    expect(counter.countMessage(assistant!)).toBe(4 + 10 + argumentsTokens);
    expect(counter.countMessage(tool!)).toBe(4 + 8 + counter.countText("export {}"));
  });

  it("distinguishes cl100k_base, which needs more tokens outside English", async () => {
    const [o200k, cl100k] = await Promise.all([
      createExactCounter("o200k_base"),
      createExactCounter("cl100k_base"),
    ]);
    const russian = "Управление контекстом агента сложно";
    expect(cl100k.name).toBe("cl100k_base");
    expect(cl100k.countText(russian)).toBeGreaterThan(o200k.countText(russian));
  });

  it("returns counters that share one loaded encoding", async () => {
    const [first, second] = await Promise.all([
      createExactCounter("o200k_base"),
      createExactCounter("o200k_base"),
    ]);
    const message: Message = new HistoryBuilder().user("the same text, counted twice").build()[0]!;
    expect(first.countMessage(message)).toBe(second.countMessage(message));
  });

  it("counts the shared transcripts exactly as gpt-tokenizer counts each text whole", async () => {
    // Texts up to MAX_RUN characters are counted whole by construction; the sample is every longer text of the
    // corpus (about a thousand, 5 M characters): every 3rd one, and all that are cut into several pieces.
    const [o200kCounter, cl100kCounter] = await Promise.all([
      createExactCounter("o200k_base"),
      createExactCounter("cl100k_base"),
    ]);
    const texts = await corpusTexts(MAX_RUN);
    expect(texts.length).toBeGreaterThan(100);
    const sample = texts.filter(({ text }, index) => index % 3 === 0 || text.length > PIECE_SIZE);
    for (const { file, text } of sample) {
      expect(o200kCounter.countText(text), file).toBe(o200k(text, NO_SPECIAL));
    }
    for (const { file, text } of sample.filter(({ text }) => text.length > PIECE_SIZE)) {
      expect(boundedPieces(text).length, file).toBeGreaterThan(1);
      expect(cl100kCounter.countText(text), file).toBe(cl100k(text, NO_SPECIAL));
    }
  });

  it.each([
    ["one letter", "a".repeat(6_000)],
    ["one upper-case letter", "A".repeat(6_000)],
    ["spaces", " ".repeat(6_000)],
    ["line breaks", "\n".repeat(6_000)],
    ["dashes", "-".repeat(6_000)],
    ["one word without spaces", "hello".repeat(1_200)],
    ["alternating case", "aA".repeat(3_000)],
    ["random letters", randomText(6_000, "abcdefghijklmnopqrstuvwxyz", 1)],
    ["random punctuation", randomText(6_000, "!@#$%^&*()_+{}|:<>?[];,.~`", 2)],
    ["random CJK without punctuation", randomText(6_000, "的一是不了人我在有他这中大来上国个到说们", 3)],
    ["random Cyrillic", randomText(6_000, "абвгдежзийклмнопрстуфхцчшщ", 4)],
  ])("counts a pathological run (%s) within 1%%, at most one token per forced cut", async (_name, text) => {
    const counter = await createExactCounter("o200k_base");
    const exact = o200k(text, NO_SPECIAL);
    const counted = counter.countText(text);
    const forcedCuts = boundedPieces(text).length - 1;
    expect(forcedCuts).toBeGreaterThan(0);
    expect(Math.abs(counted - exact)).toBeLessThanOrEqual(forcedCuts);
    expect(Math.abs(counted - exact)).toBeLessThanOrEqual(Math.max(1, exact / 100));
  });

  it("counts a megabyte of one character (quadratic before: hours) and of base64", async () => {
    const counter = await createExactCounter("o200k_base");
    expect(counter.countText("a".repeat(1 << 20))).toBe((1 << 20) / 8);
    const base64 = randomText(1 << 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 5);
    expect(counter.countText(base64)).toBe(o200k(base64, NO_SPECIAL));
  });

  it("counts asynchronously to the same figures, letting the event loop run in between", async () => {
    const counter = await createExactCounter("o200k_base");
    const text = randomText(200_000, "abcdefghijklmnopqrstuvwxyz ", 6);
    const message = new HistoryBuilder().user(text).build()[0]!;
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const [asyncText, asyncMessage] = [
      await counter.countTextAsync!(text),
      await counter.countMessageAsync!(message),
    ];
    clearInterval(tick);
    expect(turns).toBeGreaterThan(0);
    expect(asyncText).toBe(o200k(text, NO_SPECIAL));
    expect(asyncMessage).toBe(counter.countMessage(message));
    expect(asyncMessage).toBe(asyncText + 4);
  });
});
