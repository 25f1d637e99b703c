import { z } from "zod";
import { ValidationError } from "../errors/errors.ts";
import type { ContentBlock, JsonValue, Message, Usage } from "./message.ts";

/** A value met while checking, with the way back to the root (a path is built only for the error). */
interface Visit {
  readonly value: unknown;
  readonly key?: PropertyKey;
  readonly parent?: Visit;
  /** Containers above it. */
  readonly depth: number;
}

/**
 * Deepest nesting of a JSON value ctxkit accepts. Far beyond real data; deeper values are refused up front
 * because `JSON.stringify` (storing, sending upstream) overflows the call stack at a few thousand levels.
 */
export const MAX_JSON_DEPTH = 1_000;

function pathOf(visit: Visit): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

/** Where a value is not JSON (undefined, a function, NaN, a class instance…), or undefined when it is. */
function notJson(value: unknown): { path: PropertyKey[]; message: string } | undefined {
  // An explicit stack: a value parsed from a hostile body may nest deeper than the call stack.
  const pending: Visit[] = [{ value, depth: 0 }];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const current = visit.value;
    if (current === null || typeof current === "string" || typeof current === "boolean") continue;
    if (typeof current === "number") {
      if (Number.isFinite(current)) continue;
      return { path: pathOf(visit), message: "must be a finite number (JSON has no NaN or Infinity)" };
    }
    if (typeof current !== "object") {
      return { path: pathOf(visit), message: `must be a JSON value, not ${typeof current}` };
    }
    if (visit.depth >= MAX_JSON_DEPTH) {
      return { path: [], message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
    }
    if (seen.has(current)) {
      // Met before: shared (written out twice, fine) or one of its own containers (a cycle, not JSON).
      for (let above = visit.parent; above !== undefined; above = above.parent) {
        if (above.value === current) return { path: pathOf(visit), message: "must not contain itself" };
      }
      continue;
    }
    seen.add(current);
    const depth = visit.depth + 1;
    if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, key: index, parent: visit, depth }));
      continue;
    }
    const prototype = Object.getPrototypeOf(current) as unknown;
    if (prototype !== Object.prototype && prototype !== null) {
      return { path: pathOf(visit), message: "must be a plain JSON object, not a class instance" };
    }
    for (const [key, item] of Object.entries(current))
      pending.push({ value: item, key, parent: visit, depth });
  }
  return undefined;
}

/**
 * Any JSON value, validated and kept as given: zod's own `z.json()` rebuilds objects, which drops a `"__proto__"`
 * key (valid JSON, and data a tool may really send).
 */
export const jsonValueSchema: z.ZodType<JsonValue> = z.unknown().check((context) => {
  const problem = notJson(context.value);
  if (problem !== undefined) {
    context.issues.push({
      code: "custom",
      message: problem.message,
      path: problem.path,
      input: context.value,
    });
  }
}) as z.ZodType<JsonValue>;

/** A JSON object (not an array), validated and kept as given like `jsonValueSchema`. */
export const jsonObjectSchema = jsonValueSchema.refine(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be a JSON object",
) as z.ZodType<{ [key: string]: JsonValue }>;

const mediaType = z.string().min(1).describe("a media type such as image/png");

/** Schema of a text block. */
export const textBlockSchema = z.object({
  type: z.literal("text"),
  text: z.string(),
  refusal: z.literal(true).optional(),
});

/** Schema of a reasoning block. */
export const reasoningBlockSchema = z.object({
  type: z.literal("reasoning"),
  text: z.string(),
  signature: z.string().optional(),
  signedBy: z.enum(["anthropic", "google"]).optional(),
  redacted: z.boolean().optional(),
  providerData: jsonValueSchema.optional(),
});

/** Schema of a tool-call block. */
export const toolCallBlockSchema = z.object({
  type: z.literal("tool-call"),
  id: z.string().min(1, "a tool call needs a non-empty id"),
  name: z.string().min(1, "a tool call needs a tool name"),
  input: jsonValueSchema,
  unparsed: z.literal(true).optional(),
});

const sourceFields = {
  data: z.string().optional(),
  url: z.string().optional(),
  ref: z.string().optional(),
};

function hasSource(block: { data?: string | undefined; url?: string | undefined; ref?: string | undefined }) {
  return block.data !== undefined || block.url !== undefined || block.ref !== undefined;
}

