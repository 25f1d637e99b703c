import { z } from "zod";
import type { GovernancePipeline } from "../governance/pipeline.ts";
import {
  describePipeline,
  pipelineFromRecord,
  pipelineRecordSchema,
  type PipelineRecord,
} from "../governance/pipeline-record.ts";
import { preset } from "../governance/presets.ts";
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
  /**
   * The pipeline, rebuilt from its record (built-in processors with their options, and the governor settings;
   * processors of one's own cannot be rebuilt and are left out).
   */
  readonly pipeline: GovernancePipeline;
}

const recordSchema = z.object({
  model: z.string().optional(),
  contextWindow: z.number().int().positive(),
  reservedOutputTokens: z.number().int().nonnegative(),
  pipeline: pipelineRecordSchema.optional(),
  /** Records written before pipelines: the default preset's knobs as given. */
  policy: z.record(z.string(), z.json()).optional(),
});

/**
 * The session fields an engine creates its sessions with: the caller's, with the governance record added to
 * their metadata.
 *
 * @example
 * withGovernanceRecord({ agent: "demo" }, { contextWindow: 48_000, reservedOutputTokens: 4_096, pipeline });
 */
export function withGovernanceRecord(init: SessionInit | undefined, record: GovernanceRecord): SessionInit {
  const governance: { [key: string]: JsonValue | PipelineRecord | undefined } = {
    ...(record.model !== undefined && { model: record.model }),
    contextWindow: record.contextWindow,
    reservedOutputTokens: record.reservedOutputTokens,
    pipeline: describePipeline(record.pipeline),
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
  if (!parsed.success) return undefined;
  const { model, contextWindow, reservedOutputTokens } = parsed.data;
  let pipeline: GovernancePipeline;
  try {
    pipeline =
      parsed.data.pipeline !== undefined
        ? pipelineFromRecord(parsed.data.pipeline).pipeline
        : preset("default", parsed.data.policy ?? {});
  } catch {
    return undefined;
  }
  return { ...(model !== undefined && { model }), contextWindow, reservedOutputTokens, pipeline };
}
