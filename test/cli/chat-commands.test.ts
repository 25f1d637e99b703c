import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createChatOutput } from "../../src/cli/chat/chat-output.ts";
import { openSqliteMemoryStore } from "../../src/memory/sqlite/index.ts";
import { openPostgresSessionStore } from "../../src/store/postgres/index.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { contextLengthExceeded, rateLimited, startFakeOpenAIServer } from "../../src/test/index.ts";
import { postgresForTests } from "../store/pg-server.ts";
import { jsonEvents, runChatCli, sandbox } from "./chat-harness.ts";

const ESC = "\u001B[";

function captured(isTTY: boolean) {
  let text = "";
  return {
    stream: { write: (chunk: string) => ((text += chunk), true), isTTY } as never,
    text: () => text,
  };
}

describe("ctxkit chat --json and slash commands (piped stdin)", () => {
  it("--json prints one event per line: ready, deltas, reply with usage, commands, exit", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({
      responses: [{ text: "Hello there, streamed in pieces.", chunkSize: 5, usage: { promptTokens: 40 } }],
    });
    const run = await runChatCli(["--json", "--model", `openai-compatible:fake-model@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["hi", "/context", "/sessions"],
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const events = jsonEvents(run.stdout);
    expect(events.map((event) => event["type"])).toEqual([
      "ready",
      ...Array(7).fill("delta"),
      "reply",
      "command",
      "command",
      "exit",
    ]);
    const deltas = events.filter((event) => event["type"] === "delta").map((event) => event["text"]);
    expect(deltas.join("")).toBe("Hello there, streamed in pieces.");
    const reply = events.find((event) => event["type"] === "reply")!;
    expect(reply["text"]).toBe("Hello there, streamed in pieces.");
    expect(reply["usage"]).toMatchObject({ input: 40 });
    const sessionId = events[0]!["sessionId"] as string;
    const [context, sessions] = events.filter((event) => event["type"] === "command");
    expect(context).toMatchObject({
      name: "context",
      data: { sessionId, messages: 2, roles: { user: 1, assistant: 1 } },
    });
    expect((context!["data"] as { channels: { total: number } }).channels.total).toBeGreaterThan(0);
    expect(sessions).toMatchObject({ name: "sessions", data: [{ id: sessionId, turns: 1 }] });
    expect(events.at(-1)).toEqual({ type: "exit", sessionId, saved: true });
  });

  it("--pipeline: a processor of one's own, from a module, governs every turn the chat sends", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({ responses: [{ text: "noted" }, { text: "done" }] });
    writeFileSync(
      join(box.dir, "my-pipeline.mjs"),
      [
        "const redact = (block) =>",
        '  block.type === "text" ? { ...block, text: block.text.replaceAll(/TICKET-\\d+/g, "[ticket]") } : block;',
        "export default (base) => ({",
        "  processors: [",
        '    { name: "redact-tickets", triggers: [{ kind: "each-message" }],',
        '      process: (messages) => messages.map((m) => (m.role === "user" ? { ...m, content: m.content.map(redact) } : m)) },',
        "    ...base.processors,",
        "  ],",
        "  settings: base.settings,",
        "});",
        "",
      ].join("\n"),
    );
    const run = await runChatCli(
      ["--json", "--model", `openai-compatible:fake-model@${server.url}`, "--pipeline", "./my-pipeline.mjs"],
      { env: box.env, cwd: box.dir, lines: ["Where is TICKET-4711?", "And TICKET-4712?"] },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const sent = server.requests.map((request) => JSON.stringify(request.body.messages));
    expect(sent).toHaveLength(2);
    expect(sent.every((body) => !/TICKET-\d+/.test(body))).toBe(true);
    expect(sent[1]).toContain("And [ticket]?");
  });

  it("retries a rate-limited call before the first token and reports the retry", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({
      responses: [rateLimited({ retryAfterSeconds: 0 }), "made it"],
    });
    const run = await runChatCli(["--json", "--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["hi"],
    });
    expect(run.code).toBe(0);
    const events = jsonEvents(run.stdout);
    expect(events.find((event) => event["type"] === "retry")).toMatchObject({ retry: 1 });
    expect(events.find((event) => event["type"] === "reply")).toMatchObject({ text: "made it" });
    expect(server.requests).toHaveLength(2);
  });

  it("/fork, /resume, /export, /delete, /context clear and /config act on the store and settings", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({ responses: () => "ok" });
    const model = `openai-compatible:fake-model@${server.url}`;
    const first = await runChatCli(["--json", "--model", model, "--session-title", "original"], {
      env: box.env,
      cwd: box.dir,
      lines: ["one", "two", "/fork", "three", "/export out.jsonl", "/context clear", "/context"],
    });
    expect(first.stderr).toBe("");
    const events = jsonEvents(first.stdout);
    const original = events[0]!["sessionId"] as string;
    const fork = events.find((event) => event["name"] === "fork")!["data"] as { sessionId: string };
    expect(fork.sessionId).not.toBe(original);
    const exported = readFileSync(join(box.dir, "out.jsonl"), "utf8");
    expect(exported).toContain(fork.sessionId);
    expect(exported).toContain('"three"');
    const context = events.filter((event) => event["name"] === "context").at(-1)!["data"] as {
      messages: number;
    };
    expect(context.messages).toBe(1); // only the clear marker is left in view

    const store = await openSqliteSessionStore({ path: box.db });
    try {
      expect(await store.getSession(original)).toMatchObject({ title: "original", turnCount: 2 });
      expect((await store.getSession(fork.sessionId))?.parentId).toBe(original);
      expect((await store.getSession(fork.sessionId))?.turnCount).toBe(3);
    } finally {
      await store.close();
    }

    const second = await runChatCli(["--json", "--model", model], {
      env: box.env,
      cwd: box.dir,
      lines: [
        `/resume ${original}`,
        `/delete ${fork.sessionId}`,
        "/config maxRetries 4",
        "/config model bad",
      ],
    });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/^ctxkit: setting "model".*\n$/);
    const commands = jsonEvents(second.stdout).filter((event) => event["type"] === "command");
    expect(commands.map((event) => event["name"])).toEqual(["resume", "delete", "config"]);
    expect(commands[0]!["data"]).toEqual({ sessionId: original, turns: 2 });
    const settings = JSON.parse(readFileSync(join(box.dir, ".ctxkit", "settings.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(settings["maxRetries"]).toBe(4);
    expect(settings["model"]).toBeUndefined();
    const reopened = await openSqliteSessionStore({ path: box.db });
    try {
      expect(await reopened.getSession(fork.sessionId)).toBeUndefined();
      expect(await reopened.getSession(original)).toBeDefined();
    } finally {
      await reopened.close();
    }
  });

  it("/compact on a short chat leaves the summary and the last exchange (the co-cli seed)", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({
      responses: (request) => `answer ${request.index + 1}: use what the project uses`,
    });
    const run = await runChatCli(["--json", "--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: [
        "tabs or spaces?",
        "and in Go?",
        "and in YAML?",
        "/compact",
        "/context",
        "what did I ask first?",
      ],
    });
    expect(run.stderr).toBe("");
    const commands = jsonEvents(run.stdout).filter((event) => event["type"] === "command");
    expect(commands[0]).toMatchObject({ name: "compact", data: { compacted: true } });
    expect(commands[1]).toMatchObject({ name: "context", data: { messages: 3 } });
    const sent = server.requests.at(-1)!.body.messages!;
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "user", "assistant", "user"]);
    expect(String(sent[1]!.content)).toMatch(/^<conversation-summary>\n\[Summary of 4 earlier messages/);
    expect(sent.slice(2).map((message) => message.content)).toEqual([
      "and in YAML?",
      "answer 3: use what the project uses",
      "what did I ask first?",
    ]);
  });

  it("a context the model refuses as too long is trimmed, then cleared, and the turn still answered (the CowAgent seed)", async () => {
    await using box = await sandbox();
    const replies = ["one", "two", contextLengthExceeded(), contextLengthExceeded(), "answered after all"];
    await using server = await startFakeOpenAIServer({
      // Streamed calls are the chat's; the others summarise what the trim drops.
      responses: (request) => (request.body.stream === true ? replies.shift()! : "the user said one and two"),
    });
    const run = await runChatCli(["--json", "--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["first", "second", "third", "/context"],
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const events = jsonEvents(run.stdout);
    const recoveries = events
      .filter((event) => event["type"] === "governance")
      .map((event) => event["event"] as { type: string; stage?: string })
      .filter((event) => event.type === "emergency-recovery");
    expect(recoveries.map((event) => event.stage)).toEqual(["trimmed", "cleared"]);
    expect(events.filter((event) => event["type"] === "reply").map((event) => event["text"])).toEqual([
      "one",
      "two",
      "answered after all",
    ]);
    const streamed = server.requests.filter((request) => request.body.stream === true);
    expect(streamed).toHaveLength(5);
    expect(streamed[4]!.body.messages!.map((message) => message.content)).toEqual([
      expect.any(String),
      "third",
    ]);
    const sessionId = events[0]!["sessionId"] as string;
    const store = await openSqliteSessionStore({ path: box.db });
    try {
      expect(await store.loadMessages(sessionId)).toHaveLength(6); // only the view was cut
    } finally {
      await store.close();
    }
    const out = captured(false);
    const textOutput = createChatOutput(
      { stdout: out.stream, stderr: out.stream, env: {} },
      { json: false, interactive: false },
    );
    for (const event of recoveries) textOutput.emit({ type: "governance", event: event as never });
    expect(out.text()).toMatch(
      /refused the context as too long: kept the last 5 turns[^\n]*\n.*cleared it down to your message/,
    );
  });

  it("/config applies to the running session: the policy at the next request, and the model (the CowAgent seed)", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({
      responses: (request) =>
        request.body.stream === true ? `reply ${request.index}` : "summary of turn one",
    });
    const run = await runChatCli(["--json", "--model", `openai-compatible:first@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: [
        "one",
        "two",
        "/config policy.maxTurns 2",
        "three",
        `/config model openai-compatible:second@${server.url}`,
        "four",
      ],
    });
    expect(run.stderr).toBe("");
    const events = jsonEvents(run.stdout);
    const configs = events.filter((event) => event["name"] === "config");
    expect(configs.map((event) => (event["data"] as { applied: boolean }).applied)).toEqual([true, true]);
    expect(configs[0]!["text"]).toMatch(/in use now$/);
    // maxTurns 2 governs the very next request: three turns in view, the oldest one is trimmed.
    const types = events.map((event) =>
      event["type"] === "governance" ? (event["event"] as { type: string }).type : event["type"],
    );
    const afterConfig = types.slice(types.indexOf("command"));
    expect(afterConfig).toContain("turns-trimmed");
    expect(types.slice(0, types.indexOf("command"))).not.toContain("turns-trimmed");
    const streamed = server.requests.filter((request) => request.body.stream === true);
    expect(streamed.map((request) => request.body.model)).toEqual(["first", "first", "first", "second"]);
    expect(String(streamed[2]!.body.messages![1]!.content)).toContain("summary of turn one");
  });

  it("/memory lists and searches long-term memories of the chat database", async () => {
    await using box = await sandbox();
    const memories = await openSqliteMemoryStore({ path: box.db });
    await memories.add({ kind: "preference", content: "Prefers answers with TypeScript examples" });
    await memories.add({ kind: "fact", content: "Works on the ctxkit repository" });
    await memories.close();
    await using server = await startFakeOpenAIServer({ responses: [] });
    const run = await runChatCli(["--json", "--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["/memory typescript", "/memory"],
    });
    expect(run.code).toBe(0);
    const events = jsonEvents(run.stdout);
    const [search, list] = events.filter((event) => event["name"] === "memory");
    expect(search!["data"]).toEqual([
      {
        id: expect.stringMatching(/^mem_/),
        kind: "preference",
        content: "Prefers answers with TypeScript examples",
      },
    ]);
    expect(search!["text"]).toMatch(/^mem_\w+ {2}preference {2}.*TypeScript/);
    expect((list!["data"] as { content: string }[]).map((memory) => memory.content).sort()).toEqual([
      "Prefers answers with TypeScript examples",
      "Works on the ctxkit repository",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "exit", saved: false }); // nothing was said, nothing stored
  });

  it("stores sessions in PostgreSQL with --pg", async () => {
    const postgres = await postgresForTests();
    const pgUrl = postgres.url;
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({ responses: ["stored in postgres"] });
    const run = await runChatCli(["--json", "--pg", pgUrl, "--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["hello postgres"],
    });
    expect(run.stderr).toBe("");
    const sessionId = jsonEvents(run.stdout)[0]!["sessionId"] as string;
    expect(existsSync(box.db)).toBe(false);
    const store = await openPostgresSessionStore({ connectionString: pgUrl });
    try {
      const messages = await store.loadMessages(sessionId);
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      await store.deleteSession(sessionId);
    } finally {
      await store.close();
      await postgres.stop();
    }
  });
});

