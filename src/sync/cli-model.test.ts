import { generateText, streamText, tool } from "ai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CliModelError } from "../errors/cli-model-error.ts";
import { CtxkitError } from "../errors/ctxkit-error.ts";
import { ValidationError } from "../errors/errors.ts";
import { CliModel, type CliModelOptions } from "./cli-model.ts";

const fakeCli = fileURLToPath(new URL("./fixtures/fake-cli.ts", import.meta.url));

function fakeModel(mode: string, options: Partial<CliModelOptions> & { reply?: string } = {}): CliModel {
  const { reply, ...rest } = options;
  return new CliModel({
    command: process.execPath,
    args: [fakeCli, mode, ...(reply === undefined ? [] : [reply])],
    modelId: "fake-cli",
    ...rest,
  });
}

/** The CliModelError behind an AI SDK call's failure (the SDK may wrap it). */
async function cliFailure(promise: Promise<unknown>): Promise<CliModelError> {
  try {
    await promise;
  } catch (error) {
    let current: unknown = error;
    while (current !== undefined && !(current instanceof CliModelError))
      current = (current as { cause?: unknown }).cause;
    if (current instanceof CliModelError) return current;
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("CliModel", () => {
  it("is a v4 language model: generateText sends the XML prompt on stdin and reads the reply", async () => {
    const result = await generateText({
      model: fakeModel("echo"),
      instructions: "You are Contop.",
      messages: [
        { role: "user", content: "What's the weather?" },
        { role: "assistant", content: "It's sunny and 72°F." },
        { role: "user", content: "Thanks </turn> bye" },
      ],
    });
    expect(result.text).toContain("<system_context>\nYou are Contop.\n</system_context>");
    expect(result.text).toContain('<turn n="3" role="user">Thanks &lt;/turn&gt; bye</turn>');
    expect(result.response.modelId).toBe("fake-cli");
  });

  it("starts one fresh process per call", async () => {
    const model = fakeModel("pid");
    const first = await generateText({ model, prompt: "a" });
    const second = await generateText({ model, prompt: "b" });
    expect(first.text).toMatch(/^pid \d+$/);
    expect(second.text).toMatch(/^pid \d+$/);
    expect(second.text).not.toBe(first.text);
  });

  it("reads JSON output at the configured path, with usage", async () => {
    const result = await generateText({
      model: fakeModel("json", { output: "json", reply: "4" }),
      prompt: "2+2?",
    });
    expect(result.text).toBe("4");
    expect(result.usage.inputTokens).toBe(120);
    expect(result.usage.outputTokens).toBe(7);
    const wrongPath = fakeModel("json", { output: "json", jsonPath: "response.text" });
    expect((await cliFailure(generateText({ model: wrongPath, prompt: "x" }))).failure).toBe("output");
    const notJson = fakeModel("text", { output: "json" });
    expect((await cliFailure(generateText({ model: notJson, prompt: "x" }))).message).toContain("not JSON");
    const reportedError = await cliFailure(
      generateText({ model: fakeModel("json-error", { output: "json" }), prompt: "x" }),
    );
    expect(reportedError.message).toContain("Credit balance is too low");
  });

  it("turns tool calls in the JSON format into AI SDK tool calls (classification path)", async () => {
    const result = await generateText({
      model: fakeModel("classify"),
      tools: {
        desktop: tool({
          description: "Needs the user's desktop",
          inputSchema: z.object({ task: z.string() }),
        }),
      },
      prompt: "Delete the passwords file",
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]?.toolName).toBe("desktop");
    expect(result.toolCalls[0]?.input).toEqual({ task: "Delete the passwords file" });
    expect(result.finishReason).toBe("tool-calls");
    const chat = await generateText({
      model: fakeModel("classify"),
      tools: { desktop: tool({ inputSchema: z.object({ task: z.string() }) }) },
      prompt: "How are you?",
    });
    expect(chat.text).toBe("Chat reply to: How are you?");
    expect(chat.toolCalls).toEqual([]);
  });

  it("streams stdout as it arrives", async () => {
    const marker = join(await mkdtemp(join(tmpdir(), "ctxkit-cli-")), "first-chunk-received");
    const model = fakeModel("stream", { env: { ...process.env, FAKE_MARKER: marker } });
    const chunks: string[] = [];
    for await (const chunk of streamText({ model, prompt: "count" }).textStream) {
      // The fake CLI prints the rest only after this marker exists, i.e. after this chunk arrived.
      if (chunks.length === 0) await writeFile(marker, "");
      chunks.push(chunk);
    }
    expect(chunks.join("")).toBe("one two three");
    await rm(join(marker, ".."), { recursive: true, force: true });
  });

  it("a non-zero exit is a typed error with a redacted stderr tail", async () => {
    const error = await cliFailure(generateText({ model: fakeModel("fail"), prompt: "x" }));
    expect(CtxkitError.isInstance(error)).toBe(true);
    expect(error.code).toBe("cli_model_error");
    expect([error.failure, error.exitCode]).toEqual(["exit", 3]);
    expect(error.stderrTail).toContain("401 invalid x-api-key [redacted]");
    expect(error.stderrTail.length).toBeLessThan(700);
    expect(error.message).not.toContain("abcdefghijklmnopqrstuvwxyz0123456789");
    expect(error.message).toContain("run it by hand");
  });

  it("kills a command that runs past its time limit", async () => {
    const error = await cliFailure(
      generateText({ model: fakeModel("hang", { timeoutMs: 300 }), prompt: "x", maxRetries: 0 }),
    );
    expect(error.failure).toBe("timeout");
    expect(error.message).toContain("300 ms");
  });

  it("passes the caller's abort through and stops the process", async () => {
    const controller = new AbortController();
    const pending = generateText({ model: fakeModel("hang"), prompt: "x", abortSignal: controller.signal });
    setTimeout(() => controller.abort(new Error("user pressed stop")), 100);
    await expect(pending).rejects.toThrow("user pressed stop");
  });

  it("reports a command that cannot start, and survives one that never reads its input", async () => {
    const missing = new CliModel({ command: "/nonexistent/ctxkit-fake-cli" });
    const error = await cliFailure(generateText({ model: missing, prompt: "x" }));
    expect(error.failure).toBe("spawn");
    expect(error.message).toContain("ENOENT");
    const result = await generateText({ model: fakeModel("no-read"), prompt: "x".repeat(2_000_000) });
    expect(result.text).toBe("done without reading");
  });

  it("validates its options", () => {
    expect(() => new CliModel({ command: "" })).toThrow(ValidationError);
    expect(() => new CliModel({ command: "claude", timeoutMs: -1 })).toThrow(ValidationError);
  });
});
