import { createHash } from "node:crypto";
import { canonicalJson } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";

/** A detected loop. */
export interface LoopDetection {
  readonly kind: "repeated-call" | "call-cycle" | "repeated-content";
  /** Human-readable description, e.g. `read_file({"path":"a.ts"}) ×5`. */
  readonly pattern: string;
}

/** Loop-detection settings; 0 disables a check. */
export interface LoopDetectorOptions {
  /** Identical consecutive calls that make a loop. Default 5. */
  readonly repeatThreshold?: number;
  /** How many times a cycle of 2–5 calls must repeat. Default 5. */
  readonly cycleRepeats?: number;
  /** Calls remembered (bounds memory and per-call work). Default 50. */
  readonly window?: number;
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);

function signature(name: string, canonicalInput: string): string {
  return `${name}:${digest(canonicalInput)}`;
}

/** One tool call as loop detection remembers it. */
export interface LoopCall {
  /** Name and canonical arguments: equal calls have equal signatures. */
  readonly signature: string;
  /** How a detection names it. */
  readonly label: string;
  /** The call's id, to match its result. */
  readonly callId?: string;
  /** Digest of its result, once seen: a call repeated with the same result made no progress. */
  readonly result?: string;
}

/** Whether `later` repeats `earlier`: the same call, and unless `later` is still waiting, the same result. */
function repeats(earlier: LoopCall, later: LoopCall, laterIsNewest: boolean): boolean {
  if (earlier.signature !== later.signature) return false;
  return laterIsNewest || earlier.result === later.result;
}

/**
 * Watches tool calls as they are made and reports a loop: the same call (name + canonical arguments) with the same
 * result repeated `repeatThreshold` times in a row, or a cycle of 2–5 such calls repeated `cycleRepeats` times.
 * Results count: polling a running command (the same call, new output each time) is progress, not a loop. Work
 * per call is bounded by the window, never by the history.
 *
 * @example
 * const detector = new LoopDetector();
 * for (const message of newMessages) { const loop = detector.observe(message); if (loop) stop(loop.pattern); }
 */
export class LoopDetector {
  readonly #repeatThreshold: number;
  readonly #cycleRepeats: number;
  readonly #window: number;
  #calls: LoopCall[] = [];

  constructor(options: LoopDetectorOptions = {}) {
    this.#repeatThreshold = options.repeatThreshold ?? 5;
    this.#cycleRepeats = options.cycleRepeats ?? 5;
    this.#window = Math.max(options.window ?? 50, 5 * this.#cycleRepeats, this.#repeatThreshold);
  }

  /** Feeds one message; returns a detection when its tool calls complete a loop. */
  observe(message: Message): LoopDetection | undefined {
    if (message.role === "user" && message.kind === undefined) this.#calls = [];
    let detection: LoopDetection | undefined;
    for (const block of message.content) {
      if (block.type === "tool-result") {
        this.#recordResult(block.callId, canonicalJson(block.content) + (block.isError === true ? "!" : ""));
        continue;
      }
      if (block.type !== "tool-call") continue;
      const input = canonicalJson(block.input);
      this.#calls.push({
        signature: signature(block.name, input),
        label: `${block.name}(${input.slice(0, 80)})`,
        callId: block.id,
      });
      if (this.#calls.length > this.#window) this.#calls.shift();
      detection ??= this.#check();
    }
    return detection;
  }

  #recordResult(callId: string, content: string): void {
    const index = this.#calls.findLastIndex((call) => call.callId === callId);
    if (index >= 0) this.#calls[index] = { ...this.#calls[index]!, result: digest(content) };
  }

  /** Forgets every call seen (e.g. after the user intervened). */
  reset(): void {
    this.#calls = [];
  }

  /** The recent calls it remembers: a plain value to persist and `restore` later. */
  get recentCalls(): readonly LoopCall[] {
    return this.#calls.map((call) => ({ ...call }));
  }

  /** Takes back what `recentCalls` returned (the newest `window` of them). */
  restore(calls: readonly LoopCall[]): void {
    this.#calls = calls.slice(-this.#window).map((call) => ({ ...call }));
  }

  #check(): LoopDetection | undefined {
    const calls = this.#calls;
    const last = calls.at(-1)!;
    if (this.#repeatThreshold > 0 && calls.length >= this.#repeatThreshold) {
      const tail = calls.slice(-this.#repeatThreshold);
      if (tail.every((call, index) => index === 0 || repeats(tail[index - 1]!, call, call === last))) {
        return { kind: "repeated-call", pattern: `${last.label} ×${this.#repeatThreshold}` };
      }
    }
    if (this.#cycleRepeats === 0) return undefined;
    for (let cycle = 2; cycle <= 5; cycle++) {
      const needed = cycle * this.#cycleRepeats;
      if (calls.length < needed) break;
      const tail = calls.slice(-needed);
      const distinct = new Set(tail.slice(0, cycle).map((call) => call.signature)).size;
      if (distinct < 2) continue;
      if (tail.every((call, index) => repeats(tail[index % cycle]!, call, call === last))) {
        const labels = tail
          .slice(0, cycle)
          .map((call) => call.label)
          .join(" → ");
        return { kind: "call-cycle", pattern: `[${labels}] ×${this.#cycleRepeats}` };
      }
    }
    return undefined;
  }
}

/**
 * Watches a streamed reply for a chunk of text repeated over and over (a model stuck generating the same
 * sentence). Feed it deltas; it reports when a `chunkSize`-character chunk has appeared `threshold` times.
 *
 * @example
 * const watcher = new StreamLoopDetector();
 * for await (const delta of stream) if (watcher.push(delta)) abort();
 */
export class StreamLoopDetector {
  readonly #chunkSize: number;
  readonly #threshold: number;
  #buffer = "";
  readonly #counts = new Map<string, number>();

  constructor(options: { chunkSize?: number; threshold?: number } = {}) {
    this.#chunkSize = options.chunkSize ?? 64;
    this.#threshold = options.threshold ?? 10;
  }

  /** Adds streamed text; returns a detection once a chunk repeats `threshold` times. */
  push(delta: string): LoopDetection | undefined {
    this.#buffer += delta;
    while (this.#buffer.length >= this.#chunkSize) {
      const chunk = this.#buffer.slice(0, this.#chunkSize);
      this.#buffer = this.#buffer.slice(this.#chunkSize);
      if (chunk.trim().length < this.#chunkSize / 4) continue;
      const count = (this.#counts.get(chunk) ?? 0) + 1;
      this.#counts.set(chunk, count);
      if (count >= this.#threshold) {
        return { kind: "repeated-content", pattern: `"${chunk.slice(0, 40)}…" repeated ${count} times` };
      }
    }
    return undefined;
  }
}
