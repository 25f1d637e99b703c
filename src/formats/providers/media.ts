import { UnsupportedError } from "../../errors/errors.ts";
import type { FileBlock, ImageBlock, ImageDetail } from "../../model/message.ts";

/** URL scheme ctxkit uses for files uploaded to a provider and known by id: `provider-file:openai/file-abc`. */
export const PROVIDER_FILE_SCHEME = "provider-file:";

/**
 * A URL naming a provider-uploaded file by its id, one entry per provider (`{ openai: "file-abc" }` becomes
 * `provider-file:openai/file-abc`). Formats that take file ids (OpenAI `file_id`, Anthropic `file` sources,
 * AI SDK references) read it back; ctxkit keeps it in the block's `url`.
 *
 * @example
 * providerFileUrl({ openai: "file-abc" }); // "provider-file:openai/file-abc"
 */
export function providerFileUrl(references: Readonly<Record<string, string>>): string {
  const entries = Object.entries(references).map(
    ([provider, id]) => `${encodeURIComponent(provider)}/${encodeURIComponent(id)}`,
  );
  return `${PROVIDER_FILE_SCHEME}${entries.join(",")}`;
}

/**
 * The provider file ids in a `provider-file:` URL, or `undefined` for any other URL.
 *
 * @example
 * parseProviderFileUrl("provider-file:openai/file-abc"); // { openai: "file-abc" }
 */
export function parseProviderFileUrl(url: string): Record<string, string> | undefined {
  if (!url.startsWith(PROVIDER_FILE_SCHEME)) return undefined;
  const references: Record<string, string> = {};
  for (const entry of url.slice(PROVIDER_FILE_SCHEME.length).split(",")) {
    const slash = entry.indexOf("/");
    if (slash <= 0) return undefined;
    references[decodeURIComponent(entry.slice(0, slash))] = decodeURIComponent(entry.slice(slash + 1));
  }
  return references;
}

/**
 * A base64 `data:` URL.
 *
 * @example
 * toDataUrl("image/png", "iVBORw0KGgo="); // "data:image/png;base64,iVBORw0KGgo="
 */
export function toDataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

/**
 * The media type and base64 data of a base64 `data:` URL, or `undefined` for any other URL.
 *
 * @example
 * parseDataUrl("data:image/png;base64,iVBORw0KGgo="); // { mediaType: "image/png", data: "iVBORw0KGgo=" }
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match === null) return undefined;
  return { mediaType: match[1]!, data: match[2]! };
}

const mediaTypeByExtension: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  html: "text/html",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
};

/**
 * The media type a URL's file extension suggests, or `fallback`. Formats that reference media by URL do not
 * carry its media type, so this is how an imported URL gets one.
 *
 * @example
 * mediaTypeFromUrl("https://example.com/cat.PNG?x=1", "image/*"); // "image/png"
 */
export function mediaTypeFromUrl(url: string, fallback: string): string {
  const path = url.split(/[?#]/, 1)[0] ?? "";
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return fallback;
  return mediaTypeByExtension[path.slice(dot + 1).toLowerCase()] ?? fallback;
}

const IMAGE_DETAILS: readonly string[] = ["auto", "low", "high", "original"] satisfies ImageDetail[];

/**
 * The `detail` field for an image block read from a provider's detail setting: kept when ctxkit knows the level,
 * left out when absent, equal to `omit` (a format's default) or unknown.
 *
 * @example
 * imageDetail("low"); // { detail: "low" }
 * imageDetail("auto", "auto"); // {}
 */
export function imageDetail(value: string | null | undefined, omit?: ImageDetail): { detail?: ImageDetail } {
  if (value === undefined || value === null || value === omit || !IMAGE_DETAILS.includes(value)) return {};
  return { detail: value as ImageDetail };
}

/** Where an image or file's bytes are. */
export type MediaSource =
  | { readonly kind: "data"; readonly data: string }
  | { readonly kind: "url"; readonly url: string }
  | { readonly kind: "provider-file"; readonly references: Readonly<Record<string, string>> }
  | { readonly kind: "ref"; readonly ref: string };

/**
 * The source of an image or file block: inline data first, then a URL (a `provider-file:` URL is recognised),
 * then a blob-store reference.
 *
 * @example
 * mediaSource({ type: "image", mediaType: "image/png", url: "https://x/cat.png" }); // { kind: "url", url: … }
 */
export function mediaSource(block: ImageBlock | FileBlock): MediaSource {
  if (block.data !== undefined) return { kind: "data", data: block.data };
  if (block.url !== undefined) {
    const references = parseProviderFileUrl(block.url);
    return references ? { kind: "provider-file", references } : { kind: "url", url: block.url };
  }
  return { kind: "ref", ref: block.ref ?? "" };
}

/** Text standing in for media that cannot be sent (a blob-store reference the caller did not resolve). */
export function mediaPlaceholder(block: ImageBlock | FileBlock, reason: string): string {
  const name = block.type === "file" && block.filename !== undefined ? ` ${block.filename}` : "";
  return `[${block.type}${name} (${block.mediaType}) not sent: ${reason}]`;
}

/** The error for a blob-store reference that reached a converter unresolved. */
export function unresolvedReferenceError(where: string, ref: string): UnsupportedError {
  return new UnsupportedError(
    `${where}: media stored as "${ref}" must be loaded before converting; resolve blob references ` +
      `(set data or url) first, or pass { references: "placeholder" }`,
  );
}

/** The error for media a format has no way to express. */
export function unsupportedMediaError(where: string, format: string, what: string): UnsupportedError {
  return new UnsupportedError(`${where}: ${format} cannot carry ${what}; inline the data or drop the block`);
}
