import { ContextEngine } from "../../engine/context-engine.ts";
import type { GovernorOptions } from "../../governance/governor.ts";
import { preset } from "../../governance/presets.ts";
import { randomIds, systemClock } from "../../model/ids.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionInit, SessionStore } from "../../store/session-store.ts";

/** A governor's options, as the adapters that take them rather than an engine accept them. */
export type EngineGovernorOptions = Omit<GovernorOptions, "offloadStore" | "memorySink">;

/**
 * A context engine over `store`, governed by a governor's options: what the adapters that take a governor's options
 * rather than an engine drive their session turns through. Built synchronously (the counter and summarizer are
 * given). The reserved output follows the governor's rule: `reservedOutputTokens`, else the smallest of 20,000,
 * `maxOutputTokens` (8,192) and a quarter of the window. `recall` defaults to true.
 */
export function governedEngine(
  store: SessionStore,
  options: EngineGovernorOptions,
  sessionInit?: SessionInit,
): ContextEngine {
  const reservedOutputTokens =
    options.reservedOutputTokens ??
    Math.min(20_000, options.maxOutputTokens ?? 8_192, Math.floor(options.contextWindow / 4));
  const onEvent = options.onEvent;
  return new ContextEngine({
    store,
    contextWindow: options.contextWindow,
    reservedOutputTokens,
    counter: options.counter,
    summarizer: options.summarizer,
    compactSummarizer: options.summarizer,
    pipeline: options.pipeline ?? preset("default"),
    memory: undefined,
    coreMemoryTokens: 0,
    restore: undefined,
    sessionInit,
    recall: options.recall ?? true,
    onEvent: onEvent === undefined ? undefined : (event) => onEvent(event),
    ids: options.ids ?? randomIds,
    clock: options.clock ?? systemClock,
  });
}

/**
 * A context engine over a `MemorySessionStore` (see `governedEngine`): what `ctxkitMiddleware` and
 * `ctxkitPrepareStep` drive their session turns through.
 */
export function memoryEngine(options: GovernorOptions, owner?: object): ContextEngine {
  const engine = governedEngine(new MemorySessionStore(), options);
  if (owner !== undefined) engines.set(owner, engine);
  return engine;
}

const engines = new WeakMap<object, ContextEngine>();

/** The memory engine behind an adapter (`memoryEngine(options, adapter)`): what a test reads the session from. */
export function memoryEngineOf(owner: object): ContextEngine | undefined {
  return engines.get(owner);
}
