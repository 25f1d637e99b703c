import { describe, expect, it } from "vitest";
import type { Message } from "../../model/message.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import { ClientStyles, continuation } from "./conversation-continuation.ts";

/** The session: a task, a read (call_1 and its result), the answer. */
const session = (): HistoryBuilder =>
  new HistoryBuilder()
    .user("Fix the parser.")
    .step([{ name: "Read", input: { path: "parser.ts" }, output: "code" }])
    .reply("Fixed.");

/** The session, then a reply asking for a tool call not answered yet (`call_9`). */
const waiting = (): Message[] =>
  session()
    .user("Run the tests.")
    .message({ role: "assistant", content: [{ type: "tool-call", id: "call_9", name: "Bash", input: {} }] })
    .build();

const user = (text: string) => new HistoryBuilder().user(text).build();

describe("continuation", () => {
  it("continues with a resent history holding the latest reply: only the rest is new", () => {
    const stored = session().build();
    const client = session().user("Thanks.").build();
    const match = continuation(client, stored, undefined);
    expect(match).toMatchObject({ continues: true, style: "resends" });
    expect(match.fresh.map((message) => message.role)).toEqual(["user"]);
  });

  it("continues after the client's own copy of a retried latest turn, and not with the retry itself", () => {
    const stored = session().user("Thanks.").reply("You're welcome.").build();
    const retry = session().user("Thanks.").build();
    expect(continuation(retry, stored, "resends")).toMatchObject({ continues: false, style: "resends" });
    const onwards = session().user("Thanks.").reply("Glad to help.").user("One more thing.").build();
    const match = continuation(onwards, stored, "resends");
    expect(match).toMatchObject({ continues: true, style: "resends" });
    expect(match.fresh.map((message) => message.role)).toEqual(["user"]);
    // Another question in the retried turn's place is a branch, not a retry.
    const other = session().user("Something else.").reply("Sure.").user("One more thing.").build();
    expect(continuation(other, stored, "resends").continues).toBe(false);
  });

  it("resumes a resent history ending with the latest reply, nothing new, only when that reply paused", () => {
    const paused = session()
      .user("Search the web.")
      .message({
        role: "assistant",
        content: [{ type: "text", text: "Searching…" }],
        finishReason: "pause_turn",
      })
      .build();
    expect(continuation(paused, paused, "resends")).toMatchObject({
      continues: true,
      resumes: true,
      fresh: [],
    });
    const done = session().build();
    expect(continuation(done, done, "resends")).toMatchObject({ continues: true, resumes: false, fresh: [] });
    const asked = [...paused, ...user("Thanks.")];
    expect(continuation(asked, paused, "resends")).toMatchObject({ continues: true, resumes: false });
  });

  it("takes a history holding earlier replies but not the latest for a branch (compacted, rewound)", () => {
    const stored = session().build();
    const rewound = stored.slice(0, 3);
    expect(continuation([...rewound, ...user("Summarize.")], stored, "resends")).toMatchObject({
      continues: false,
      style: "resends",
    });
  });

  it("continues a session without replies with anything", () => {
    expect(continuation(user("Hi."), user("Hello?"), "resends").continues).toBe(true);
  });

  it("while a tool call is pending, continues with its answer, and refuses another conversation", () => {
    const stored = waiting();
    const answer = new HistoryBuilder()
      .message({
        role: "tool",
        content: [{ type: "tool-result", callId: "call_9", toolName: "Bash", content: "ok" }],
      })
      .build();
    expect(continuation(answer, stored, undefined)).toMatchObject({ continues: true, style: "new-only" });
    // A subagent's first request: its own task, answering nothing.
    expect(continuation(user("Count the lines."), stored, undefined).continues).toBe(false);
    expect(continuation(user("Count the lines."), stored, "resends").continues).toBe(false);
    // A client known to send only its new messages may leave the call unanswered.
    expect(continuation(user("Never mind."), stored, "new-only").continues).toBe(true);
  });

  it("with no call pending, continues with new messages unless the client is known to resend its history", () => {
    const stored = session().build();
    expect(continuation(user("Next?"), stored, undefined).continues).toBe(true);
    expect(continuation(user("Next?"), stored, "new-only").continues).toBe(true);
    expect(continuation(user("Give this a title."), stored, "resends").continues).toBe(false);
    // A history of another conversation's replies is never this session's.
    const other = new HistoryBuilder().user("Other task.").reply("Other answer.").user("And?").build();
    expect(continuation(other, stored, undefined).continues).toBe(false);
  });
});

describe("ClientStyles", () => {
  it("remembers the latest style of each session, forgetting the least recently seen beyond its limit", () => {
    const styles = new ClientStyles(2);
    styles.set("a", "new-only");
    styles.set("b", "resends");
    styles.set("a", "resends");
    styles.set("c", "resends");
    expect(styles.get("a")).toBe("resends");
    expect(styles.get("b")).toBeUndefined();
    expect(styles.get("c")).toBe("resends");
  });
});
