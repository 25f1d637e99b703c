import { ContextEngine } from "../../engine/context-engine.ts";
import type { GovernorOptions } from "../../governance/governor.ts";
import { preset } from "../../governance/presets.ts";
import { randomIds, systemClock } from "../../model/ids.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";

/**
 * A context engine over a `MemorySessionStore`, governed by a governor's options: what the adapters that take a
 * governor's options rather than an engine (`ctxkitMiddleware`, `ctxkitPrepareStep`) drive their session turns
 * through. Built synchronously (the counter and summarizer are given). The reserved output follows the governor's
 * rule: `reservedOutputTokens`, else the smallest of 20,000, `maxOutputTokens` (8,192) and a quarter of the window.
 */
export function memoryEngine(options: GovernorOptions, owner?: object): ContextEngine {
  const reservedOutputTokens =
    options.reservedOutputTokens ??
    Math.min(20_000, options.maxOutputTokens ?? 8_192, Math.floor(options.contextWindow / 4));
  const onEvent = options.onEvent;
  const engine = new ContextEngine({
    store: new MemorySessionStore(),
    contextWindow: options.contextWindow,
    reservedOutputTokens,
    counter: options.counter,
    summarizer: options.summarizer,
    compactSummarizer: options.summarizer,
    pipeline: options.pipeline ?? preset("default"),
    memory: undefined,
    coreMemoryTokens: 0,
    restore: undefined,
    sessionInit: undefined,
    recall: options.recall ?? true,
    onEvent: onEvent === undefined ? undefined : (event) => onEvent(event),
    ids: options.ids ?? randomIds,
    clock: options.clock ?? systemClock,
  });
  if (owner !== undefined) engines.set(owner, engine);
  return engine;
}

const engines = new WeakMap<object, ContextEngine>();

/** The memory engine behind an adapter (`memoryEngine(options, adapter)`): what a test reads the session from. */
export function memoryEngineOf(owner: object): ContextEngine | undefined {
  return engines.get(owner);
}
