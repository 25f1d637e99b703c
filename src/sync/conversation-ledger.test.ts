import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { ConversationLedger } from "./conversation-ledger.ts";
import { parseLedgerState } from "./ledger-state.ts";

const clock = () => new Date("2025-01-01T00:00:00.000Z");

/** Runs the seed's 4-turn example and returns what each execution received. */
function seedConversation(ledger: ConversationLedger) {
  // Turn 1: plain chat, handled by the conversation agent.
  ledger.appendExchange("What's the weather?", "It's sunny and 72°F.");
  const afterTurn1 = ledger.cursor("desktop");
  // Turn 2: desktop execution.
  const second = ledger.contextFor("desktop", "Check desktop for security risks");
  ledger.recordResult("desktop", {
    request: second.request,
    answer: "I found a passwords.txt file on your desktop.",
    toolCalls: [
      { name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "passwords.txt notes.md" },
    ],
    executorSessionId: "adk-1",
    seenUpTo: second.to,
  });
  const afterTurn2 = ledger.cursor("desktop");
  // Turn 3: plain chat.
  ledger.appendExchange("How are you?", "Doing well, thanks!");
  const afterTurn3 = ledger.cursor("desktop");
  // Turn 4: desktop execution.
  const fourth = ledger.contextFor("desktop", "Delete that passwords file");
  ledger.recordResult("desktop", {
    request: fourth.request,
    answer: "Deleted passwords.txt.",
    toolCalls: [{ name: "execute_cli", input: { command: "rm ~/Desktop/passwords.txt" }, result: "" }],
    executorSessionId: "adk-1",
    seenUpTo: fourth.to,
  });
  return { second, fourth, offsets: [afterTurn1, afterTurn2, afterTurn3, ledger.cursor("desktop")] };
}

