import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ServerEnv } from "../server-context.ts";
import {
  anthropicErrorBody,
  errorAnswer,
  errorBody,
  logHidden,
  openAIErrorBody,
  type ErrorAnswer,
} from "./error-response.ts";
import { HttpError } from "./http-error.ts";

/** Routes whose clients are OpenAI SDKs: their errors have the OpenAI shape. */
const OPENAI_ROUTES = new Set(["/v1/chat/completions", "/v1/responses"]);
/** Routes whose clients are Anthropic SDKs and Claude Code: their errors have Anthropic's shape. */
const ANTHROPIC_ROUTES = new Set(["/v1/messages", "/v1/messages/count_tokens"]);

function answerOf(error: unknown): ErrorAnswer {
  if (error instanceof HTTPException) {
    const status = error.status;
    const code = status === 413 ? "payload_too_large" : status === 400 ? "invalid_input" : "http_error";
    return errorAnswer(new HttpError(status, code, error.message || `request refused (${status})`));
  }
  return errorAnswer(error);
}

/**
 * Renders any error as JSON with its status and headers (OpenAI-shaped on the OpenAI proxy routes, Anthropic-shaped
 * on the Messages routes). Server-side failures are logged with the request id — redacted — and answered with a
 * status and code that reveal nothing of their details.
 *
 * @example
 * app.onError(renderError((line) => console.error(line)));
 */
export function renderError(log: (line: string) => void): ErrorHandler<ServerEnv> {
  return (error: Error, c: Context<ServerEnv>) => {
    const answer = answerOf(error);
    logHidden(log, c.get("requestId"), answer);
    const body = OPENAI_ROUTES.has(c.req.path)
      ? openAIErrorBody(answer)
      : ANTHROPIC_ROUTES.has(c.req.path)
        ? anthropicErrorBody(answer)
        : errorBody(answer);
    return c.json(body, answer.status as 400, { ...answer.headers });
  };
}
