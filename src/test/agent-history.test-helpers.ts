import fc from "fast-check";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "./history-builder.ts";

/** Sizes of the generated histories (characters; the fake counter makes 4 of them a token). */
export interface AgentHistorySizes {
  /** Largest tool output. Default 16,000. */
  readonly maxOutputChars?: number;
  /** Largest file content written through a tool-call argument. Default 12,000. */
  readonly maxWrittenChars?: number;
  /** Most steps in a turn. Default 10. */
  readonly maxSteps?: number;
  /** Generate interrupted steps: the last call of such a step never gets its result. Default false. */
  readonly interrupted?: boolean;
}

/** One tool call of a generated step. */
export interface CallSpec {
  readonly name: string;
  readonly argument: string;
  readonly size: number;
  /** Characters of a written file's content passed as an argument (0: none). */
  readonly written: number;
  readonly isError: boolean;
}

/** One generated step: its calls, and whether it was interrupted before its last result came. */
export interface StepSpec {
  readonly calls: readonly CallSpec[];
  readonly interrupted: boolean;
}

/** One generated turn: the instruction, the steps of its run, and whether it ended with a reply. */
export interface TurnSpec {
  readonly instruction: string;
  readonly steps: readonly StepSpec[];
  readonly reply: boolean;
}

/**
 * Turns of an agent's run: an instruction, steps of 1–3 tool calls (outputs and written arguments of random
 * size), and an optional final reply.
 *
 * @example
 * fc.assert(fc.property(fc.array(agentTurn(), { minLength: 1 }), (turns) => buildAgentHistory(turns)));
 */
export function agentTurn(sizes: AgentHistorySizes = {}): fc.Arbitrary<TurnSpec> {
  const call: fc.Arbitrary<CallSpec> = fc.record({
    name: fc.constantFrom("bash", "read_file", "grep", "write_file"),
    argument: fc.string({ maxLength: 12 }),
    size: fc.integer({ min: 0, max: sizes.maxOutputChars ?? 16_000 }),
    written: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: sizes.maxWrittenChars ?? 12_000 })),
    isError: fc.boolean(),
  });
  const step: fc.Arbitrary<StepSpec> = fc.record({
    calls: fc.array(call, { minLength: 1, maxLength: 3 }),
    interrupted:
      sizes.interrupted === true
        ? fc.integer({ min: 0, max: 7 }).map((draw) => draw === 0)
        : fc.constant(false),
  });
  return fc.record({
    instruction: fc.string({ minLength: 1, maxLength: 200 }),
    steps: fc.array(step, { maxLength: sizes.maxSteps ?? 10 }),
    reply: fc.boolean(),
  });
}

/**
 * The history of generated turns, and the points where an agent would call the model: after each user message
 * and after each step's tool results (right after the assistant message when none came).
 */
export function buildAgentHistory(turns: readonly TurnSpec[]): { history: Message[]; requestAt: number[] } {
  const builder = new HistoryBuilder();
  const requestAfter: number[] = [];
  const unanswered = new Set<string>();
  const last = () => builder.build().length - 1;
  for (const spec of turns) {
    builder.user(spec.instruction);
    requestAfter.push(last());
    for (const step of spec.steps) {
      builder.step(
        step.calls.map((entry) => ({
          name: entry.name,
          input: {
            path: entry.argument,
            ...(entry.written > 0 && { content: `${entry.argument}\n${"w".repeat(entry.written)}` }),
          },
          output: `${entry.name} ${entry.argument}\n${"z".repeat(entry.size)}`,
          isError: entry.isError,
        })),
      );
      if (step.interrupted) unanswered.add(builder.build()[last()]!.id);
      requestAfter.push(last());
    }
    if (spec.reply) builder.reply(`done: ${spec.instruction}`);
  }
  const history = builder.build().filter((message) => !unanswered.has(message.id));
  const position = new Map(history.map((message, index) => [message.seq, index]));
  // A request point whose message was dropped falls on the message before it (the interrupted step's last one).
  const requestAt = requestAfter.map((seq) => {
    let at = seq;
    while (!position.has(at)) at--;
    return position.get(at)! + 1;
  });
  return { history, requestAt };
}
