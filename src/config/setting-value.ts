import { z } from "zod";
import { ConfigError } from "../errors/errors.ts";
import type { SettingDefinition } from "./setting-definitions.ts";

type JsonSchemaNode = {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  format?: string;
};

function range(node: JsonSchemaNode, noun: string): string {
  const maximum =
    node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
  if (node.exclusiveMinimum !== undefined) return `${noun} above ${node.exclusiveMinimum}`;
  if (node.minimum !== undefined && maximum !== undefined)
    return `${noun} from ${node.minimum} to ${maximum}`;
  if (node.minimum !== undefined) return `${noun} of at least ${node.minimum}`;
  return noun;
}

/**
 * The values a setting accepts, in words, for error messages and `ctxkit config list --json`.
 *
 * @example
 * allowedValues(settingDefinition("policy.compactionTrigger")!); // "a number from 0 to 1"
 */
export function allowedValues(definition: SettingDefinition): string {
  if (definition.allowed !== undefined) return definition.allowed;
  const node = z.toJSONSchema(definition.schema, { unrepresentable: "any" }) as JsonSchemaNode;
  if (node.enum !== undefined) return `one of ${node.enum.map(String).join(", ")}`;
  switch (node.type) {
    case "boolean":
      return "true or false";
    case "integer":
      return range(node, "a whole number");
    case "number":
      return range(node, "a number");
    case "object":
      return "a JSON object";
    default:
      return "text";
  }
}

function shown(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Checks `value` against the setting's schema. On failure throws ConfigError naming the key, where the value
 * came from (`origin`, e.g. "in /repo/.ctxkit/settings.json" or "from CTXKIT_MODEL") and the allowed values.
 *
 * @example
 * validateSettingValue(settingDefinition("server.port")!, 8080, "from CTXKIT_SERVER_PORT"); // 8080
 */
export function validateSettingValue(definition: SettingDefinition, value: unknown, origin = ""): unknown {
  const result = definition.schema.safeParse(value);
  if (result.success) return result.data;
  const custom = result.error.issues.find((issue) => issue.code === "custom")?.message;
  const where = origin === "" ? "" : ` ${origin}`;
  throw new ConfigError(
    definition.key,
    `${shown(value)}${where} is not allowed${custom === undefined ? "" : ` (${custom})`}; ` +
      `expected ${allowedValues(definition)}`,
  );
}

const booleanWords: Readonly<Record<string, boolean>> = { yes: true, on: true, no: false, off: false };

/**
 * Turns text from the command line or an environment variable into the setting's value: numbers, booleans
 * (also yes/no/on/off) and JSON where the setting wants them, the text itself where it wants text.
 * Throws ConfigError like `validateSettingValue` when nothing fits.
 *
 * @example
 * parseSettingText(settingDefinition("contextWindow")!, "128000"); // 128000
 * parseSettingText(settingDefinition("model")!, "ollama:llama3.1"); // "ollama:llama3.1"
 */
export function parseSettingText(definition: SettingDefinition, text: string, origin = ""): unknown {
  const candidates: unknown[] = [];
  try {
    candidates.push(JSON.parse(text));
  } catch {
    // not JSON: the text itself is the only reading
  }
  const word = booleanWords[text.trim().toLowerCase()];
  if (word !== undefined) candidates.push(word);
  candidates.push(text);
  for (const candidate of candidates) {
    if (definition.schema.safeParse(candidate).success) return candidate;
  }
  return validateSettingValue(definition, candidates[0], origin);
}
