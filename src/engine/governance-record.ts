import { z } from "zod";
import type { GovernancePolicyInput } from "../governance/policy.ts";
import type { JsonValue } from "../model/message.ts";
import type { SessionInit, SessionMetadata } from "../store/session-store.ts";

/** The metadata key a session's governance record is stored under. */
export const GOVERNANCE_METADATA_KEY = "governance";

/**
 * The governance a session ran with, stored in its metadata when the engine creates it, so a later replay (the
 * inspector, `ctxkit replay --session`) governs the stored history as the session was governed, not with the
 * settings of whoever views it.
 */
export interface GovernanceRecord {
  /** The engine's model id, when it had one. */
  readonly model?: string;
  readonly contextWindow: number;
  readonly reservedOutputTokens: number;
  /** The governance settings as given (defaults are not written out). */
  readonly policy: { readonly [key: string]: JsonValue };
}

const recordSchema = z.object({
  model: z.string().optional(),
  contextWindow: z.number().int().positive(),
  reservedOutputTokens: z.number().int().nonnegative(),
  policy: z.record(z.string(), z.json()),
});

/** `policy` as JSON (settings that are not JSON, such as functions, are left out). */
function policyJson(policy: GovernancePolicyInput): GovernanceRecord["policy"] {
  return JSON.parse(JSON.stringify(policy)) as GovernanceRecord["policy"];
}

/**
 * The session fields an engine creates its sessions with: the caller's, with the governance record added to
 * their metadata.
 *
 * @example
 * withGovernanceRecord({ agent: "demo" }, { contextWindow: 48_000, reservedOutputTokens: 4_096, policy: {} });
 */
export function withGovernanceRecord(
  init: SessionInit | undefined,
  record: Omit<GovernanceRecord, "policy"> & { readonly policy: GovernancePolicyInput },
): SessionInit {
  const governance: GovernanceRecord = {
    ...(record.model !== undefined && { model: record.model }),
    contextWindow: record.contextWindow,
    reservedOutputTokens: record.reservedOutputTokens,
    policy: policyJson(record.policy),
  };
  return {
    ...init,
    metadata: { ...init?.metadata, [GOVERNANCE_METADATA_KEY]: governance as unknown as JsonValue },
  };
}

/**
 * The governance record in a session's metadata; undefined when it has none (a session created before records
 * were kept, or by a store client other than the engine) or when it is not one.
 *
 * @example
 * readGovernanceRecord(record.metadata)?.contextWindow; // 48000
 */
export function readGovernanceRecord(metadata: SessionMetadata | undefined): GovernanceRecord | undefined {
  const parsed = recordSchema.safeParse(metadata?.[GOVERNANCE_METADATA_KEY]);
  return parsed.success ? parsed.data : undefined;
}
