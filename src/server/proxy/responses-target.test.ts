import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseResponseId, responseId, responsesRequestSchema } from "./responses-request.ts";
import { responsesTarget } from "./responses-target.ts";

const request = (fields: Record<string, unknown>) => responsesRequestSchema.parse({ input: "hi", ...fields });
const stored = (id: string) => Promise.resolve(id === "known" ? { kind: "stored" } : undefined);

describe("Responses request modes and ids", () => {
  it("a response id names its session, for any session id (dots and percent signs too), and is never reissued", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (sessionId) => {
        const id = responseId(sessionId);
        expect(id).toMatch(/^resp_ck\.[^.]+\.r[0-9a-f]{32}$/);
        expect(parseResponseId(id)).toEqual({ sessionId });
        expect(responseId(sessionId)).not.toBe(id);
      }),
    );
  });

  it("reads ids of the earlier numbered form with their number", () => {
    expect(parseResponseId("resp_ck.chat-1.4")).toEqual({ sessionId: "chat-1", legacySequence: 4 });
  });

  it("ids ctxkit did not issue are 404 previous_response_not_found", () => {
    for (const id of ["resp_abc", "resp_ck.x", "resp_ck.%E0%A4%A.1", "resp_ck.a.b.1", "resp_ck.a.rxyz"]) {
      expect(() => parseResponseId(id)).toThrow(
        expect.objectContaining({ status: 404, code: "previous_response_not_found" }),
      );
    }
  });

  it("chooses the mode: previous id, then session header, then store:false → stateless, else a new session", async () => {
    const chained = await responsesTarget(request({ previous_response_id: "resp_ck.known.2" }), {}, stored);
    expect(chained).toEqual({
      kind: "session",
      id: "known",
      previous: { id: "resp_ck.known.2", legacySequence: 2 },
    });
    await expect(
      responsesTarget(request({ previous_response_id: "resp_ck.gone.2" }), {}, stored),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      responsesTarget(request({ previous_response_id: "resp_ck.known.2" }), { session: "other" }, stored),
    ).rejects.toMatchObject({ status: 400 });
    expect(await responsesTarget(request({ store: false }), { session: "s1" }, stored)).toEqual({
      kind: "session",
      id: "s1",
    });
    expect(await responsesTarget(request({ store: false }), {}, stored)).toEqual({ kind: "stateless" });
    expect(await responsesTarget(request({}), { session: "s1", mode: "stateless" }, stored)).toEqual({
      kind: "stateless",
    });
    const fresh = await responsesTarget(request({}), {}, stored);
    expect(fresh).toMatchObject({ kind: "session", id: expect.stringMatching(/^resp-[0-9a-f-]{36}$/) });
    await expect(responsesTarget(request({}), { mode: "sometimes" }, stored)).rejects.toMatchObject({
      status: 400,
    });
    await expect(responsesTarget(request({}), { session: "a b" }, stored)).rejects.toMatchObject({
      status: 400,
    });
  });
});
