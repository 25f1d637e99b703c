import type { CommandRegistration } from "../program.ts";
import { registerChat } from "./chat.ts";
import { registerConfig } from "./config.ts";
import { registerDemo } from "./demo.ts";
import { registerImport } from "./import.ts";
import { registerReplay } from "./replay.ts";
import { registerServe } from "./serve.ts";
import { registerSessions } from "./sessions.ts";
import { registerStats } from "./stats.ts";

/** Every CLI command, in help order. */
export const commands: readonly CommandRegistration[] = [
  registerDemo,
  registerChat,
  registerConfig,
  registerStats,
  registerReplay,
  registerServe,
  registerSessions,
  registerImport,
];
