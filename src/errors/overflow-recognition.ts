import { CtxkitError } from "./ctxkit-error.ts";

const overflowPatterns = [
  /context[_ ]length[_ ]exceeded/i, // OpenAI error code
  /maximum context length/i, // OpenAI, vLLM
  /prompt is too long/i, // Anthropic
  /input is too long/i, // Anthropic (older), Bedrock
  /exceeds? the (maximum|max) (number of )?(input )?tokens/i, // Gemini
  /input token count .* exceeds/i, // Gemini
  /too many tokens/i, // Ollama / llama.cpp / generic
  /context (window|size|length) (is )?(exceeded|too small|full)/i, // Ollama, llama.cpp, LM Studio
  /requested \d+ tokens .* context/i, // llama.cpp server
  /exceeds the available context size|exceed_context_size/i, // llama.cpp server (newer)
  /exceeded max context length/i, // Ollama
  /reduce the length of the (messages|prompt)/i, // OpenAI
  /request too large/i, // HTTP 413 bodies
];

/**
 * True when `value` — an error, its cause, or the JSON body it carries — has ctxkit's `context_overflow` as its
 * `code` field: a ctxkit server's answer (`{ error: { code } }`) read back by an SDK. The field, never the text.
 */
function carriesOverflowCode(value: unknown, depth = 0): boolean {
  if (depth > 4 || typeof value !== "object" || value === null) {
    if (typeof value !== "string" || !value.startsWith("{")) return false;
    try {
      return carriesOverflowCode(JSON.parse(value) as unknown, depth + 1);
    } catch {
      return false;
    }
  }
  const record = value as Record<string, unknown>;
  if (record["code"] === "context_overflow") return true;
  return ["error", "cause", "data", "responseBody", "body"].some(
    (field) => record[field] !== value && carriesOverflowCode(record[field], depth + 1),
  );
}

function fieldsOf(error: unknown): { status?: number; text: string } {
  if (typeof error !== "object" || error === null) return { text: String(error) };
  const record = error as Record<string, unknown>;
  const status = [record["status"], record["statusCode"], record["code"]].find(
    (value): value is number => typeof value === "number",
  );
  const parts = [record["message"], record["code"], record["type"], record["responseBody"], record["body"]]
    .map((value) => (typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value)))
    .filter(Boolean);
  const nested = record["cause"] ?? record["error"] ?? record["data"];
  const inner = nested !== undefined && nested !== error ? fieldsOf(nested) : { text: "" };
  return {
    ...(status !== undefined ? { status } : inner.status !== undefined ? { status: inner.status } : {}),
    text: `${parts.join(" ")} ${inner.text}`,
  };
}

/**
 * True when `error` is a provider's "your request is too big for the context window" error, whatever its shape:
 * OpenAI (`context_length_exceeded`), Anthropic (`prompt is too long`), Gemini (`exceeds the maximum number of
 * tokens`), Ollama / vLLM / llama.cpp messages, or HTTP 413. A ctxkit error (the server's `HttpError` included)
 * is one exactly when its code is `context_overflow`; a ctxkit server's answer read back by an SDK, when it carries
 * that code.
 *
 * @example
 * try { await generateText(request); } catch (error) { if (isContextOverflowError(error)) await recover(); }
 */
export function isContextOverflowError(error: unknown): boolean {
  if (CtxkitError.isInstance(error)) return error.code === "context_overflow";
  if (carriesOverflowCode(error)) return true;
  const { status, text } = fieldsOf(error);
  if (status === 413) return true;
  return overflowPatterns.some((pattern) => pattern.test(text));
}
