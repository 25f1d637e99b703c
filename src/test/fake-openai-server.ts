import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { completionBody, completionChunks, type CompletionContext } from "./fake-openai-completion.ts";
import { messagesBody, messagesEvents } from "./fake-anthropic-messages.ts";
import { responsesBody, responsesEvents } from "./fake-openai-responses-api.ts";
import {
  type FakeCompletion,
  type FakeErrorResponse,
  type FakeOpenAIResponse,
  isFakeDisconnect,
  isFakeError,
} from "./fake-openai-responses.ts";

/** The JSON body of a Chat Completions request, as received. */
export interface ChatCompletionRequestBody {
  readonly model?: string;
  readonly messages?: readonly {
    readonly role: string;
    readonly content?: unknown;
    readonly [key: string]: unknown;
  }[];
  readonly stream?: boolean;
  readonly stream_options?: { readonly include_usage?: boolean };
  readonly tools?: readonly unknown[];
  /** Responses API requests: the input items (or a string) and the instructions. */
  readonly input?: unknown;
  readonly instructions?: string | null;
  readonly [key: string]: unknown;
}

/** One Chat Completions or Responses request the fake server received. */
export interface FakeOpenAIRequest {
  /** 0-based position among the chat completion, Responses and Messages requests. */
  readonly index: number;
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: ChatCompletionRequestBody;
}

/** Options of `startFakeOpenAIServer`. */
export interface FakeOpenAIServerOptions {
  /**
   * The script: one response per request, in order, or a function of the request. When an array runs out, the
   * server answers 500 with a message naming the request (so an unexpected extra call fails loudly).
   */
  readonly responses:
    | readonly FakeOpenAIResponse[]
    | ((request: FakeOpenAIRequest) => FakeOpenAIResponse | Promise<FakeOpenAIResponse>);
  /** Model listed by `GET /v1/models` and reported when a request names none. Default `fake-model`. */
  readonly model?: string;
}

/** A running fake server. */
export interface FakeOpenAIServer {
  /** Base URL to give a client, ending in `/v1` (e.g. `http://127.0.0.1:54321/v1`). */
  readonly url: string;
  readonly port: number;
  /** Every chat completion request received so far, in order. */
  readonly requests: readonly FakeOpenAIRequest[];
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const CHAT_PATHS = new Set(["/v1/chat/completions", "/chat/completions"]);
const RESPONSES_PATHS = new Set(["/v1/responses", "/responses"]);
const MESSAGES_PATHS = new Set(["/v1/messages", "/messages"]);
const COUNT_TOKENS_PATHS = new Set(["/v1/messages/count_tokens", "/messages/count_tokens"]);
const MODEL_PATHS = new Set(["/v1/models", "/models"]);

/**
 * Starts a scripted OpenAI-compatible Chat Completions server on 127.0.0.1 (random port) that speaks the real
 * wire protocol: JSON answers, or Server-Sent Events when the request has `stream: true` (chunks in OpenAI's
 * format, a usage chunk when `stream_options.include_usage`, then `data: [DONE]`). It speaks the Responses API
 * too (`POST /v1/responses`: response objects, or `response.*` events when streaming), and Anthropic's Messages API
 * (`POST /v1/messages`: a `message`, or Anthropic's SSE events; errors in Anthropic's shape;
 * `POST /v1/messages/count_tokens` estimates), from the same script. Responses can be text, tool
 * calls, OpenAI error bodies (`contextLengthExceeded()`, `rateLimited()`, `invalidApiKey()`, `serverError()`)
 * or a dropped connection. Use it with any client: the `openai` package, `@ai-sdk/openai-compatible`, a CLI.
 *
 * @example
 * await using server = await startFakeOpenAIServer({ responses: ["Hello!", { toolCalls: [{ name: "ls" }] }] });
 * const client = new OpenAI({ baseURL: server.url, apiKey: "test" });
 * await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
 * server.requests[0]?.body.messages; // what the client sent
 */
export async function startFakeOpenAIServer(options: FakeOpenAIServerOptions): Promise<FakeOpenAIServer> {
  const requests: FakeOpenAIRequest[] = [];
  const model = options.model ?? "fake-model";
  const timers = new Set<NodeJS.Timeout>();
  const wait = (milliseconds: number | undefined) =>
    new Promise<void>((resolve) => {
      if (!milliseconds) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, milliseconds);
      timers.add(timer);
    });

