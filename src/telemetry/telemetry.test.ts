import { SpanStatusCode, trace } from "@opentelemetry/api";
import { MeterProvider, MetricReader, type MetricData } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { createContextEngine } from "../engine/context-engine.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { ctxkitTelemetry } from "./governance-telemetry.ts";
import { instrumentStore } from "./instrument-store.ts";

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function sdk() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    exporter,
    tracerProvider,
    tracer: tracerProvider.getTracer("test"),
    meter: meterProvider.getMeter("test"),
    metric: async (name: string): Promise<MetricData | undefined> => {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((metric) => metric.descriptor.name === name);
    },
  };
}

const spanNamed = (spans: readonly ReadableSpan[], name: string) =>
  spans.filter((span) => span.name === name);

afterEach(() => trace.disable());

describe("instrumentStore", () => {
  it("makes every store and blob operation a span, with ids, counts and durations", async () => {
    const { exporter, tracer, meter, metric } = sdk();
    const store = instrumentStore(new MemorySessionStore(), { tracer, meter, functionId: "support" });
    await store.appendTurn("s1", [
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
    ]);
    expect(await store.loadMessages("s1")).toHaveLength(2);
    const ref = await store.blobs.putText("s1", "offloaded output");
    expect(await store.blobs.getText(ref)).toBe("offloaded output");

    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual([
      "ctxkit.store.appendTurn",
      "ctxkit.store.loadMessages",
      "ctxkit.store.blobs.putText",
      "ctxkit.store.blobs.getText",
    ]);
    expect(spans[0]!.attributes).toEqual({
      "operation.name": "ctxkit.store.appendTurn support",
      "ctxkit.operationId": "ctxkit.store.appendTurn",
      "ctxkit.telemetry.functionId": "support",
      "ctxkit.session.id": "s1",
      "ctxkit.store.messageCount": 2,
    });
    expect(spans[1]!.attributes["ctxkit.store.messageCount"]).toBe(2);
    expect(spans[3]!.attributes["ctxkit.blob.ref"]).toBe(ref);
    const durations = await metric("ctxkit.store.operation.duration");
    expect(durations?.descriptor.unit).toBe("ms");
    expect(durations?.dataPoints.map((point) => point.attributes["ctxkit.store.operation"]).sort()).toEqual([
      "appendTurn",
      "blobs.getText",
      "blobs.putText",
      "loadMessages",
    ]);
  });

  it("records a failed operation's error on its span and rethrows it", async () => {
    const { exporter, tracer, meter, metric } = sdk();
    const store = instrumentStore(new MemorySessionStore(), { tracer, meter });
    await expect(store.loadMessages("missing")).rejects.toMatchObject({ code: "not_found" });
    const [span] = exporter.getFinishedSpans();
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes["error.type"]).toBe("not_found");
    expect(span!.events.map((event) => event.name)).toEqual(["exception"]);
    const [point] = (await metric("ctxkit.store.operation.duration"))!.dataPoints;
    expect(point!.attributes).toEqual({
      "ctxkit.store.operation": "loadMessages",
      "error.type": "not_found",
    });
  });

  it("is a no-op without an SDK, and reports through the global one once it is registered", async () => {
    const store = instrumentStore(new MemorySessionStore());
    expect(store).toBeInstanceOf(MemorySessionStore);
    await store.appendTurn("s", [{ role: "user", content: [{ type: "text", text: "before" }] }]);
    expect(await store.getSession("s")).toMatchObject({ id: "s", messageCount: 1 });

    const { exporter, tracerProvider } = sdk();
    trace.setGlobalTracerProvider(tracerProvider);
    await store.getSession("s");
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(["ctxkit.store.getSession"]);
  });
});

describe("ctxkitTelemetry", () => {
  it("reports governance events as spans and metrics, beside the store spans of the writes they cause", async () => {
    const { exporter, tracer, meter, metric } = sdk();
    const telemetry = ctxkitTelemetry({ tracer, meter });
    const seen: GovernanceEvent[] = [];
    const engine = await createContextEngine({
      store: instrumentStore(new MemorySessionStore(), { tracer, meter }),
      contextWindow: 8_000,
      maxOutputTokens: 1_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      onEvent: (event, sessionId) => {
        seen.push(event);
        telemetry.onEvent(event, sessionId);
      },
    });
    const session = engine.session("governed");
    for (let turn = 0; turn < 4; turn++) {
      await session.addUser(`read file ${turn}`);
      await session.prepare();
      await session.recordAssistant({
        content: [{ type: "tool-call", id: `c${turn}`, name: "read", input: { turn } }],
      });
      await session.recordToolResults([
        { callId: `c${turn}`, toolName: "read", content: "x".repeat(12_000) },
      ]);
      await session.prepare();
      await session.recordAssistant({ content: `read ${turn}` });
      await session.commit();
    }

    expect(seen.length).toBeGreaterThan(0);
    const spans = exporter.getFinishedSpans().filter((span) => span.name.startsWith("ctxkit.governance."));
    expect(spans.map((span) => span.name)).toEqual(seen.map((event) => `ctxkit.governance.${event.type}`));
    const first = seen[0]!;
    expect(spans[0]!.attributes).toMatchObject({
      "operation.name": `ctxkit.governance.${first.type}`,
      "ctxkit.session.id": "governed",
      "ctxkit.governance.event": first.type,
      "ctxkit.governance.tokensBefore": first.tokensBefore,
      "ctxkit.governance.tokensAfter": first.tokensAfter,
      "ctxkit.governance.messageCount": first.messageIds.length,
    });
    const offloads = spanNamed(spans, "ctxkit.governance.tool-output-offloaded");
    expect(offloads.length).toBeGreaterThan(0);
    expect(offloads[0]!.attributes["ctxkit.governance.offloadCount"]).toBeGreaterThan(0);
    // Offloading writes blobs: those writes are store spans too.
    expect(spanNamed(exporter.getFinishedSpans(), "ctxkit.store.blobs.putText").length).toBeGreaterThan(0);

    const counted = (await metric("ctxkit.governance.events"))!.dataPoints;
    const total = counted.reduce((sum, point) => sum + (point.value as number), 0);
    expect(total).toBe(seen.length);
    const saved = (await metric("ctxkit.governance.tokens.saved"))!.dataPoints;
    const expected = seen.reduce(
      (sum, event) => sum + Math.max(0, event.tokensBefore - event.tokensAfter),
      0,
    );
    expect(saved.reduce((sum, point) => sum + (point.value as number), 0)).toBe(expected);
    expect(expected).toBeGreaterThan(0);
  });

  it("times a compaction span over the compaction's duration", async () => {
    const { exporter, tracer, meter, metric } = sdk();
    const telemetry = ctxkitTelemetry({ tracer, meter });
    telemetry.onEvent(
      {
        type: "compaction-end",
        tokensBefore: 9_000,
        tokensAfter: 2_000,
        messageIds: ["m1", "m2"],
        summarizer: "extractive",
        summaryTokens: 300,
        durationMs: 1_500,
      },
      "s",
    );
    const [span] = exporter.getFinishedSpans();
    const [seconds, nanos] = span!.duration;
    expect(seconds * 1_000 + nanos / 1e6).toBeCloseTo(1_500, 0);
    expect(span!.attributes).toMatchObject({
      "ctxkit.governance.summarizer": "extractive",
      "ctxkit.governance.summaryTokens": 300,
    });
    const histogram = (await metric("ctxkit.governance.compaction.duration"))!.dataPoints[0]!;
    expect(histogram.value).toMatchObject({ count: 1, sum: 1_500 });
  });
});
