import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseEventSplitter } from "./sse-event-splitter.ts";

const encoder = new TextEncoder();

function splitAll(bytes: Uint8Array, cuts: readonly number[]) {
  const splitter = new SseEventSplitter();
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const events = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    events.push(...splitter.push(bytes.slice(start, point)));
    start = point;
  }
  const tail = splitter.end();
  return { events, tail };
}

describe("SseEventSplitter", () => {
  it("keeps each event's exact text and joins multi-line data", () => {
    const text = 'data: {"a":1}\n\nevent: x\ndata: one\ndata: two\n\n: comment\n\ndata: [DONE]\n\n';
    const { events, tail } = splitAll(encoder.encode(text), []);
    expect(events.map((event) => event.raw).join("")).toBe(text);
    expect(events.map((event) => event.data)).toEqual(['{"a":1}', "one\ntwo", undefined, "[DONE]"]);
    expect(tail).toBeUndefined();
  });

  it("understands CRLF line ends and returns an unterminated last event", () => {
    const { events, tail } = splitAll(encoder.encode('data: {"b":2}\r\n\r\ndata: partial'), []);
    expect(events).toEqual([{ raw: 'data: {"b":2}\r\n\r\n', data: '{"b":2}' }]);
    expect(tail).toEqual({ raw: "data: partial", data: "partial" });
  });

  it("gives the same events however the bytes are cut, multi-byte characters included", () => {
    const eventText = fc.array(
      fc.string({ unit: "grapheme", maxLength: 20 }).map((text) => text.replace(/[\r\n]/g, " ")),
      {
        minLength: 1,
        maxLength: 6,
      },
    );
    fc.assert(
      fc.property(eventText, fc.array(fc.nat(), { maxLength: 12 }), (datas, cuts) => {
        const text = datas.map((data) => `data: ${data}\n\n`).join("");
        const bytes = encoder.encode(text);
        const { events, tail } = splitAll(bytes, cuts);
        expect(tail).toBeUndefined();
        expect(events.map((event) => event.raw).join("")).toBe(text);
        expect(events.map((event) => event.data)).toEqual(datas);
      }),
    );
  });
});
