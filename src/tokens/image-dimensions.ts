/** Width and height of an image, in pixels. */
export interface ImageDimensions {
  readonly width: number;
  readonly height: number;
}

/** JPEG metadata (EXIF, ICC profiles) can push the frame header this far into the file. */
const HEADER_BYTES = 96 * 1024;

/** Decodes at most `maximumBytes` bytes from the start of base64 `data` (whitespace and data-URL prefix allowed). */
function decodeHead(data: string, maximumBytes: number): Uint8Array | undefined {
  const comma = data.startsWith("data:") ? data.indexOf(",") : -1;
  const body = data.slice(comma + 1, comma + 1 + Math.ceil((maximumBytes * 4) / 3) + 4).replace(/\s+/g, "");
  const usable = body.length - (body.length % 4);
  try {
    const binary = atob(body.slice(0, usable));
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}

function bigEndian16(bytes: Uint8Array, at: number): number {
  return ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
}

function littleEndian16(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
}

function littleEndian24(bytes: Uint8Array, at: number): number {
  return littleEndian16(bytes, at) | ((bytes[at + 2] ?? 0) << 16);
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

function pngDimensions(bytes: Uint8Array): ImageDimensions {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

function jpegDimensions(bytes: Uint8Array): ImageDimensions | undefined {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] ?? 0;
    // Start-of-frame markers C0–CF, except C4 (Huffman tables), C8 (reserved) and CC (arithmetic coding).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bigEndian16(bytes, at + 5), width: bigEndian16(bytes, at + 7) };
    }
    at += 2 + bigEndian16(bytes, at + 2);
  }
  return undefined;
}

function webpDimensions(bytes: Uint8Array): ImageDimensions | undefined {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === "VP8X") {
    return { width: littleEndian24(bytes, 24) + 1, height: littleEndian24(bytes, 27) + 1 };
  }
  if (chunk === "VP8 ") {
    return { width: littleEndian16(bytes, 26) & 0x3fff, height: littleEndian16(bytes, 28) & 0x3fff };
  }
  if (chunk === "VP8L") {
    const bits = littleEndian16(bytes, 21) | ((bytes[23] ?? 0) << 16) | ((bytes[24] ?? 0) << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return undefined;
}

/**
 * Reads the pixel size from the header of a base64-encoded PNG, JPEG, GIF or WebP image (only the first
 * bytes are decoded). Undefined when the format is not recognised or the header is damaged.
 *
 * @example
 * imageDimensions(pngBase64); // { width: 800, height: 600 }
 */
export function imageDimensions(base64: string): ImageDimensions | undefined {
  const bytes = decodeHead(base64, HEADER_BYTES);
  if (bytes === undefined || bytes.length < 26) return undefined;
  let dimensions: ImageDimensions | undefined;
  if (bytes[0] === 0x89 && ascii(bytes, 1, 3) === "PNG") dimensions = pngDimensions(bytes);
  else if (bytes[0] === 0xff && bytes[1] === 0xd8) dimensions = jpegDimensions(bytes);
  else if (ascii(bytes, 0, 4) === "GIF8") {
    dimensions = { width: littleEndian16(bytes, 6), height: littleEndian16(bytes, 8) };
  } else if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP")
    dimensions = webpDimensions(bytes);
  if (dimensions === undefined || dimensions.width <= 0 || dimensions.height <= 0) return undefined;
  return dimensions;
}
