// Every policy the cost-and-retention bench replays: none, ctxkit's default, and the peers reimplemented as
// ctxkit processors so all share the replay machinery, the summarizer and the window.
import { preset } from "../../src/governance/presets.ts";
import type { GovernancePolicyInput } from "../../src/governance/policy.ts";
import type { Processor } from "../../src/governance/processor.ts";
import { claudeCodeCompaction } from "./claude-code.ts";
import { coCliTrimming, coCliWindow } from "./co-cli.ts";
import { codexCompaction, codexTruncation } from "./codex.ts";
import { cowAgentTrimming, cowAgentTruncation } from "./cowagent.ts";
import { geminiCompression, geminiMasking } from "./gemini-cli.ts";
import { opencodeCompaction, opencodePrune } from "./opencode.ts";
import { peerPolicy } from "./peer-support.ts";

/** A named governance configuration for `replayConversation`. */
export interface BenchPolicy {
  readonly name: string;
  readonly policy: GovernancePolicyInput;
  /** Undefined: ctxkit's default processors. */
  readonly processors?: readonly Processor[];
  /**
   * Its checkpoints weigh the provider's cache prices (ctxkit's): replayed once per price list, as an engine
   * on that provider's model would run it. The peers decide the same way whatever the prices.
   */
  readonly pricedByProvider?: boolean;
}

/** No governance, ctxkit's default, then the peers. */
export const benchPolicies: readonly BenchPolicy[] = [
  { name: "no governance", policy: preset("off") },
  { name: "ctxkit default", policy: {}, pricedByProvider: true },
  { name: "ctxkit aggressive", policy: preset("aggressive"), pricedByProvider: true },
  { name: "Gemini CLI", policy: peerPolicy, processors: [geminiMasking, geminiCompression] },
  { name: "OpenCode", policy: peerPolicy, processors: [opencodePrune, opencodeCompaction] },
  { name: "Codex CLI", policy: peerPolicy, processors: [codexTruncation, codexCompaction] },
  { name: "Claude Code", policy: peerPolicy, processors: [claudeCodeCompaction] },
  { name: "co-cli", policy: peerPolicy, processors: [coCliTrimming, coCliWindow] },
  { name: "CowAgent", policy: peerPolicy, processors: [cowAgentTruncation, cowAgentTrimming] },
];
