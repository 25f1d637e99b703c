/** One Server-Sent Event as it arrived: its exact text (blank-line terminator included) and its data. */
export interface RawSseEvent {
  /** The event's text exactly as received, ending with its blank line. */
  readonly raw: string;
  /** The `data:` lines joined with `\n`; undefined when the event has none (a comment, a bare `event:`). */
  readonly data: string | undefined;
}

const BOUNDARY = /\r\n\r\n|\n\n|\r\r/;

function dataOf(text: string): string | undefined {
  const lines: string[] = [];
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line === "data" || line.startsWith("data:")) lines.push(line.slice(5).replace(/^ /, ""));
  }
  return lines.length === 0 ? undefined : lines.join("\n");
}

/**
 * Splits a byte stream into whole SSE events, keeping each event's exact text so it can be forwarded
 * unchanged. Bytes are decoded as a UTF-8 stream, so a character split across chunks is never broken.
 *
 * @example
 * const splitter = new SseEventSplitter();
 * for (const event of splitter.push(chunk)) forward(event.raw);
 * const tail = splitter.end(); // whatever followed the last blank line
 */
export class SseEventSplitter {
  readonly #decoder = new TextDecoder("utf-8");
  #buffer = "";

  /** The events completed by `chunk`. */
  push(chunk: Uint8Array): RawSseEvent[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    const events: RawSseEvent[] = [];
    for (;;) {
      const match = BOUNDARY.exec(this.#buffer);
      if (match === null) break;
      const end = match.index + match[0].length;
      const raw = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end);
      events.push({ raw, data: dataOf(raw.slice(0, match.index)) });
    }
    return events;
  }

  /** The unterminated rest of the stream, as a final event (undefined when nothing is left). */
  end(): RawSseEvent | undefined {
    const rest = this.#buffer + this.#decoder.decode();
    this.#buffer = "";
    if (rest.trim() === "") return rest === "" ? undefined : { raw: rest, data: undefined };
    return { raw: rest, data: dataOf(rest) };
  }
}

/**
 * The SSE events of a body's chunks, in order, the text after the last blank line included.
 *
 * @example
 * for await (const event of sseEvents(upstream.chunks())) forward(event.raw);
 */
export async function* sseEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<RawSseEvent> {
  const splitter = new SseEventSplitter();
  for await (const chunk of chunks) yield* splitter.push(chunk);
  const tail = splitter.end();
  if (tail !== undefined) yield tail;
}

/**
 * The JSON object (or array) of an event's data; undefined when it has none or it is not JSON.
 *
 * @example
 * if (eventObject(event)?.["type"] === "message_stop") …
 */
export function eventObject(event: RawSseEvent): Record<string, unknown> | undefined {
  if (event.data === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
