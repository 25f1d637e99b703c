import type { CommandRegistration } from "../program.ts";
import { registerConfig } from "./config.ts";
import { registerDemo } from "./demo.ts";
import { registerReplay } from "./replay.ts";
import { registerStats } from "./stats.ts";

/** Every CLI command, in help order. */
export const commands: readonly CommandRegistration[] = [
  registerDemo,
  registerConfig,
  registerStats,
  registerReplay,
];
