import type { AssistantInput } from "../conversation/conversation.ts";
import { ValidationError } from "../errors/errors.ts";
import { toolCallsOf } from "../model/blocks.ts";
import type { ContentBlock, JsonValue, Message, ToolCallBlock } from "../model/message.ts";
import type { EngineSession, OverflowRecovery, PrepareRequestOptions } from "./engine-session.ts";
import { runEngineTool } from "./engine-tool.ts";
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
  /**
   * Executes the tools the model calls (required when it calls any of `tools`). The engine's own tools
   * (`session.engineTools`, e.g. `search_memory`) are offered and executed by the engine.
   */
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
  /**
   * What the engine did to the context after the model rejected it as too long, in order (see
   * `EngineSession.recover`): tell the user when it was `cleared`. Empty when no request overflowed.
   */
  readonly recoveries: readonly OverflowRecovery["stage"][];
}

/**
 * Drives one turn of an agent loop: model step → tools → model step …, within a step budget. The turn is
 * committed when the model answers (or the budget or a loop stops it); a failure or an interrupt leaves no trace.
 * A model call refused as too long for the window is retried after `session.recover` (trimmed, then cleared).
 */
export async function runTurn(
  session: EngineSession,
  input: string | readonly ContentBlock[],
  callModel: CallModel,
  options: RunOptions = {},
): Promise<RunResult> {
  const maxSteps = options.maxSteps ?? 20;
  const { executeTool, stopOnLoop = true, ...rest } = options;
  const callerTools = rest.tools ?? [];
  const ownTools = session.engineTools.filter(
    (tool) => !callerTools.some((definition) => definition.name === tool.definition.name),
  );
  const prepareOptions = {
    ...rest,
    maxSteps,
    tools: [...callerTools, ...ownTools.map((tool) => tool.definition)],
  };
  const recoveries: OverflowRecovery["stage"][] = [];
  await using turn = await session.begin(input);
  let reply: Message | undefined;
  for (let step = 1; step <= maxSteps; step++) {
    const sent = await turn.send(
      async (request, signal) =>
        request.loop && stopOnLoop ? undefined : { answer: await callModel(request, signal), signal },
      prepareOptions,
    );
    recoveries.push(...sent.recoveries.map((recovery) => recovery.stage));
    if (sent.response === undefined) {
      await turn.commit();
      return { reply, steps: step - 1, stoppedBy: "loop", recoveries };
    }
    const { answer, signal } = sent.response;
    [reply] = await turn.record(answer);
    const calls = toolCallsOf(reply!);
    if (calls.length === 0) {
      await turn.commit();
      return { reply, steps: step, stoppedBy: "answer", recoveries };
    }
    const results = [];
    for (const call of calls) {
      const own = ownTools.find((tool) => tool.definition.name === call.name);
      let output: Awaited<ReturnType<ExecuteTool>>;
      if (own) output = await runEngineTool(own, call, signal);
      else if (executeTool) output = await executeTool(call, signal);
      else throw new ValidationError("the model called tools but run() was given no executeTool");
      results.push({
        callId: call.id,
        toolName: call.name,
        content: output.content,
        ...(output.isError && { isError: true }),
      });
    }
    await turn.record(results);
  }
  await turn.commit();
  return { reply, steps: maxSteps, stoppedBy: "max-steps", recoveries };
}
