import type { Attributes } from "@opentelemetry/api";
import type { GovernanceEvent } from "../governance/events.ts";
import { meterOf, operationAttributes, tracerOf, type TelemetryOptions } from "./telemetry-options.ts";

/** What `ctxkitTelemetry` returns: the listener to give the engine (`createContextEngine({ onEvent })`). */
export interface GovernanceTelemetry {
  readonly onEvent: (event: GovernanceEvent, sessionId: string) => void;
}

/** The event's own figures as span attributes (counts and names only: no message text). */
function eventAttributes(event: GovernanceEvent): Attributes {
  const attributes: Attributes = {};
  const set = (name: string, value: string | number | undefined) => {
    if (value !== undefined) attributes[`ctxkit.governance.${name}`] = value;
  };
  switch (event.type) {
    case "compaction-start":
    case "compaction-rolled-back":
    case "checkpoint-skipped":
      set("reason", event.reason);
      break;
    case "summarizer-failed":
      set("fallback", event.fallback);
      break;
    case "compaction-end":
      set("summarizer", event.summarizer);
      set("summaryTokens", event.summaryTokens);
      set("durationMs", event.durationMs);
      break;
    case "tool-output-offloaded":
      set("offloadCount", event.refs.length);
      break;
    case "turns-trimmed":
      set("turns", event.turns);
      break;
    case "overflow-prevented":
      set("windowTokens", event.windowTokens);
      break;
    case "orphans-repaired":
      set("synthesized", event.synthesized);
      set("dropped", event.dropped);
      break;
    case "loop-detected":
      set("pattern", event.pattern);
      break;
    case "emergency-recovery":
      set("stage", event.stage);
      break;
    default:
      break;
  }
  return attributes;
}

/**
 * Governance events as OpenTelemetry spans and metrics. Each event is a span named `ctxkit.governance.<event>`
 * (e.g. `ctxkit.governance.compaction-end`, timed over the compaction's duration), a child of the active span —
 * the AI SDK's `ai.streamText` or your own — with the session id, tokens before and after, the number of messages
 * it changed and the event's figures. Metrics: `ctxkit.governance.events` (count by event),
 * `ctxkit.governance.tokens.saved` (tokens governance took out of the payload, by event) and
 * `ctxkit.governance.compaction.duration` (milliseconds). Without a registered SDK everything is a no-op.
 *
 * @example
 * ```ts
 * const telemetry = ctxkitTelemetry();
 * const engine = await createContextEngine({ store: instrumentStore(store), model, onEvent: telemetry.onEvent });
 * ```
 */
export function ctxkitTelemetry(options: TelemetryOptions = {}): GovernanceTelemetry {
  const tracer = tracerOf(options);
  const meter = meterOf(options);
  const events = meter.createCounter("ctxkit.governance.events", {
    description: "Governance actions taken, by event",
    unit: "{event}",
  });
  const saved = meter.createCounter("ctxkit.governance.tokens.saved", {
    description: "Payload tokens governance removed, by event",
    unit: "{token}",
  });
  const compaction = meter.createHistogram("ctxkit.governance.compaction.duration", {
    description: "Time spent compacting history",
    unit: "ms",
  });
  return {
    onEvent(event, sessionId) {
      const operationId = `ctxkit.governance.${event.type}`;
      const end = Date.now();
      const start = event.type === "compaction-end" ? end - event.durationMs : end;
      const span = tracer.startSpan(operationId, {
        startTime: start,
        attributes: {
          ...operationAttributes(operationId, options),
          "ctxkit.session.id": sessionId,
          "ctxkit.governance.event": event.type,
          "ctxkit.governance.tokensBefore": event.tokensBefore,
          "ctxkit.governance.tokensAfter": event.tokensAfter,
          "ctxkit.governance.messageCount": event.messageIds.length,
          ...eventAttributes(event),
        },
      });
      span.end(end);
      const byEvent = { "ctxkit.governance.event": event.type };
      events.add(1, byEvent);
      const removed = event.tokensBefore - event.tokensAfter;
      if (removed > 0) saved.add(removed, byEvent);
      if (event.type === "compaction-end") compaction.record(event.durationMs, byEvent);
    },
  };
}
