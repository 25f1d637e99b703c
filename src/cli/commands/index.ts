import type { CommandRegistration } from "../program.ts";
import { registerConfig } from "./config.ts";

/** Every CLI command, in help order. */
export const commands: readonly CommandRegistration[] = [registerConfig];
