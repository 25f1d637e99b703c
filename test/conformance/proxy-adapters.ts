// The proxy's Anthropic Messages and OpenAI Responses routes as entry points of the adapter conformance suite:
// each driven by its API's official client against the proxy, in front of a loopback upstream that speaks the
// same API and answers from the scripted model.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { z } from "zod";
import { startServer } from "../../src/server/start-server.ts";
import type { SessionStore } from "../../src/store/session-store.ts";
import { FakeSummarizer } from "../../src/test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import type { FakeOpenAIResponse } from "../../src/test/fake-openai-responses.ts";
import { startFakeOpenAIServer, type ChatCompletionRequestBody } from "../../src/test/fake-openai-server.ts";
import type { ConformanceAdapter, OpenAdapter } from "./adapters.ts";
import {
  fileContent,
  type ScriptedModel,
  type ScriptedReply,
  type ScriptedRequest,
} from "./scripted-model.ts";

const readFileSchema = z.toJSONSchema(z.object({ path: z.string() }));

/** What the upstream saw of a request, in its API's terms (the session is the adapter's). */
type Seen = Omit<ScriptedRequest, "session">;

/**
 * The proxy over `store` in front of a loopback upstream whose answers come from `model`; `read` says what a
 * request was, `overflow` is the upstream's "prompt too long" answer in its API's shape.
 */
