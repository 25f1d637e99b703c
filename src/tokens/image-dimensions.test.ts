import { describe, expect, it } from "vitest";
import { imageDimensions } from "./image-dimensions.ts";

function base64(bytes: number[]): string {
  return btoa(String.fromCharCode(...bytes));
}

const be32 = (value: number) => [
  (value >>> 24) & 255,
  (value >>> 16) & 255,
  (value >>> 8) & 255,
  value & 255,
];
const be16 = (value: number) => [(value >>> 8) & 255, value & 255];
const le16 = (value: number) => [value & 255, (value >>> 8) & 255];
const le24 = (value: number) => [value & 255, (value >>> 8) & 255, (value >>> 16) & 255];
const text = (value: string) => [...value].map((character) => character.charCodeAt(0));
const padding = (length: number) => new Array<number>(length).fill(0);

describe("imageDimensions", () => {
  it("reads a PNG header", () => {
    const png = [
      0x89,
      ...text("PNG\r\n\x1a\n"),
      ...be32(13),
      ...text("IHDR"),
      ...be32(800),
      ...be32(600),
      ...padding(8),
    ];
    expect(imageDimensions(base64(png))).toEqual({ width: 800, height: 600 });
  });

  it("reads a JPEG frame header after other segments", () => {
    const app0 = [0xff, 0xe0, ...be16(16), ...padding(14)];
    const frame = [0xff, 0xc0, ...be16(17), 8, ...be16(480), ...be16(640), 3, ...padding(9)];
    expect(imageDimensions(base64([0xff, 0xd8, ...app0, ...frame]))).toEqual({ width: 640, height: 480 });
  });

  it("reads GIF and WebP (VP8X) headers, with or without a data-URL prefix", () => {
    const gif = [...text("GIF89a"), ...le16(320), ...le16(200), ...padding(20)];
    expect(imageDimensions(base64(gif))).toEqual({ width: 320, height: 200 });
    const webp = [
      ...text("RIFF"),
      ...padding(4),
      ...text("WEBPVP8X"),
      ...padding(8),
      ...le24(1023),
      ...le24(767),
      ...padding(4),
    ];
    expect(imageDimensions(`data:image/webp;base64,${base64(webp)}`)).toEqual({ width: 1024, height: 768 });
  });

  it("returns undefined for unknown formats and invalid base64", () => {
    expect(imageDimensions(base64(padding(64)))).toBeUndefined();
    expect(imageDimensions("not base64 at all!")).toBeUndefined();
  });
});
