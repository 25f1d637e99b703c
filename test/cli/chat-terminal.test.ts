import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { messageText } from "../../src/model/blocks.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { startFakeOpenAIServer, type FakeOpenAIRequest } from "../../src/test/index.ts";
import { bundled } from "../support/bundled.ts";
import { sandbox } from "./chat-harness.ts";
import { shellQuote, startTerminal, type TerminalPane } from "./terminal-driver.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const node = join(root, "node_modules", ".bin", "node");
const bin = bundled("ctxkit");

const FILLER = "The quick brown fox jumps over the lazy dog. ".repeat(25);
const SUMMARY = "SUMMARY-MARKER: the user asked numbered questions about foxes.";

/** The text of the last message a request sent (its content, however the client shaped it). */
function lastMessageText(request: FakeOpenAIRequest): string {
  return JSON.stringify(request.body.messages?.at(-1)?.content ?? "");
}

function requestText(request: FakeOpenAIRequest | undefined): string {
  return JSON.stringify(request?.body.messages ?? []);
}

/** Waits until the pane shows at least `count` prompt lines (`> ` at the start of a line). */
async function waitForPrompts(pane: TerminalPane, count: number): Promise<void> {
  await pane.waitUntil(
    `${count} prompts`,
    (screen) => screen.split("\n").filter((line) => line.startsWith(">")).length >= count,
  );
}

describe("ctxkit chat in a real terminal against a streaming OpenAI-compatible server", () => {
  it("chats, compacts, interrupts a slow reply with Ctrl-C, exits with Ctrl-D, resumes, and persisted exactly that", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({
      responses: (request) => {
        if (request.body.stream !== true) return SUMMARY; // the /compact summarizer (generateText)
        const said = /"text":"([^"]*)"|^"(.*)"$/.exec(lastMessageText(request));
        const text = said?.[1] ?? said?.[2] ?? "";
        if (text.includes("slow")) return { text: "NEVER-SHOWN", delayMs: 120_000 };
        return { text: `Answer to "${text}": ${FILLER}`, chunkSize: 16 };
      },
    });
    const env = [
      `PATH=${shellQuote(process.env["PATH"] ?? "/usr/bin:/bin")}`,
      "TERM=xterm-256color",
      `HOME=${shellQuote(box.dir)}`,
      `XDG_CONFIG_HOME=${shellQuote(join(box.dir, "config"))}`,
      `CTXKIT_DB=${shellQuote(box.db)}`,
      "CTXKIT_MODEL=openai-compatible:fake-model",
      `CTXKIT_BASE_URL=${shellQuote(server.url)}`,
      // A small window so five turns leave something for /compact to summarise.
      "CTXKIT_CONTEXT_WINDOW=3000",
      "CTXKIT_MAX_OUTPUT_TOKENS=300",
    ].join(" ");
    const chat = (args: string) =>
      `env -i ${env} ${shellQuote(node)} ${shellQuote(bin)} chat ${args}; echo CHAT-EXIT=$?`;

    // --- first run: five turns, /compact, an interrupted slow reply, one more turn, Ctrl-D ---
    let sessionId: string;
    {
      await using pane = await startTerminal(chat("--session-title 'tmux chat'"), {
        cwd: box.dir,
        name: "first",
      });
      const banner = await pane.waitFor(
        /ctxkit chat · openai-compatible:fake-model · session (ses_\w+) \(new\)/,
        60_000,
      );
      sessionId = banner[1]!;
      await waitForPrompts(pane, 1);
      for (let turn = 1; turn <= 5; turn++) {
        await pane.line(`question ${turn}`);
        await pane.waitFor(new RegExp(`Answer to "question ${turn}": The quick brown fox`));
        await waitForPrompts(pane, turn + 1);
      }
      await pane.line("/compact");
      const compacted = await pane.waitFor(/compacted: ([\d,]+) → ([\d,]+) tokens/);
      expect(Number(compacted[2]!.replaceAll(",", ""))).toBeLessThan(
        Number(compacted[1]!.replaceAll(",", "")),
      );
      await waitForPrompts(pane, 7);

      await pane.line("please be slow");
      await pane.waitFor(/please be slow/);
      while (!server.requests.some((request) => lastMessageText(request).includes("please be slow"))) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await pane.keys("C-c");
      await pane.waitFor(/interrupted; the turn was removed/);
      await waitForPrompts(pane, 8);

      await pane.line("after the interrupt");
      await pane.waitFor(/Answer to "after the interrupt"/);
      await waitForPrompts(pane, 9);
      const sent = requestText(server.requests.at(-1));
      expect(sent).toContain(SUMMARY); // the compacted history was what the model saw
      expect(sent).not.toContain("please be slow"); // the interrupted turn is gone
      expect(sent).toContain("question 5");

      await pane.keys("C-d");
      await pane.waitFor(
        new RegExp(`session ${sessionId} saved; resume with: ctxkit chat --resume ${sessionId}`),
      );
      await pane.waitFor(/CHAT-EXIT=0/);
      expect(await pane.screen()).not.toContain("NEVER-SHOWN");
    }

    const store = await openSqliteSessionStore({ path: box.db });
    try {
      const record = await store.getSession(sessionId);
      expect(record).toMatchObject({ title: "tmux chat", agent: "ctxkit-chat", turnCount: 6 });
      const visible = await store.loadMessages(sessionId);
      const summaries = visible.filter((message) => message.kind === "summary");
      expect(summaries).toHaveLength(1);
      expect(messageText(summaries[0]!)).toContain(SUMMARY);
      const all = await store.loadMessages(sessionId, { strategy: "all" });
      const texts = all.map((message) => messageText(message));
      expect(texts.filter((text) => text.startsWith("question "))).toHaveLength(5); // kept, though summarised
      expect(texts.some((text) => text.includes("slow"))).toBe(false);
      expect(texts.some((text) => text.includes("NEVER-SHOWN"))).toBe(false);
      expect(all.filter((message) => message.role === "assistant")).toHaveLength(6);
      expect(all.find((message) => message.role === "assistant")?.usage?.output).toBeGreaterThan(0);
      expect(visible.length).toBeLessThan(all.length);
    } finally {
      await store.close();
    }

    // --- second run: --resume (latest), one turn, Ctrl-C at the prompt exits after saving ---
    {
      await using pane = await startTerminal(chat("--resume"), { cwd: box.dir, name: "resume" });
      await pane.waitFor(new RegExp(`session ${sessionId} \\(resumed, 6 turns\\)`), 60_000);
      await waitForPrompts(pane, 1);
      await pane.line("and now?");
      await pane.waitFor(/Answer to "and now\?"/);
      await waitForPrompts(pane, 2);
      const sent = requestText(server.requests.at(-1));
      expect(sent).toContain(SUMMARY);
      expect(sent).toContain("after the interrupt");
      await pane.keys("C-c");
      await pane.waitFor(new RegExp(`session ${sessionId} saved`));
      await pane.waitFor(/CHAT-EXIT=0/);
    }

    const reopened = await openSqliteSessionStore({ path: box.db });
    try {
      expect((await reopened.getSession(sessionId))?.turnCount).toBe(7);
      const last = (await reopened.loadMessages(sessionId)).at(-1);
      expect(last?.role).toBe("assistant");
      expect(messageText(last!)).toMatch(/^Answer to "and now\?"/);
    } finally {
      await reopened.close();
    }
  }, 240_000);
});
