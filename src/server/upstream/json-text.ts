/**
 * A JSON value serialised once, as UTF-8 bytes, to be sent many times: a stateful proxy's history message, whose
 * wire form does not change from one turn to the next. `JSON.stringify` sees the value it holds (`toJSON`), so a
 * body holding one serialises the same with or without `bodyChunks`; `bodyChunks` sends its bytes instead.
 *
 * @example
 * const piece = new JsonText(JSON.stringify({ role: "user", content: "hi" }));
 * bodyChunks({ model: "m", messages: [piece] }); // the bytes of {"model":"m","messages":[{"role":"user","content":"hi"}]}
 */
export class JsonText {
  /** The value's JSON text as UTF-8. */
  readonly bytes: Buffer;

  /** `text` must be what `JSON.stringify` writes for the value (so that both serialisations agree). */
  constructor(text: string) {
    this.bytes = Buffer.from(text);
  }

  /** The value itself, for a plain `JSON.stringify` of a body holding this (slower than `bodyChunks`). */
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString());
  }
}

const COMMA = Buffer.from(",");

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);

const holdsPieces = (value: unknown): value is unknown[] =>
  Array.isArray(value) && value.some((item) => item instanceof JsonText);

/**
 * The bytes of `JSON.stringify(body)`, in chunks to write one after the other: the `JsonText` items of the body's
 * top-level arrays (a request's `messages`) are their own chunks, sent as they are instead of serialised again
 * (nor copied into one buffer), so the work of a request grows with what is new in it, not with the whole history
 * it sends. A `RangeError` (a value nested too deeply) is thrown as `JSON.stringify` throws it.
 *
 * @example
 * for (const chunk of bodyChunks({ ...request, messages: pieces })) upstreamRequest.write(chunk);
 */
export function bodyChunks(body: unknown): Buffer[] {
  if (!isPlainObject(body) || !Object.values(body).some(holdsPieces))
    return [Buffer.from(JSON.stringify(body))];
  const chunks: Buffer[] = [];
  let text = "{";
  let first = true;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (!holdsPieces(value)) {
      const json = JSON.stringify(value) as string | undefined;
      if (json === undefined) continue; // undefined, a function or a symbol: left out, as JSON.stringify does
      text += `${first ? "" : ","}${JSON.stringify(key)}:${json}`;
      first = false;
      continue;
    }
    text += `${first ? "" : ","}${JSON.stringify(key)}:[`;
    first = false;
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      if (!(item instanceof JsonText)) {
        text += `${index > 0 ? "," : ""}${(JSON.stringify(item) as string | undefined) ?? "null"}`;
        continue;
      }
      if (index > 0) text += ",";
      if (text === ",") chunks.push(COMMA);
      else chunks.push(Buffer.from(text));
      chunks.push(item.bytes);
      text = "";
    }
    text += "]";
  }
  chunks.push(Buffer.from(`${text}}`));
  return chunks;
}
