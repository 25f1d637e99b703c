import { expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../errors/errors.ts";
import { toolResultsOf } from "../../model/blocks.ts";
import { fullTurn, type ConformanceContext } from "./conformance-fixtures.ts";

/** `attachCompactSummary`: a tool result's summary set after its turn was committed. */
export function compactSummaryCases(context: ConformanceContext): void {
  it("attaches a compact summary to a stored tool result, and changes nothing else", async () => {
    const store = context.store();
    const { messages } = await store.appendTurn("s1", fullTurn(1));
    await store.appendTurn("s1", fullTurn(2));
    const before = await store.dumpSession("s1");
    const tool = messages[2]!;
    const [result] = toolResultsOf(tool);
    const updated = await store.attachCompactSummary("s1", {
      messageId: tool.id,
      callId: result!.callId,
      summary: "read src/read.ts: output 1",
    });
    expect(updated).toEqual({
      ...tool,
      content: [{ ...result, compactSummary: "read src/read.ts: output 1" }],
    });
    const after = await store.dumpSession("s1");
    expect(after.rows.map((row) => row.message)).toEqual(
      before.rows.map((row) => (row.message.id === tool.id ? updated : row.message)),
    );
    expect(after.session).toEqual(before.session);
    expect((await store.loadMessages("s1"))[2]).toEqual(updated);
    // Attaching again replaces the summary.
    await store.attachCompactSummary("s1", { messageId: tool.id, callId: result!.callId, summary: "v2" });
    expect(toolResultsOf((await store.loadMessages("s1"))[2]!)[0]?.compactSummary).toBe("v2");
  });

  it("refuses an unknown session, message or call, and an empty summary", async () => {
    const store = context.store();
    const { messages } = await store.appendTurn("s1", fullTurn(1));
    const tool = messages[2]!;
    const callId = toolResultsOf(tool)[0]!.callId;
    const before = await store.dumpSession("s1");
    for (const [sessionId, messageId, call] of [
      ["nope", tool.id, callId],
      ["s1", "msg_nope", callId],
      ["s1", tool.id, "call_nope"],
      ["s1", messages[0]!.id, callId],
    ] as const) {
      await expect(
        store.attachCompactSummary(sessionId, { messageId, callId: call, summary: "x" }),
      ).rejects.toBeInstanceOf(NotFoundError);
    }
    await expect(
      store.attachCompactSummary("s1", { messageId: tool.id, callId, summary: " " }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(await store.dumpSession("s1")).toEqual(before);
  });

  const { reopen } = context.backend;
  if (reopen)
    it("keeps an attached compact summary across a reopen", async () => {
      const store = context.store();
      const { messages } = await store.appendTurn("s1", fullTurn(1));
      const callId = toolResultsOf(messages[2]!)[0]!.callId;
      await store.attachCompactSummary("s1", { messageId: messages[2]!.id, callId, summary: "kept" });
      const reopened = await reopen(store, context.options());
      context.replaceStore(reopened);
      expect(toolResultsOf((await reopened.loadMessages("s1"))[2]!)[0]?.compactSummary).toBe("kept");
    });
}
