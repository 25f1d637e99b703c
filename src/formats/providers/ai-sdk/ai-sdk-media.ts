import { ValidationError } from "../../../errors/errors.ts";
import type { FileBlock, ImageBlock, ImageDetail } from "../../../model/message.ts";
import {
  imageDetail,
  mediaPlaceholder,
  mediaSource,
  parseDataUrl,
  providerFileUrl,
  unresolvedReferenceError,
} from "../media.ts";
import type { ParsedFileData } from "./ai-sdk-schema.ts";
import type { ProviderOptions, TaggedFileData } from "./ai-sdk-types.ts";

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

/**
 * An image's detail level from a part's `providerOptions`, where the AI SDK's OpenAI provider reads it
 * (`openai.imageDetail`, in user content and tool output content alike).
 *
 * @example
 * detailFromOptions({ openai: { imageDetail: "low" } }); // { detail: "low" }
 */
export function detailFromOptions(
  providerOptions: { readonly [provider: string]: { readonly [key: string]: unknown } } | undefined,
): { detail?: ImageDetail } {
  const detail = providerOptions?.["openai"]?.["imageDetail"];
  return typeof detail === "string" ? imageDetail(detail) : {};
}

/** An image or file as an AI SDK part: a `file` part, or a text placeholder for media kept in the blob store. */
export type AiSdkMediaPart =
  | {
      type: "file";
      data: TaggedFileData;
      mediaType: string;
      filename?: string;
      providerOptions?: ProviderOptions;
    }
  | { type: "text"; text: string };

/**
 * The AI SDK part for an image or file block, fit for user, assistant and tool output content: a `file` part with
 * tagged data, its file name, and an image's detail level in `providerOptions.openai.imageDetail`; a text
 * placeholder for a blob-store reference when placeholders are allowed.
 *
 * @example
 * toAiSdkMediaPart({ type: "image", mediaType: "image/png", url: "https://x.test/a.png", detail: "low" }, at, false);
 * // { type: "file", data: { type: "url", url }, mediaType: "image/png", providerOptions: { openai: { imageDetail: "low" } } }
 */
export function toAiSdkMediaPart(
  block: ImageBlock | FileBlock,
  at: string,
  placeholders: boolean,
): AiSdkMediaPart {
  const data = toAiSdkFileData(block, at, placeholders);
  if (data === undefined) return { type: "text", text: mediaPlaceholder(block, "stored in the blob store") };
  return {
    type: "file",
    data,
    mediaType: block.mediaType,
    ...(block.type === "file" && block.filename !== undefined && { filename: block.filename }),
    ...(block.type === "image" &&
      block.detail !== undefined && { providerOptions: { openai: { imageDetail: block.detail } } }),
  };
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