/** Schema of an image block (one of data, url or ref is required). */
export const imageBlockSchema = z
  .object({
    type: z.literal("image"),
    mediaType,
    ...sourceFields,
    detail: z.enum(["auto", "low", "high", "original"]).optional(),
  })
  .refine(hasSource, "an image needs data, url or ref");

/** Schema of a file block (one of data, url or ref is required). */
export const fileBlockSchema = z
  .object({ type: z.literal("file"), mediaType, filename: z.string().optional(), ...sourceFields })
  .refine(hasSource, "a file needs data, url or ref");

/** Schema of a tool-result block. */
export const toolResultBlockSchema = z.object({
  type: z.literal("tool-result"),
  callId: z.string().min(1, "a tool result needs the id of the call it answers"),
  toolName: z.string(),
  content: jsonValueSchema,
  isError: z.boolean().optional(),
  attachments: z.array(z.union([imageBlockSchema, fileBlockSchema])).optional(),
  compactSummary: z.string().optional(),
  offloadRef: z.string().optional(),
});

/** Schema of an opaque block: a provider's own content, kept as it came. */
export const opaqueBlockSchema = z.object({
  type: z.literal("opaque"),
  provider: z.string().min(1, "an opaque block needs the name of the provider it came from"),
  data: jsonObjectSchema,
});

/** Schema of any content block. */
export const contentBlockSchema = z.union([
  textBlockSchema,
  reasoningBlockSchema,
  toolCallBlockSchema,
  toolResultBlockSchema,
  imageBlockSchema,
  fileBlockSchema,
  opaqueBlockSchema,
]);

const tokenCount = z.number().int().nonnegative();

/** Schema of provider-reported usage. */
export const usageSchema = z.object({
  input: tokenCount,
  output: tokenCount,
  cacheRead: tokenCount.optional(),
  cacheWrite: tokenCount.optional(),
  cacheWriteLong: tokenCount.optional(),
  reasoning: tokenCount.optional(),
});

/** An id or name stores keep as text: not empty, and without U+0000 (NUL), which PostgreSQL text cannot hold. */
export const storedNameSchema = z
  .string()
  .min(1)
  .refine((value) => !value.includes("\u0000"), "cannot contain the character U+0000 (NUL)");

/**
 * The longest session id a store keeps: room for a server's `<tenant>/<id>` (a 64-character tenant and an API id of
 * up to 200 characters).
 */
export const MAX_SESSION_ID_LENGTH = 300;

/** Schema of a complete stored message. */
export const messageSchema = z.object({
  id: storedNameSchema,
  sessionId: z.string(),
  seq: z.number().int().nonnegative(),
  turn: z.number().int().nonnegative(),
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.array(contentBlockSchema),
  createdAt: z.string(),
  kind: z.enum(["summary", "marker"]).optional(),
  summaryOf: z
    .object({
      fromSeq: z.number().int(),
      toSeq: z.number().int(),
      messageCount: z.number().int().nonnegative(),
    })
    .optional(),
  tokens: tokenCount.optional(),
  tokenizer: z.string().optional(),
  model: z.string().optional(),
  provider: z.string().optional(),
  usage: usageSchema.optional(),
  finishReason: z.string().optional(),
  error: z.string().optional(),
  completedAt: z.string().optional(),
  metadata: jsonObjectSchema.optional(),
});

/** What a caller may pass as content: a string (one text block) or a list of blocks. */
export const contentInputSchema = z.union([z.string(), z.array(contentBlockSchema)]);

/**
 * Validates `value` against `schema`; on failure throws a `ValidationError` listing every problem with its path.
 *
 * @example
 * const usage = validate(usageSchema, body.usage, "usage");
 */
export function validate<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(root)",
    message: issue.message,
  }));
  const listed = issues
    .slice(0, 5)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join("; ");
  throw new ValidationError(
    `invalid ${what}: ${listed}${issues.length > 5 ? ` (and ${issues.length - 5} more)` : ""}`,
    issues,
  );
}

// Compile-time checks that the schemas and the hand-written types agree.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type _UsageMatches = Assert<Same<z.output<typeof usageSchema>, { -readonly [K in keyof Usage]: Usage[K] }>>;
type _BlockAssignable = Assert<z.output<typeof contentBlockSchema> extends ContentBlock ? true : false>;
type _MessageAssignable = Assert<z.output<typeof messageSchema> extends Message ? true : false>;
