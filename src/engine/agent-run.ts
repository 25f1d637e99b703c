import type { AssistantInput } from "../conversation/conversation.ts";
import { ValidationError } from "../errors/errors.ts";
import { toolCallsOf } from "../model/blocks.ts";
import type { ContentBlock, JsonValue, Message, ToolCallBlock } from "../model/message.ts";
import type { EngineSession, PrepareRequestOptions } from "./engine-session.ts";
import type { PreparedRequest } from "./prepared-request.ts";

/** Calls the model with a prepared request and returns its reply. */
export type CallModel = (request: PreparedRequest, signal: AbortSignal) => Promise<AssistantInput>;

/** Runs one tool call and returns what the model should see. */
export type ExecuteTool = (
  call: ToolCallBlock,
  signal: AbortSignal,
) => Promise<{ content: string | JsonValue; isError?: boolean }>;

/** Options of `session.run`. */
export interface RunOptions extends Omit<PrepareRequestOptions, "signal"> {
  /** Executes the tools the model calls (required when it calls any). */
  executeTool?: ExecuteTool;
  /** Step budget for this turn (model calls). Default 20. */
  maxSteps?: number;
  /** Stop the run when governance detects a tool-call loop. Default true. */
  stopOnLoop?: boolean;
}

/** How a run ended. */
export interface RunResult {
  /** The last assistant message. */
  readonly reply: Message | undefined;
  readonly steps: number;
  readonly stoppedBy: "answer" | "max-steps" | "loop";
}

/**
 * Drives one turn of an agent loop: model step → tools → model step …, within a step budget. The turn is
 * committed when the model answers (or the budget or a loop stops it); a failure or an interrupt leaves no trace.
 */
export async function runTurn(
  session: EngineSession,
  input: string | readonly ContentBlock[],
  callModel: CallModel,
  options: RunOptions = {},
): Promise<RunResult> {
  const maxSteps = options.maxSteps ?? 20;
  await session.addUser(input);
  const { executeTool, stopOnLoop = true, ...prepareOptions } = options;
  try {
    let reply: Message | undefined;
    for (let step = 1; step <= maxSteps; step++) {
      const signal = await session.beginRequest();
      const request = await session.prepare({ ...prepareOptions, maxSteps, signal });
      if (request.loop && stopOnLoop) {
        await session.commit();
        return { reply, steps: step - 1, stoppedBy: "loop" };
      }
      reply = await session.recordAssistant(await callModel(request, signal));
      const calls = toolCallsOf(reply);
      if (calls.length === 0) {
        await session.commit();
        return { reply, steps: step, stoppedBy: "answer" };
      }
      if (!executeTool)
        throw new ValidationError("the model called tools but run() was given no executeTool");
      const results = [];
      for (const call of calls) {
        const output = await executeTool(call, signal);
        results.push({
          callId: call.id,
          toolName: call.name,
          content: output.content,
          ...(output.isError && { isError: true }),
        });
      }
      await session.recordToolResults(results);
    }
    await session.commit();
    return { reply, steps: maxSteps, stoppedBy: "max-steps" };
  } catch (error) {
    await session.interrupt();
    throw error;
  }
}
