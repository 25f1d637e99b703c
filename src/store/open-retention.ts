import type { OpenRetentionOptions, SessionStore } from "./session-store.ts";

/**
 * The opt-in retention of a store being opened: nothing unless `retentionDays` is above 0; then
 * `cleanup(retentionDays)` and `onCleanup` with what it removed. The store is closed when the cleanup fails.
 *
 * @example
 * await applyOpenRetention(store, { retentionDays: 90, onCleanup: (result) => log(result) });
 */
export async function applyOpenRetention(store: SessionStore, options: OpenRetentionOptions): Promise<void> {
  const days = options.retentionDays ?? 0;
  if (days === 0) return;
  try {
    const result = await store.cleanup(days);
    options.onCleanup?.({ ...result, olderThanDays: days });
  } catch (error) {
    await store.close();
    throw error;
  }
}