describe("chat output", () => {
  it("colours a terminal, and neither a pipe nor a terminal with NO_COLOR", () => {
    const event = {
      type: "ready",
      sessionId: "ses_1",
      resumed: false,
      turns: 0,
      model: "m",
      store: "s",
    } as const;
    for (const [isTTY, env, coloured] of [
      [true, {}, true],
      [true, { NO_COLOR: "1" }, false],
      [false, {}, false],
      [true, { TERM: "dumb" }, false],
    ] as const) {
      const out = captured(isTTY);
      createChatOutput(
        { stdout: out.stream, stderr: out.stream, env },
        { json: false, interactive: isTTY },
      ).emit(event);
      expect(out.text()).toContain("session ses_1 (new)");
      expect(out.text().includes(ESC)).toBe(coloured);
    }
  });

  it("errors go to stderr as one line, replies to stdout", () => {
    const out = captured(false);
    const err = captured(false);
    const output = createChatOutput(
      { stdout: out.stream, stderr: err.stream, env: {} },
      { json: false, interactive: false },
    );
    output.emit({ type: "delta", text: "partial" });
    output.emit({ type: "error", code: "timeout", message: "the request timed out" });
    expect(out.text()).toBe("partial\n");
    expect(err.text()).toBe("ctxkit: the request timed out\n");
  });
});
