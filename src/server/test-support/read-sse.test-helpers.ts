/** One Server-Sent Event: its name (`message` when unnamed) and its parsed JSON data. */
export interface ReceivedEvent {
  readonly event: string;
  readonly data: unknown;
}

/**
 * Reads a whole `text/event-stream` response into events (data parsed as JSON; comments skipped), the way the
 * inspector reads them with `fetch`.
 *
 * @example
 * const events = await readSse(await fetch(url, { method: "POST", headers, body }));
 */
export async function readSse(
  response: Response,
  until?: (event: ReceivedEvent) => boolean,
): Promise<ReceivedEvent[]> {
  const events: ReceivedEvent[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary = buffer.indexOf("\n\n");
    while (boundary >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      boundary = buffer.indexOf("\n\n");
      const lines = block.split("\n");
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart());
      if (data.length === 0) continue;
      const name =
        lines
          .find((line) => line.startsWith("event:"))
          ?.slice(6)
          .trim() ?? "message";
      const event = { event: name, data: JSON.parse(data.join("\n")) as unknown };
      events.push(event);
      if (until?.(event) === true) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}
