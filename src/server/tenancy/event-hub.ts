import type { GovernanceEvent } from "../../governance/events.ts";

/** What `GET /v1/events` streams to a tenant. */
export type HubEvent =
  | { readonly type: "governance"; readonly sessionId: string; readonly event: GovernanceEvent }
  | {
      readonly type: "committed";
      readonly sessionId: string;
      readonly messageCount: number;
      readonly turnCount: number;
    }
  | { readonly type: "deleted"; readonly sessionId: string };

/** Receives a tenant's events. */
export type HubListener = (event: HubEvent) => void;

/**
 * Fans a tenant's events out to its subscribers (and only to them).
 *
 * @example
 * const unsubscribe = hub.subscribe("acme", (event) => send(event));
 * hub.publish("acme", { type: "deleted", sessionId: "ses_1" });
 */
export class EventHub {
  readonly #listeners = new Map<string, Set<HubListener>>();

  subscribe(tenant: string, listener: HubListener): () => void {
    const listeners = this.#listeners.get(tenant) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(tenant, listeners);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.#listeners.delete(tenant);
    };
  }

  publish(tenant: string, event: HubEvent): void {
    for (const listener of this.#listeners.get(tenant) ?? []) {
      try {
        listener(event);
      } catch {
        // A failing subscriber (a closed stream) must not break the request that published.
      }
    }
  }
}
