import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { contextJson } from "./routes/inspection-routes.ts";
import type { TimelineRequest, TimelineTotals } from "./routes/inspector-timeline.ts";
import type { SessionJson as StoredSessionJson } from "./routes/session-json.ts";
import {
  type ContextJson,
  type SessionJson,
  type TimelineJson,
  type TimelineRequestJson,
  contextJsonSchema,
  messagesJsonSchema,
  requestPayloadJsonSchema,
  sessionListJsonSchema,
  timelineJsonSchema,
} from "./api-schemas.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

/**
 * `T` with every array and object read-only (the server's types are, the schemas' inferred ones are not) and
 * without index signatures (a loose schema's "any other field", which the server's event types fill by name).
 */
type Frozen<T> = T extends readonly (infer Item)[]
  ? readonly Frozen<Item>[]
  : T extends object
    ? { readonly [Key in keyof T as string extends Key ? never : Key]: Frozen<T[Key]> }
    : T;

/**
 * What the routes build is typed by the server's own types; these assignments make the compiler check that each
 * fits its schema, so a changed field fails the typecheck before any request is made.
 */
export const compiledConformance = {
  session: (json: StoredSessionJson): Frozen<SessionJson> => json,
  context: (json: ReturnType<typeof contextJson>): Frozen<ContextJson> => json,
  request: (json: TimelineRequest): Frozen<TimelineRequestJson> => json,
  totals: (json: TimelineTotals): Frozen<TimelineJson["totals"]> => json,
};

const TURNS = 6;
let harness: ServerHarness;

/** The session's answer at `path`, checked against `schema` (the parse fails on any field of the wrong shape). */
async function answer<Schema extends z.ZodType>(path: string, schema: Schema): Promise<z.infer<Schema>> {
  const response = await harness.call(path);
  expect(response.status, path).toBe(200);
  return schema.parse(await response.json());
}

beforeAll(async () => {
  // Each turn reads a long file, so the small window makes governance act (events, grounding, offloads).
  harness = await startHarness({
    contextWindow: 8_000,
    responses: Array.from({ length: TURNS }, (_, turn) => [
      { toolCalls: [{ id: `call_${turn}`, name: "read_file", arguments: { path: `f${turn}.ts` } }] },
      { text: `f${turn}.ts defines step${turn}() at line 3.` },
    ]).flat(),
  });
  const send = async (messages: unknown[]) => {
    const response = await harness.call("/v1/chat/completions", {
      method: "POST",
      headers: { "X-Ctxkit-Session": "wire" },
      json: { model: "m", messages },
    });
    expect(response.status).toBe(200);
  };
  for (let turn = 0; turn < TURNS; turn++) {
    await send([{ role: "user", content: `What does f${turn}.ts define?` }]);
    const file = `// f${turn}.ts\n\nexport function step${turn}() {}\n${"// filler line\n".repeat(400)}`;
    await send([{ role: "tool", tool_call_id: `call_${turn}`, content: file }]);
  }
});

afterAll(async () => {
  await harness?.close();
});

describe("the server's answers match the schemas clients (the inspector among them) read them with", () => {
  it("sessions and messages", async () => {
    const list = await answer("/v1/sessions", sessionListJsonSchema);
    expect(list.sessions.map((session) => [session.id, session.stored, session.turnCount])).toEqual([
      ["wire", true, TURNS],
    ]);
    const { messages } = await answer("/v1/sessions/wire/messages?strategy=all", messagesJsonSchema);
    expect(messages.map((message) => message.role).slice(0, 4)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(messages.every((message) => message.sessionId === "wire")).toBe(true);
  });

  it("the governed context of the last request", async () => {
    const context = await answer("/v1/sessions/wire/context", contextJsonSchema);
    expect(context.source).toBe("last-request");
    expect(context.channels.total).toBeGreaterThan(0);
    expect(context.tokens.contextWindow).toBe(8_000);
  });

  it("the timeline, and each replayed request's payload", async () => {
    const timeline = await answer("/v1/sessions/wire/timeline", timelineJsonSchema);
    expect(timeline.requests).toHaveLength(2 * TURNS);
    expect(timeline.requests.some((request) => request.events.length > 0)).toBe(true);
    for (const request of [timeline.requests[0]!, timeline.requests.at(-1)!]) {
      const payload = await answer(`/v1/sessions/wire/timeline/${request.index}`, requestPayloadJsonSchema);
      expect(payload.request).toEqual(request);
      expect(payload.messages.length).toBeGreaterThan(0);
    }
  });
});
