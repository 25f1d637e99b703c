// Every policy the cost-and-grounding bench replays: none, ctxkit's presets, the peers reimplemented as ctxkit
// processors (so all share the replay machinery, the summarizer and the meters), and LangChain v1 run for real.
import { preset } from "../../src/governance/presets.ts";
import type { GovernancePipeline } from "../../src/governance/pipeline.ts";
import type { PresetOptionsInput } from "../../src/governance/preset-options.ts";
import { anthropicClearToolUses } from "./anthropic-context-editing.ts";
import { claudeCodeCompaction } from "./claude-code.ts";
import { coCliTrimming, coCliWindow } from "./co-cli.ts";
import { codexCompaction, codexTruncation } from "./codex.ts";
import { cowAgentTrimming, cowAgentTruncation } from "./cowagent.ts";
import { geminiCompression, geminiMasking } from "./gemini-cli.ts";
import type { LangChainContextSize } from "./langchain.ts";
import { opencodeCompaction, opencodePrune } from "./opencode.ts";
import { peerPipeline } from "./peer-support.ts";

/**
 * The window a policy runs with at its users' real settings: a number, the recorded agent's own, or the
 * recorded agent's own when that agent ran at 1M (`long-context`: a Claude Code session that outgrew 200k ran
 * with Claude Code's 1M window, so its own policy had that window), else the number.
 */
export type RealWindow = number | "recorded" | { readonly longContext: number };

/** How a policy is replayed. */
export type BenchPolicy =
  | {
      /** A governor with ctxkit's processors (a preset) or a peer's (`peerPipeline`). */
      readonly kind: "governor";
      readonly name: string;
      readonly pipeline: GovernancePipeline;
      /**
       * The preset (name and knobs) `pipeline` was built from, for ctxkit's own: plain data a worker thread can be
       * sent, to rebuild the pipeline with other knobs (held-out reuse rates, cross-validation candidates).
       */
      readonly preset?: BenchPreset;
      /**
       * Its checkpoints weigh the provider's cache prices and the summarizer's price (ctxkit): replayed once per
       * provider, with a summarizer priced as an LLM (the headline) and with the free offline one (as run).
       */
      readonly ctxkit?: boolean;
      /** Who places Anthropic breakpoints in its payloads (default ctxkit's placement). */
      readonly breakpoints?: "ctxkit" | "newest";
      readonly window: RealWindow;
      /** Where the window and the peer's settings come from, for the tables. */
      readonly note?: string;
    }
  | {
      /** The real `langchain` package's `createAgent` with its middleware. */
      readonly kind: "langchain";
      readonly name: string;
      readonly trigger: LangChainContextSize;
      readonly keep: LangChainContextSize;
      readonly window: RealWindow;
      readonly note?: string;
    };

/** A ctxkit preset as data: its name and its knobs. */
export interface BenchPreset {
  readonly name: string;
  readonly options: PresetOptionsInput;
}

/** ctxkit's preset `name` with `options`, as a bench policy's pipeline and the data to rebuild it. */
export function ctxkitPreset(
  name: string,
  options: PresetOptionsInput = {},
): { pipeline: GovernancePipeline; preset: BenchPreset } {
  return { pipeline: preset(name, options), preset: { name, options } };
}

const M = 1_048_576;

/** No governance, ctxkit's default and aggressive presets, then the peers at their users' windows. */
export const benchPolicies: readonly BenchPolicy[] = [
  { kind: "governor", name: "no governance", pipeline: preset("off"), window: "recorded" },
  { kind: "governor", name: "ctxkit default", ...ctxkitPreset("default"), ctxkit: true, window: "recorded" },
  {
    kind: "governor",
    name: "ctxkit aggressive",
    ...ctxkitPreset("aggressive"),
    ctxkit: true,
    window: "recorded",
  },
  {
    kind: "governor",
    name: "Claude Code",
    pipeline: peerPipeline([claudeCodeCompaction]),
    breakpoints: "newest",
    window: { longContext: 200_000 },
    note: "200k (Claude models), 1M where the recorded Claude Code session ran at 1M",
  },
  {
    kind: "governor",
    name: "Gemini CLI",
    pipeline: peerPipeline([geminiMasking, geminiCompression]),
    window: M,
    note: "1M (Gemini 2.5 Pro), compression at 0.5",
  },
  {
    kind: "governor",
    name: "Codex CLI",
    pipeline: peerPipeline([codexTruncation, codexCompaction]),
    window: 272_000,
    note: "272k (GPT-5 Codex input window)",
  },
  {
    kind: "governor",
    name: "OpenCode",
    pipeline: peerPipeline([opencodePrune, opencodeCompaction]),
    window: 200_000,
    note: "200k (its common Claude models)",
  },
  {
    kind: "governor",
    name: "co-cli",
    pipeline: peerPipeline([coCliTrimming, coCliWindow]),
    window: "recorded",
  },
  {
    kind: "governor",
    name: "CowAgent",
    pipeline: peerPipeline([cowAgentTruncation, cowAgentTrimming]),
    window: "recorded",
  },
  {
    kind: "governor",
    name: "Anthropic context editing*",
    pipeline: peerPipeline([anthropicClearToolUses]),
    window: "recorded",
    note: "clear_tool_uses_20250919 defaults, reimplemented from the documentation",
  },
  {
    kind: "langchain",
    name: "LangChain v1",
    trigger: { fraction: 0.8 },
    keep: { fraction: 0.3 },
    window: "recorded",
    note: "createAgent + summarizationMiddleware (trigger 0.8 of the window, keep 0.3) + contextEditingMiddleware defaults",
  },
];
