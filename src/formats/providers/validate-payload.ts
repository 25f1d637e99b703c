import type { z } from "zod";
import { ValidationError } from "../../errors/errors.ts";

interface Problem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

function formatPath(root: string, path: readonly PropertyKey[]): string {
  let text = root;
  for (const key of path) text += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
  return text;
}

/**
 * A plain union reports every branch's failures. The branch that got deepest into the value before failing is
 * the one the caller most likely meant (fewest problems breaks ties), so its problems are what the message names.
 */
function flatten(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[]): Problem[] {
  const path = [...prefix, ...issue.path];
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return [{ path, message: issue.message }];
  let best: Problem[] | undefined;
  let bestDepth = -1;
  for (const branch of issue.errors) {
    const problems = branch.flatMap((inner) => flatten(inner, path));
    const depth = Math.max(...problems.map((problem) => problem.path.length));
    if (depth > bestDepth || (depth === bestDepth && problems.length < (best?.length ?? Infinity))) {
      best = problems;
      bestDepth = depth;
    }
  }
  return best ?? [{ path, message: issue.message }];
}

/**
 * Parses a provider payload with `schema`; on failure throws a `ValidationError` whose message names each bad
 * field by index, e.g. `messages[3].tool_calls[0].function.arguments: expected string`.
 *
 * @example
 * const messages = validatePayload(chatMessagesSchema, payload, "messages", "OpenAI chat messages");
 */
export function validatePayload<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  root: string,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues
    .flatMap((issue) => flatten(issue, []))
    .map((problem) => ({ path: formatPath(root, problem.path), message: problem.message }));
  const listed = issues
    .slice(0, 5)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join("; ");
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : "";
  throw new ValidationError(`invalid ${what}: ${listed}${more}; fix the payload and retry`, issues);
}
