import type { CommandRegistration } from "../program.ts";

/** Every CLI command, in help order. */
export const commands: readonly CommandRegistration[] = [];