  async function pick(request: FakeOpenAIRequest): Promise<FakeOpenAIResponse> {
    if (typeof options.responses === "function") return options.responses(request);
    const scripted = options.responses[request.index];
    if (scripted !== undefined) return scripted;
    return {
      status: 500,
      error: {
        message: `fake OpenAI server: no scripted response for request #${request.index + 1} (${options.responses.length} scripted)`,
        type: "server_error",
      },
    };
  }

  async function handleChat(incoming: IncomingMessage, response: ServerResponse, raw: string): Promise<void> {
    const anthropic = MESSAGES_PATHS.has((incoming.url ?? "").split("?")[0]!);
    const sendError = (target: ServerResponse, failure: FakeErrorResponse) =>
      anthropic ? sendAnthropicError(target, failure) : sendOpenAIError(target, failure);
    let body: ChatCompletionRequestBody;
    try {
      body = JSON.parse(raw) as ChatCompletionRequestBody;
    } catch {
      return sendError(response, {
        status: 400,
        error: {
          message: "We could not parse the JSON body of your request.",
          type: "invalid_request_error",
        },
      });
    }
    const request: FakeOpenAIRequest = {
      index: requests.length,
      method: incoming.method ?? "POST",
      path: incoming.url ?? "",
      headers: incoming.headers,
      body,
    };
    requests.push(request);
    const scripted = await pick(request);
    if (isFakeDisconnect(scripted)) return void incoming.socket.destroy();
    await wait(typeof scripted === "string" ? 0 : scripted.delayMs);
    if (response.destroyed) return;
    if (isFakeError(scripted)) return sendError(response, scripted);
    const completion: FakeCompletion = typeof scripted === "string" ? { text: scripted } : scripted;
    const responsesApi = RESPONSES_PATHS.has(request.path.split("?")[0]!);
    const context: CompletionContext = {
      id: `${anthropic ? "msg_fake_" : responsesApi ? "resp_fake_" : "chatcmpl-fake-"}${request.index + 1}`,
      created: 1_767_225_600 + request.index,
      model: typeof body.model === "string" ? body.model : model,
      requestIndex: request.index,
      promptCharacters: JSON.stringify(
        responsesApi
          ? [body.instructions, body.input]
          : anthropic
            ? [body["system"], body.messages]
            : (body.messages ?? []),
      ).length,
    };
    if (anthropic) return answerMessages(response, completion, context, body.stream === true);
    if (responsesApi) return answerResponses(response, completion, context, body.stream === true);
    if (body.stream !== true) return sendJson(response, 200, completionBody(completion, context));
    const chunks = completionChunks(completion, context, {
      includeUsage: body.stream_options?.include_usage === true,
    });
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    for (const [position, chunk] of chunks.entries()) {
      if (completion.disconnectAfterChunks !== undefined && position >= completion.disconnectAfterChunks) {
        // Destroy only after the chunks so far reached the socket, so the client sees a stream cut short.
        return void response.socket?.destroy();
      }
      await new Promise<void>((resolve) =>
        response.write(`data: ${JSON.stringify(chunk)}\n\n`, () => resolve()),
      );
    }
    response.end("data: [DONE]\n\n");
  }

