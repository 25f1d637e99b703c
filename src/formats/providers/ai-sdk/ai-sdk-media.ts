import { ValidationError } from "../../../errors/errors.ts";
import type { FileBlock, ImageBlock } from "../../../model/message.ts";
import { mediaSource, parseDataUrl, providerFileUrl, unresolvedReferenceError } from "../media.ts";
import type { ParsedFileData } from "./ai-sdk-schema.ts";
import type { TaggedFileData } from "./ai-sdk-types.ts";

function base64(bytes: Uint8Array | ArrayBuffer): string {
  return Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString("base64");
}

/**
 * The tagged AI SDK file data for an image or file block: base64 `data`, a `URL`, or a provider `reference`
 * (from a `provider-file:` URL). Returns `undefined` for a blob-store reference when placeholders are allowed.
 */
export function toAiSdkFileData(
  block: ImageBlock | FileBlock,
  at: string,
  placeholders: boolean,
): TaggedFileData | undefined {
  const source = mediaSource(block);
  switch (source.kind) {
    case "data":
      return { type: "data", data: source.data };
    case "provider-file":
      return { type: "reference", reference: { ...source.references } };
    case "ref":
      if (placeholders) return undefined;
      throw unresolvedReferenceError(at, source.ref);
    case "url":
      if (!URL.canParse(source.url))
        throw new ValidationError(
          `${at}: "${source.url}" is not a valid URL; fix the block's url or inline its data`,
          [{ path: at, message: "invalid URL" }],
        );
      return { type: "url", url: new URL(source.url) };
  }
}

type TaggedData = Extract<ParsedFileData, { type: "data" | "url" | "reference" | "text" }>;

function isTagged(data: ParsedFileData): data is TaggedData {
  // A provider reference is a plain record of ids and never has a `type` key.
  return (
    typeof data === "object" && !(data instanceof URL) && "type" in data && typeof data.type === "string"
  );
}

function fromTagged(data: TaggedData): { data?: string; url?: string } {
  switch (data.type) {
    case "data":
      return { data: typeof data.data === "string" ? data.data : base64(data.data) };
    case "url":
      return { url: data.url.href };
    case "reference":
      return { url: providerFileUrl(data.reference) };
    case "text":
      return { data: Buffer.from(data.text, "utf8").toString("base64") };
  }
}

/**
 * Where the bytes of AI SDK file data are, in ctxkit terms: base64 `data` or a `url` (provider references become
 * `provider-file:` URLs, inline text becomes base64 UTF-8, `data:` and http(s) strings are recognised), and the
 * media type a `data:` URL names.
 */
export function fromAiSdkFileData(data: ParsedFileData): { data?: string; url?: string; mediaType?: string } {
  if (data instanceof URL) return { url: data.href };
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return { data: base64(data) };
  if (typeof data === "string") {
    const inline = parseDataUrl(data);
    if (inline) return inline;
    return /^https?:\/\//i.test(data) ? { url: data } : { data };
  }
  if (isTagged(data)) return fromTagged(data);
  return { url: providerFileUrl(data) };
}
