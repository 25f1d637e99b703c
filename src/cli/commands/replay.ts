import type { Command } from "commander";
import { presetNames } from "../../governance/presets.ts";
import type { CliIo, CommandRegistration } from "../program.ts";
import { withStoreOptions } from "./sessions-store.ts";

/**
 * `ctxkit replay <file>` / `ctxkit replay --session <id>`: replays a real transcript, or a stored session with the
 * governance it recorded (the figures the inspector shows), through governance and reports tokens, cache and cost.
 */
export const registerReplay: CommandRegistration = (program: Command, io: CliIo) => {
  const command = program
    .command("replay")
    .description(
      "replay a recorded agent session through ctxkit governance: tokens, prompt-cache hits, cost, retention",
    )
    .argument(
      "[file]",
      "transcript (Claude Code, Codex, Gemini CLI, OpenAI chat, SWE-agent, ctxkit JSONL); or use --session",
    )
    .option(
      "--session <id>",
      "replay a stored session instead of a file, with the governance it recorded (what the inspector shows)",
    );
  withStoreOptions(command)
    .option(
      "--format <format>",
      "transcript format: auto|claude-code|codex|gemini-cli|openai|swe-agent|ctxkit",
      "auto",
    )
    .option("--conversation <id|index>", "which conversation of the file (default: the first main one)")
    .option("--model <id>", "model whose window and tokenizer to use (default: the recorded one)")
    .option("--window <tokens>", "context window in tokens (default: the model's)")
    .option("--preset <name>", `governance preset: ${presetNames.join("|")}`)
    .option("--config <file>", "JSON file with { preset?, policy? } governance settings")
    .option(
      "--pricing <provider>",
      "price with this provider's prompt cache: anthropic|openai|gemini|none (default: the recorded model's)",
    )
    .option(
      "--breakpoints <placement>",
      "Anthropic cache breakpoints: ctxkit|newest (Claude Code's)",
      "ctxkit",
    )
    .option("--cache-ttl <ttl>", "Anthropic cache entry lifetime: 5m|1h", "5m")
    .option("--json", "print { requests, totals } as JSON")
    .option(
      "--explain [count]",
      "list the spans missing from the views of the worst-grounded requests (default 5)",
    )
    .option("--dump <dir>", "write each governed request as request-<index>.json (OpenAI chat format)")
    .option(
      "--dump-provider <provider>",
      "openai|anthropic: with anthropic, also request-<index>.anthropic.json, the Anthropic payload with its cache breakpoints",
      "openai",
    )
    .action(async (file: string | undefined, options: Record<string, unknown>) =>
      (await import("./run-replay.ts")).runReplay(file, options, io),
    );
};