async function proxyOver(
  store: SessionStore,
  model: ScriptedModel,
  read: (body: ChatCompletionRequestBody) => Seen,
  overflow: FakeOpenAIResponse,
) {
  const state = { session: "" };
  const upstream = await startFakeOpenAIServer({
    responses: ({ body }) => {
      let reply: ScriptedReply;
      try {
        reply = model.answer({ session: state.session, ...read(body) });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return /maximum context length/.test(message)
          ? overflow
          : { status: 503, error: { message, type: "server_error" } };
      }
      return "text" in reply
        ? { text: reply.text }
        : { toolCalls: [{ id: reply.call.id, name: reply.call.name, arguments: reply.call.input }] };
    },
  });
  const server = await startServer({
    store,
    port: 0,
    auth: false,
    upstream: { baseURL: upstream.url, apiKey: "sk-upstream", model: "fake-model" },
    anthropicUpstream: { baseURL: upstream.url, apiKey: "sk-ant-upstream", auth: "x-api-key" },
    engine: {
      contextWindow: 12_000,
      maxOutputTokens: 1_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    },
    unownedSessionsTenant: "local",
    log: () => {},
    webRoot: false,
  });
  return {
    url: server.url,
    state,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

type Json = Record<string, unknown>;
const blocks = (content: unknown): Json[] => (Array.isArray(content) ? (content as Json[]) : []);

/** The text of a message's content: a string, or its text parts. */
function itemText(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .map((part) => (typeof part["text"] === "string" ? part["text"] : ""))
    .join("");
}

/**
 * `/v1/messages` with `X-Ctxkit-Session`, driven as Claude Code drives it: the client resends its whole
 * conversation (kept by the app across a restart) and runs its own tools.
 */
const messages: ConformanceAdapter = {
  name: "proxy /v1/messages",
  provider: "anthropic",
  recall: false,
  storeId: (session) => session,
  async open(store, model, kept): Promise<OpenAdapter> {
    const proxy = await proxyOver(
      store,
      model,
      (body) => {
        const sent = (body.messages ?? []) as readonly Json[];
        const last = sent.at(-1)!;
        const isResult = blocks(last["content"]).some((block) => block["type"] === "tool_result");
        const asked = sent.findLast(
          (message) =>
            message["role"] === "user" &&
            !blocks(message["content"]).some((block) => block["type"] === "tool_result"),
        );
        return {
          last: last["role"] === "assistant" ? "assistant" : isResult ? "tool" : "user",
          question: itemText(asked?.["content"]),
          wire: JSON.stringify({ system: body["system"], messages: sent, tools: body.tools }),
          tools: (body.tools ?? []).map((tool) => (tool as { name: string }).name),
        };
      },
      {
        status: 400,
        error: { type: "invalid_request_error", message: "prompt is too long: 13000 tokens > 12000 maximum" },
      },
    );
    const tools = [{ name: "read_file", description: "Reads a file", input_schema: readFileSchema }];
    return {
      async ask(session, question) {
        proxy.state.session = session;
        const client = new Anthropic({
          baseURL: proxy.url,
          apiKey: "none",
          maxRetries: 0,
          defaultHeaders: { "X-Ctxkit-Session": session },
        });
        const history = [
          ...((kept.get(session) as Anthropic.MessageParam[] | undefined) ?? []),
          { role: "user" as const, content: [{ type: "text" as const, text: question }] },
        ];
        for (;;) {
          const reply = await client.messages.create({
            model: "fake-model",
            max_tokens: 1_000,
            messages: history,
            tools: tools as Anthropic.Tool[],
          });
          history.push({ role: "assistant", content: reply.content });
          const calls = reply.content.filter((block) => block.type === "tool_use");
          if (calls.length === 0) {
            kept.set(session, history);
            return reply.content.map((block) => (block.type === "text" ? block.text : "")).join("");
          }
          history.push({
            role: "user",
            content: calls.map((call) => ({
              type: "tool_result" as const,
              tool_use_id: call.id,
              content: fileContent((call.input as { path: string }).path),
            })),
          });
        }
      },
      close: () => proxy.close(),
    };
  },
};

/**
 * `/v1/responses` with `X-Ctxkit-Session`, driven as a Responses app drives a stored conversation: each request
 * holds only the new input and chains to the previous answer with `previous_response_id` (kept by the app
 * across a restart); the client runs its own tools.
 */
const responses: ConformanceAdapter = {
  name: "proxy /v1/responses",
  provider: "openai-compatible",
  recall: false,
  storeId: (session) => session,
  async open(store, model, kept): Promise<OpenAdapter> {
    const proxy = await proxyOver(
      store,
      model,
      (body) => {
        const input = blocks(body.input);
        const last = input.at(-1)!;
        const asked = input.findLast((item) => item["role"] === "user");
        return {
          last:
            last["type"] === "function_call_output"
              ? "tool"
              : last["role"] === "assistant" || last["type"] === "function_call"
                ? "assistant"
                : "user",
          question: itemText(asked?.["content"]),
          wire: JSON.stringify({ instructions: body.instructions, input, tools: body.tools }),
          tools: (body.tools ?? []).map((tool) => (tool as { name: string }).name),
        };
      },
      {
        status: 400,
        error: {
          message: "Your input exceeds the context window of this model.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
    );
    const tools = [
      {
        type: "function" as const,
        name: "read_file",
        description: "Reads a file",
        parameters: readFileSchema,
        strict: false,
      },
    ];
    return {
      async ask(session, question) {
        proxy.state.session = session;
        const client = new OpenAI({
          baseURL: `${proxy.url}/v1`,
          apiKey: "none",
          maxRetries: 0,
          defaultHeaders: { "X-Ctxkit-Session": session },
        });
        let input: OpenAI.Responses.ResponseInput = [{ role: "user", content: question }];
        for (;;) {
          const previous = kept.get(session) as string | undefined;
          const response = await client.responses.create({
            model: "fake-model",
            input,
            tools,
            ...(previous !== undefined && { previous_response_id: previous }),
          });
          kept.set(session, response.id);
          const calls = response.output.filter((item) => item.type === "function_call");
          if (calls.length === 0) return response.output_text;
          input = calls.map((call) => ({
            type: "function_call_output" as const,
            call_id: call.call_id,
            output: fileContent((JSON.parse(call.arguments) as { path: string }).path),
          }));
        }
      },
      close: () => proxy.close(),
    };
  },
};

/** The proxy's Messages and Responses routes, as conformance adapters. */
export const proxyAdapters: readonly ConformanceAdapter[] = [messages, responses];
