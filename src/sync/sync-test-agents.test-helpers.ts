// Test agents for the sync server tests: a desktop executor with its own durable session database (standing in
// for Contop's ADK SQLite sessions, which survive a server restart) and a conversation agent run through the CLI
// proxy (`CliModel` over the fake CLI).
import { tool } from "ai";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Message } from "../model/message.ts";
import { CliModel } from "./cli-model.ts";
import type { ConversationResponder, Executor, ExecutorRun } from "./executor.ts";
import { languageModelResponder } from "./language-model-responder.ts";
import type { ToolCallRecord } from "./tool-summary.ts";

const fakeCli = fileURLToPath(new URL("./fixtures/fake-cli.ts", import.meta.url));

/** A record of one executor call. */
export interface ExecutorCall {
  readonly intent: string;
  readonly executorSessionId: string | undefined;
  readonly restored: boolean;
  readonly message: string;
  /** How many earlier runs the executor session held when this one started. */
  readonly historyBefore: number;
}

/** The executor's durable session database: it outlives any one server. */
export class ExecutorDatabase {
  readonly sessions = new Map<string, { runs: { message: string; calls: ToolCallRecord[] }[] }>();
  readonly calls: ExecutorCall[] = [];
  readonly restores: string[] = [];
  readonly discarded: string[] = [];
  #next = 1;

  /** A desktop agent that lists or deletes files; `gate` (when set) holds each run until it resolves. */
  executor(gate?: () => Promise<void>): Executor {
    return async (intent: string, run: ExecutorRun) => {
      const existing =
        run.executorSessionId === undefined ? undefined : this.sessions.get(run.executorSessionId);
      const sessionId = existing ? run.executorSessionId! : `adk-${this.#next++}`;
      const session = existing ?? { runs: [] };
      this.sessions.set(sessionId, session);
      this.calls.push({
        intent,
        executorSessionId: run.executorSessionId,
        restored: run.restored,
        message: run.message,
        historyBefore: session.runs.length,
      });
      run.emit("working… ");
      if (gate) await gate();
      const command = /delete/i.test(intent) ? "rm ~/Desktop/passwords.txt" : "ls ~/Desktop";
      const calls: ToolCallRecord[] = [
        {
          name: "execute_cli",
          input: { command },
          result: command.startsWith("ls") ? "passwords.txt notes.md" : "",
        },
      ];
      session.runs.push({ message: run.message, calls });
      const answer = command.startsWith("ls")
        ? "I found passwords.txt on your desktop."
        : "Deleted passwords.txt.";
      return { answer, toolSummary: calls, sessionId };
    };
  }

  restore = async (_agent: string, executorSessionId: string): Promise<void> => {
    if (!this.sessions.has(executorSessionId)) throw new Error(`no session ${executorSessionId}`);
    this.restores.push(executorSessionId);
  };

  discard = async (_agent: string, executorSessionId: string): Promise<void> => {
    this.discarded.push(executorSessionId);
    this.sessions.delete(executorSessionId);
  };
}

/**
 * The conversation agent through the CLI proxy: the fake CLI answers chat and asks for the `desktop` tool when
 * the request mentions the desktop or a file. `seen` records the messages of every call.
 */
export function cliConversationAgent(seen: (readonly Message[])[] = []): ConversationResponder {
  const responder = languageModelResponder({
    model: new CliModel({ command: process.execPath, args: [fakeCli, "classify"] }),
    instructions: "You are Contop. You chat, and hand desktop work to the desktop agent.",
    tools: {
      desktop: tool({
        description: "Needs the user's computer",
        inputSchema: z.object({ task: z.string() }),
      }),
    },
  });
  return (turn) => {
    seen.push(turn.messages);
    return responder(turn);
  };
}
