import { Conversation } from "../conversation/conversation.ts";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { Governor, type GovernorOptions } from "../governance/governor.ts";
import {
  governorStateNeedsOriginals,
  parseGovernorState,
  type GovernorState,
} from "../governance/governor-state.ts";
import type { JsonValue } from "../model/message.ts";
import { sessionOffloadStore } from "../store/blob-store.ts";
import type { LoadStrategy } from "../store/session-store.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { GovernorStateCodec } from "./stored-governor-state.ts";

/** A session as loaded: its history (committed state included) and its governor, as after the last commit. */
export interface LoadedSession {
  readonly conversation: Conversation;
  readonly governor: Governor;
  /** The session's owner when it was loaded (or the one it is created with); every write expects it. */
  readonly owner: string | null;
  /** Ids of the summaries the store holds (a view's other summaries are stored with the next commit). */
  readonly storedSummaries: Set<string>;
}

/** The governor settings of a session, without its side effects (offload store, memory sink, events). */
export function governorOptions(settings: EngineSettings) {
  return {
    contextWindow: settings.contextWindow,
    reservedOutputTokens: settings.reservedOutputTokens,
    counter: settings.counter,
    summarizer: settings.summarizer,
    pipeline: settings.pipeline,
    recall: settings.recall,
    ids: settings.ids,
    clock: settings.clock,
  } satisfies GovernorOptions;
}

/**
 * Loads session `id` from the engine's store: its history and the governor's state as the last commit stored it,
 * so a restarted process governs on with the same view and cache arithmetic (the provider's cached prefix holds).
 * A state another version wrote, or one that does not fit, is rebuilt instead.
 */
export async function loadSession(
  id: string,
  settings: EngineSettings,
  codec: GovernorStateCodec,
): Promise<LoadedSession> {
  const store = settings.store;
  const record = await store.getSession(id);
  const owner = settings.sessionInit?.owner;
  if (owner !== undefined && record?.owner !== undefined && record.owner !== owner) {
    throw new NotFoundError("session", id, "this engine opens its owner's sessions only");
  }
  const strategy: LoadStrategy = settings.restore ?? "full";
  const messages = record ? await store.loadMessages(id, { strategy }) : [];
  const storedSummaries = new Set<string>();
  for (const message of messages) if (message.kind === "summary") storedSummaries.add(message.id);
  const conversation = new Conversation({
    sessionId: id,
    messages,
    nextSeq: record?.nextSeq ?? 0,
    ids: settings.ids,
    clock: settings.clock,
  });
  const saved = record ? await store.loadGovernorState(id) : undefined;
  const governor = new Governor({
    ...governorOptions(settings),
    offloadStore: sessionOffloadStore(store.blobs, id),
    ...(settings.memory !== undefined && { memorySink: (entry) => settings.memory!.remember(entry) }),
    onEvent: (event: GovernanceEvent) => settings.onEvent?.(event, id),
  });
  const decoded = saved === undefined ? undefined : await codec.decode(saved, messages);
  const state = decoded === undefined ? undefined : safeGovernorState(decoded);
  if (state !== undefined) {
    // The reuse count follows recent messages, some of which a summary may have replaced in `messages`.
    const originals = governorStateNeedsOriginals(state, messages)
      ? await store.loadMessages(id, { strategy: "all" })
      : [];
    governor.restore(state, messages, originals);
  }
  return { conversation, governor, owner: (record ? record.owner : owner) ?? null, storedSummaries };
}

/** A stored governor state this version can take back, or undefined (another version's: the view is rebuilt). */
function safeGovernorState(value: JsonValue): GovernorState | undefined {
  try {
    return parseGovernorState(value);
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}
