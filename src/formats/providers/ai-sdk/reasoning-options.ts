import type { JsonValue, ReasoningBlock } from "../../../model/message.ts";
import type { PartOptions } from "../part-options-carrier.ts";

/** Where `toAiSdk` puts a bare reasoning signature: the provider whose AI SDK package reads it. */
export type SignatureProvider = "anthropic" | "google";

type Mutable = { [provider: string]: { [key: string]: JsonValue } };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asOptions(value: JsonValue | undefined): Mutable {
  const options: Mutable = {};
  if (!isRecord(value)) return options;
  for (const [provider, entry] of Object.entries(value))
    if (isRecord(entry)) options[provider] = { ...entry };
  return options;
}

/** The provider option that carries `signature` the way `toAiSdk` would write it. */
function signatureEntry(
  signature: string,
  redacted: boolean,
  provider: SignatureProvider,
): [string, string, string] {
  if (redacted) return ["anthropic", "redactedData", signature];
  return provider === "google"
    ? ["google", "thoughtSignature", signature]
    : ["anthropic", "signature", signature];
}

function stringAt(options: PartOptions, provider: string, key: string): string | undefined {
  const value = options[provider]?.[key];
  return typeof value === "string" ? value : undefined;
}

/** Whose signature the provider options hold (the one `signatureIn` finds). */
function signerIn(options: PartOptions): SignatureProvider | undefined {
  if (stringAt(options, "anthropic", "signature") ?? stringAt(options, "anthropic", "redactedData"))
    return "anthropic";
  if (stringAt(options, "google", "thoughtSignature") ?? stringAt(options, "vertex", "thoughtSignature"))
    return "google";
  return undefined;
}

/** Where provider packages put a reasoning signature, in the order it is looked for. */
const SIGNATURE_PLACES = [
  ["anthropic", "signature"],
  ["anthropic", "redactedData"],
  ["google", "thoughtSignature"],
  ["vertex", "thoughtSignature"],
] as const;

/** The signature already present in provider options, and where it is. */
function signaturePlace(options: PartOptions): [string, string, string] | undefined {
  for (const [provider, key] of SIGNATURE_PLACES) {
    const value = stringAt(options, provider, key);
    if (value !== undefined) return [provider, key, value];
  }
  return undefined;
}

/** The signature already present in provider options (Anthropic signature / redacted data, Gemini signature). */
function signatureIn(options: PartOptions): string | undefined {
  return signaturePlace(options)?.[2];
}

/**
 * The `providerOptions` of an AI SDK reasoning part for a reasoning block: its `providerData` (kept in the AI
 * SDK shape, e.g. `{ openai: { itemId, reasoningEncryptedContent } }`), plus its signature where the provider's
 * AI SDK package reads it — Anthropic `signature` / `redactedData`, or Google `thoughtSignature` — unless
 * `providerData` already holds it.
 */
export function reasoningProviderOptions(
  block: ReasoningBlock,
  provider: SignatureProvider,
): PartOptions | undefined {
  const options = asOptions(block.providerData);
  if (block.signature !== undefined && signatureIn(options) !== block.signature) {
    const [name, key, value] = signatureEntry(
      block.signature,
      block.redacted === true,
      block.signedBy ?? provider,
    );
    options[name] = { ...options[name], [key]: value };
  }
  return Object.keys(options).length > 0 ? options : undefined;
}

/**
 * The reasoning block for an AI SDK reasoning part: the signature read from wherever a provider package put it,
 * `redacted` for Anthropic redacted data (or OpenAI encrypted reasoning with no summary text), and the remaining
 * provider options as `providerData` (what `reasoningProviderOptions` would add back is left out).
 */
export function reasoningBlockOf(
  text: string,
  options: PartOptions | undefined,
  provider: SignatureProvider,
): ReasoningBlock {
  const rest = asOptions(options);
  const place = options === undefined ? undefined : signaturePlace(options);
  const signature = place?.[2];
  const redactedData = options === undefined ? undefined : stringAt(options, "anthropic", "redactedData");
  const encrypted =
    options === undefined ? undefined : stringAt(options, "openai", "reasoningEncryptedContent");
  const redacted = redactedData !== undefined || (text === "" && encrypted !== undefined);
  // Recorded only when it is not the provider the conversion assumes (what `reasoningProviderOptions` defaults to).
  const signer = options === undefined ? undefined : signerIn(options);
  const signedBy = signer !== undefined && signer !== provider ? signer : undefined;
  if (place !== undefined) {
    // Left out only when it was read from where `reasoningProviderOptions` writes it back (from the same
    // `redacted` flag): another key holding the same value stays.
    const [name, key] = signatureEntry(place[2], redacted, signer ?? provider);
    const entries = rest[name];
    if (place[0] === name && place[1] === key && entries !== undefined) {
      const { [key]: _dropped, ...others } = entries;
      if (Object.keys(others).length === 0) delete rest[name];
      else rest[name] = others;
    }
  }
  return {
    type: "reasoning",
    text,
    ...(signature !== undefined && { signature }),
    ...(signature !== undefined && signedBy !== undefined && { signedBy }),
    ...(redacted && { redacted: true }),
    ...(Object.keys(rest).length > 0 && { providerData: rest }),
  };
}