describe("ConversationLedger", () => {
  it("reproduces the seed's 4-turn example: offsets 0, 4, 4, 8 and turn 4 receives exactly turn 3", () => {
    const ledger = new ConversationLedger({ clock, labels: { assistant: "Contop" } });
    const { second, fourth, offsets } = seedConversation(ledger);
    expect(offsets).toEqual([0, 4, 4, 8]);
    expect(second.message).toBe(
      "[Prior conversation for context]\nUser: What's the weather?\nContop: It's sunny and 72°F.\n" +
        "[Current request]\nCheck desktop for security risks",
    );
    expect(fourth.prior.map((entry) => entry.text)).toEqual(["How are you?", "Doing well, thanks!"]);
    expect([fourth.from, fourth.to, fourth.missed]).toEqual([4, 6, 0]);
    expect(fourth.message).toBe(
      "[Prior conversation for context]\nUser: How are you?\nContop: Doing well, thanks!\n" +
        "[Current request]\nDelete that passwords file",
    );
  });

  it("sends the bare request when nothing is new", () => {
    const ledger = new ConversationLedger({ clock });
    const context = ledger.contextFor("desktop", "List files");
    expect(context.message).toBe("List files");
    expect(context.prior).toEqual([]);
  });

  it("prefixes an executor's answer with its truncated tool summary for the conversation agent", () => {
    const ledger = new ConversationLedger({
      clock,
      agentLabels: { desktop: "Desktop agent" },
      toolSummaryLimits: { maxInputChars: 30, maxResultChars: 12 },
    });
    ledger.recordResult("desktop", {
      request: "List files on my desktop",
      answer: "I found 2 files on your desktop: file1.txt and file2.txt",
      toolCalls: [
        { name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "file1.txt file2.txt" },
        { name: "read_file", input: { path: `/home/user/${"deep/".repeat(20)}x.txt` }, result: "ok" },
      ],
      executorSessionId: "adk-1",
    });
    const [, assistant] = ledger.toMessages("s1");
    expect(assistant?.content).toEqual([
      {
        type: "text",
        text:
          '[Desktop agent used: Called: execute_cli({"command":"ls ~/Desktop"})\nResult: file1.txt f…\n' +
          'Called: read_file({"path":"/home/user/deep/deep…)\nResult: ok]\n\n' +
          "I found 2 files on your desktop: file1.txt and file2.txt",
      },
    ]);
    expect(assistant?.metadata).toEqual({ agent: "desktop" });
  });

  it("keeps cursors correct when the window drops entries from the front", () => {
    const ledger = new ConversationLedger({ clock, maxEntries: 4 });
    const { fourth, offsets } = seedConversation(ledger);
    // The window holds 4 entries; positions stay absolute.
    expect(offsets).toEqual([0, 4, 4, 8]);
    expect(fourth.prior.map((entry) => entry.text)).toEqual(["How are you?", "Doing well, thanks!"]);
    expect(ledger.dropped).toBe(4);
    ledger.appendExchange("Thanks", "You're welcome");
    ledger.appendExchange("Bye", "Bye!");
    // The agent's cursor (8) is now before the window (dropped 8): nothing it has not seen was lost.
    const next = ledger.contextFor("desktop", "Empty the trash");
    expect(ledger.dropped).toBe(8);
    expect([next.from, next.missed]).toEqual([8, 0]);
    expect(next.prior.map((entry) => entry.text)).toEqual(["Thanks", "You're welcome", "Bye", "Bye!"]);
  });

  it("reports unseen entries the window dropped and never starts the window with an assistant entry", () => {
    const ledger = new ConversationLedger({ clock });
    for (let index = 0; index < 5; index++) ledger.appendExchange(`question ${index}`, `answer ${index}`);
    expect(ledger.trim(3)).toBe(8);
    expect(ledger.entries.map((entry) => entry.text)).toEqual(["question 4", "answer 4"]);
    const context = ledger.contextFor("desktop", "go");
    expect([context.from, context.missed]).toEqual([8, 8]);
  });

  it("sends chat that happened while the agent ran on its next run, but not its own exchange", () => {
    const ledger = new ConversationLedger({ clock });
    ledger.appendExchange("Hi", "Hello");
    const first = ledger.contextFor("desktop", "Scan the disk");
    ledger.appendExchange("Is it done yet?", "Still running."); // while the executor runs
    ledger.recordResult("desktop", {
      request: first.request,
      answer: "Scan complete",
      executorSessionId: "adk-1",
      seenUpTo: first.to,
    });
    expect(ledger.cursor("desktop")).toBe(2);
    const second = ledger.contextFor("desktop", "Delete the temp files");
    expect(second.prior.map((entry) => entry.text)).toEqual(["Is it done yet?", "Still running."]);
    // After resetting the agent (its session was lost) it gets everything again, its own exchange included.
    ledger.resetAgent("desktop");
    expect(ledger.contextFor("desktop", "x").prior.map((entry) => entry.text)).toContain("Scan complete");
  });

  it("rejects a seenUpTo outside the ledger", () => {
    const ledger = new ConversationLedger({ clock });
    expect(() =>
      ledger.recordResult("desktop", { request: "a", answer: "b", executorSessionId: "s", seenUpTo: 5 }),
    ).toThrow(ValidationError);
  });

  it("new session: reset empties entries, cursors and executor sessions", () => {
    const ledger = new ConversationLedger({ clock });
    seedConversation(ledger);
    expect(ledger.executorSessionId("desktop")).toBe("adk-1");
    ledger.reset();
    expect([ledger.end, ledger.dropped, ledger.cursor("desktop")]).toEqual([0, 0, 0]);
    expect(ledger.executorSessionId("desktop")).toBeUndefined();
    expect(ledger.contextFor("desktop", "hello").message).toBe("hello");
  });

  it("round-trips through its persisted state", () => {
    const ledger = new ConversationLedger({ clock, maxEntries: 6 });
    seedConversation(ledger);
    const state = parseLedgerState(JSON.parse(JSON.stringify(ledger.toState())), "test");
    const restored = new ConversationLedger({ clock, state });
    restored.appendExchange("One more thing", "Sure");
    expect(restored.contextFor("desktop", "go").prior.map((entry) => entry.text)).toEqual([
      "One more thing",
      "Sure",
    ]);
    expect(restored.executorSessionId("desktop")).toBe("adk-1");
  });

  it("property: every entry reaches an agent exactly once unless the window dropped it first", () => {
    type Step = { kind: "chat" } | { kind: "run"; interleave: boolean } | { kind: "trim"; keep: number };
    const step = fc.oneof(
      fc.constant<Step>({ kind: "chat" }),
      fc.boolean().map<Step>((interleave) => ({ kind: "run", interleave })),
      fc.integer({ min: 0, max: 6 }).map<Step>((keep) => ({ kind: "trim", keep })),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const ledger = new ConversationLedger({ clock });
        const known = new Set<number>(); // absolute positions the agent's session holds
        let missed = 0;
        let counter = 0;
        for (const current of steps) {
          if (current.kind === "chat") ledger.appendExchange(`q${counter}`, `a${counter++}`);
          if (current.kind === "trim") ledger.trim(current.keep);
          if (current.kind !== "run") continue;
          const context = ledger.contextFor("agent", `r${counter}`);
          missed += context.missed;
          const firstPosition = context.from;
          let position = firstPosition;
          for (const entry of ledger.entries.slice(context.from - ledger.dropped)) {
            if (context.prior.includes(entry)) {
              expect(known.has(position)).toBe(false); // zero duplication
              known.add(position);
            }
            position++;
          }
          if (current.interleave) ledger.appendExchange(`q${counter}`, `a${counter++}`);
          const before = ledger.end;
          ledger.recordResult("agent", {
            request: context.request,
            answer: "done",
            executorSessionId: "s",
            seenUpTo: context.to,
          });
          known.add(before).add(before + 1); // its own exchange lives in its session
        }
        // Whatever the agent has not seen is either still ahead of it or was dropped (and counted as missed).
        const final = ledger.contextFor("agent", "final");
        const unseen: number[] = [];
        for (let position = 0; position < ledger.end; position++) {
          const entry = ledger.entries[position - ledger.dropped];
          if (!known.has(position) && !(entry && final.prior.includes(entry))) unseen.push(position);
        }
        expect(unseen.every((position) => position < final.from)).toBe(true);
        expect(unseen.length).toBeLessThanOrEqual(missed + final.missed);
      }),
    );
  });
});