  const server = createServer((incoming, response) => {
    let raw = "";
    incoming.setEncoding("utf8");
    incoming.on("data", (chunk: string) => (raw += chunk));
    incoming.on("end", () => {
      const path = (incoming.url ?? "").split("?")[0]!;
      if (incoming.method === "POST" && COUNT_TOKENS_PATHS.has(path)) {
        countTokens(response, raw);
      } else if (
        incoming.method === "POST" &&
        (CHAT_PATHS.has(path) || RESPONSES_PATHS.has(path) || MESSAGES_PATHS.has(path))
      ) {
        handleChat(incoming, response, raw).catch((error: unknown) =>
          (MESSAGES_PATHS.has(path) ? sendAnthropicError : sendOpenAIError)(response, {
            status: 500,
            error: {
              message: `fake OpenAI server: the script threw: ${String(error)}`,
              type: "server_error",
            },
          }),
        );
      } else if (incoming.method === "GET" && MODEL_PATHS.has(path)) {
        sendJson(response, 200, {
          object: "list",
          data: [{ id: model, object: "model", created: 1_767_225_600, owned_by: "ctxkit-fake" }],
        });
      } else {
        sendOpenAIError(response, {
          status: 404,
          error: {
            message: `Unknown request URL: ${incoming.method ?? "?"} ${incoming.url ?? ""}.`,
            type: "invalid_request_error",
            code: "unknown_url",
          },
        });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${port}/v1`, port, requests, close, [Symbol.asyncDispose]: close };
}

/** A Responses API answer: JSON, or its events as SSE (`event:` and `data:` lines, no `[DONE]`). */
async function answerResponses(
  response: ServerResponse,
  completion: FakeCompletion,
  context: CompletionContext,
  stream: boolean,
): Promise<void> {
  if (!stream) return sendJson(response, 200, responsesBody(completion, context));
  response.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const [position, event] of responsesEvents(completion, context).entries()) {
    if (completion.disconnectAfterChunks !== undefined && position >= completion.disconnectAfterChunks) {
      return void response.socket?.destroy();
    }
    await new Promise<void>((resolve) =>
      response.write(`event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`, () => resolve()),
    );
  }
  response.end();
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** An Anthropic Messages answer: JSON, or its events as SSE (`event:` and `data:` lines). */
async function answerMessages(
  response: ServerResponse,
  completion: FakeCompletion,
  context: CompletionContext,
  stream: boolean,
): Promise<void> {
  if (!stream) return sendJson(response, 200, messagesBody(completion, context));
  response.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const [position, event] of messagesEvents(completion, context).entries()) {
    if (completion.disconnectAfterChunks !== undefined && position >= completion.disconnectAfterChunks) {
      return void response.socket?.destroy();
    }
    await new Promise<void>((resolve) =>
      response.write(`event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`, () => resolve()),
    );
  }
  response.end();
}

/** `POST /v1/messages/count_tokens`: the request's system, messages and tools at one token per 4 characters. */
function countTokens(response: ServerResponse, raw: string): void {
  try {
    const body = JSON.parse(raw) as { system?: unknown; messages?: unknown; tools?: unknown };
    const characters = JSON.stringify([body.system, body.messages, body.tools]).length;
    sendJson(response, 200, { input_tokens: Math.ceil(characters / 4) });
  } catch {
    sendAnthropicError(response, { status: 400, error: { message: "invalid JSON body" } });
  }
}

/** An error in Anthropic's shape, `{ type: "error", error: { type, message } }`. */
function sendAnthropicError(response: ServerResponse, failure: FakeErrorResponse): void {
  if (failure.body !== undefined) return sendOpenAIError(response, failure);
  const type =
    failure.error?.type ??
    ({
      400: "invalid_request_error",
      401: "authentication_error",
      429: "rate_limit_error",
      529: "overloaded_error",
    }[failure.status] ||
      "api_error");
  sendJson(
    response,
    failure.status,
    { type: "error", error: { type, message: failure.error?.message ?? `HTTP ${failure.status}` } },
    { ...failure.headers },
  );
}

function sendOpenAIError(response: ServerResponse, failure: FakeErrorResponse): void {
  if (typeof failure.body === "string") {
    if (response.headersSent || response.destroyed) return;
    response.writeHead(failure.status, { "content-type": "text/plain", ...failure.headers });
    return void response.end(failure.body);
  }
  const body = failure.body ?? {
    error: {
      message: failure.error?.message ?? `HTTP ${failure.status}`,
      type: failure.error?.type ?? "invalid_request_error",
      param: failure.error?.param ?? null,
      code: failure.error?.code ?? null,
    },
  };
  sendJson(response, failure.status, body, { ...failure.headers });
}
