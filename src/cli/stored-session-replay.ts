import { readGovernanceRecord } from "../engine/governance-record.ts";
import { preset } from "../governance/presets.ts";
import { NotFoundError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import {
  sessionReplaySettings,
  type SessionReplaySettings,
} from "../server/routes/inspector-replay-settings.ts";
import type { SessionRecord, SessionStore } from "../store/session-store.ts";
import { counterForModel } from "../tokens/counter-for-model.ts";
import { reservedOutputTokens } from "../tokens/model-info.ts";
import { defaultModelRegistry } from "../tokens/model-registry.ts";

/** A stored session, its history in order and the settings the inspector replays it with. */
export interface StoredSessionReplay {
  readonly record: SessionRecord;
  readonly messages: readonly Message[];
  readonly settings: SessionReplaySettings;
}

/** What a session that recorded neither its governance nor a model is replayed as (`ctxkit replay`'s default). */
const DEFAULT_MODEL = "claude-sonnet-4-5";

/**
 * Loads a stored session for a replay that agrees with the inspector's: the same rows in seq order and the same
 * settings (`sessionReplaySettings`): the governance the session recorded, else its replies' model, else
 * `ctxkit replay`'s default model.
 *
 * @example
 * const { messages, settings } = await storedSessionReplay(store, "ses_123");
 */
export async function storedSessionReplay(store: SessionStore, id: string): Promise<StoredSessionReplay> {
  const record = await store.getSession(id);
  if (record === undefined) throw new NotFoundError("session", id, "list them with ctxkit sessions list");
  const messages = (await store.dumpSession(id)).rows.map((row) => row.message).sort((a, b) => a.seq - b.seq);
  const info = defaultModelRegistry.lookup(DEFAULT_MODEL);
  const counter = await counterForModel(info);
  const fallback = {
    contextWindow: info.contextWindow,
    reservedOutputTokens: reservedOutputTokens(info),
    counter,
    pipeline: preset("default"),
  };
  const settings = await sessionReplaySettings(
    messages,
    fallback,
    DEFAULT_MODEL,
    readGovernanceRecord(record.metadata),
  );
  return { record, messages, settings };
}
