import type { EngineSettings } from "./engine-settings.ts";
import { loadSession, type LoadedSession } from "./session-load.ts";
import { GovernorStateCodec } from "./stored-governor-state.ts";

/**
 * The lifecycle of a session's loaded state: loaded from the store on first use (a load that failed is tried
 * again by the next use), forgotten when the session must reload what the store holds (after an interrupt), and
 * compared with the store to tell whether another process wrote the session since.
 */
export class SessionLoader {
  /** Stores the governor's state compactly (its rewritten messages once, as blobs). */
  readonly codec: GovernorStateCodec;
  readonly #id: string;
  readonly #settings: EngineSettings;
  #state: Promise<LoadedSession> | undefined;

  constructor(id: string, settings: EngineSettings) {
    this.#id = id;
    this.#settings = settings;
    this.codec = new GovernorStateCodec(settings.store.blobs, id);
  }

  /** The loaded session (loaded once; a load that failed is tried again by the next call). */
  ready(): Promise<LoadedSession> {
    if (this.#state === undefined) {
      const loading = loadSession(this.#id, this.#settings, this.codec);
      this.#state = loading;
      loading.catch(() => {
        if (this.#state === loading) this.#state = undefined;
      });
    }
    return this.#state;
  }

  /** Forgets the loaded state: the next `ready()` loads the session as stored. */
  forget(): void {
    this.#state = undefined;
  }

  /**
   * True when the store holds writes the loaded state has not seen (its `nextSeq` moved on); false when nothing is
   * loaded yet (the first use reads the store) or the load failed (the next use tries again).
   */
  async isBehindStore(): Promise<boolean> {
    const state = this.#state;
    if (state === undefined) return false;
    let loaded: LoadedSession;
    try {
      loaded = await state;
    } catch {
      return false;
    }
    const record = await this.#settings.store.getSession(this.#id);
    return (record?.nextSeq ?? 0) !== loaded.conversation.storedNextSeq;
  }
}
