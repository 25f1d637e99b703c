import type { JsonValue } from "../model/message.ts";

/** Keys whose string values are encoded images or files (`image_b64`, `screenshot`, `data_base64`, …). */
const BINARY_KEY = /(^|[_-])(b64|base64)$|^(image|screenshot|screen_?shot)(_?data)?$|screenshot/i;
const DATA_URL = /data:[\w.+-]+\/[\w.+-]+(;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=]+/g;
/** A run of base64 this long (and mixed, see `looksEncoded`) is not prose, a path or an id: it is a payload. */
const BASE64_RUN = /[A-Za-z0-9+/]{200,}={0,2}/g;
/** An encoded value under a binary key (a path such as `shots/a.png` is not one). */
const ENCODED = /^[A-Za-z0-9+/=\r\n]{32,}$/;

function omitted(what: string, length: number): string {
  return `[${what} omitted, ${length} characters]`;
}

/** Encoded bytes mix upper and lower case and digits; a row of `x` or a long identifier does not. */
function looksEncoded(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

/** `text` with data URLs and long base64 runs replaced by a short placeholder. */
function stripText(text: string): string {
  return text
    .replace(DATA_URL, (match) => omitted("data URL", match.length))
    .replace(BASE64_RUN, (match) => (looksEncoded(match) ? omitted("base64", match.length) : match));
}

/**
 * A tool call's input or result with its screenshots and other encoded binaries replaced by placeholders:
 * string values under keys such as `image_b64` or `screenshot`, data URLs, and long base64 runs anywhere (also
 * inside JSON text). A summary meant for another agent's context must not carry a megabyte of pixels (the Contop
 * seed strips `image_b64` before persisting tool results). Returns the input itself when nothing was stripped.
 *
 * @example
 * stripBinaryFields({ status: "ok", image_b64: "iVBORw0KGgo…" }); // { status: "ok", image_b64: "[image_b64 omitted, 90412 characters]" }
 */
export function stripBinaryFields<Value extends JsonValue>(value: Value): Value {
  return strip(value) as Value;
}

function strip(value: JsonValue): JsonValue {
  if (typeof value === "string") return stripText(value);
  if (Array.isArray(value)) {
    const items = value.map(strip);
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  if (value === null || typeof value !== "object") return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, item]): [string, JsonValue] => {
    const next =
      typeof item === "string" && BINARY_KEY.test(key) && ENCODED.test(item)
        ? omitted(key, item.length)
        : strip(item);
    if (next !== item) changed = true;
    return [key, next];
  });
  return changed ? Object.fromEntries(entries) : value;
}
