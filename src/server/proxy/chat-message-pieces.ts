// A stateful session sends its whole governed view upstream on every turn, and between checkpoints that view only
// grows at its end, its messages the same objects from one turn to the next. Converting and serialising all of it
// again made a turn's CPU grow with the history; here each run of messages is converted and serialised once.
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { toOpenAIChat, type OpenAIChatExportOptions } from "../../formats/providers/openai-chat/index.ts";
import type { Message } from "../../model/message.ts";
import type { BlobStore } from "../../store/blob-store.ts";
import { inlineMedia } from "../../store/media-blobs.ts";
import { JsonText } from "../upstream/json-text.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

type Reasoning = NonNullable<OpenAIChatExportOptions["reasoning"]>;

/** The chat messages of a segment (see `closesSegment`), serialised, for the reasoning mode they were made with. */
interface ConvertedSegment {
  readonly messages: readonly Message[];
  readonly reasoning: Reasoning;
  readonly pieces: readonly JsonText[];
}

/** By a segment's first message: messages are immutable, and a view that drops them lets them go. */
const converted = new WeakMap<Message, ConvertedSegment>();

/**
 * True when the chat messages after `message` do not depend on it or on anything before it: it is sent, as a
 * message of its own (not a marker, which is left out; not a tool message, which joins the tool messages around
 * it; not a message of only opaque blocks, which is left out).
 */
function closesSegment(message: Message): boolean {
  if (message.kind === "marker" || (message.role === "tool" && message.kind === undefined)) return false;
  if (message.content.length === 0) return true;
  for (const block of message.content) if (block.type !== "opaque") return true;
  return false;
}

/**
 * The segment converted before that starts at `messages[start]`, when the same messages still form it: they are
 * there, and its end is still a segment's end (it was not the end of a view that has grown since).
 */
function cachedSegment(messages: readonly Message[], start: number, reasoning: Reasoning) {
  const found = converted.get(messages[start]!);
  if (found?.reasoning !== reasoning) return undefined;
  const end = start + found.messages.length;
  if (end > messages.length) return undefined;
  for (let index = start; index < end; index++)
    if (found.messages[index - start] !== messages[index]) return undefined;
  return end === messages.length || closesSegment(messages[end - 1]!) ? found : undefined;
}

/**
 * `toOpenAIChat(await inlineMedia(messages, blobs), { reasoning })`, each message serialised (`JsonText`), from
 * what earlier calls converted: the view is cut where the chat form of what follows cannot depend on what came
 * before, and a segment of the same message objects as before is not converted again. A segment that had media
 * put back inline is not kept (its data would stay in memory). An error is the whole conversion's, so that it
 * names the message by its place in `messages`.
 *
 * @example
 * const messages = await chatMessagePieces(prepared.messages, store.blobs, "tool-calls");
 * bodyChunks({ model, messages }); // what JSON.stringify({ model, messages: toOpenAIChat(…) }) would write
 */
export async function chatMessagePieces(
  messages: readonly Message[],
  blobs: BlobStore,
  reasoning: Reasoning,
): Promise<JsonText[]> {
  const pieces: JsonText[] = [];
  let start = 0;
  while (start < messages.length) {
    const found = cachedSegment(messages, start, reasoning);
    if (found !== undefined) {
      for (const piece of found.pieces) pieces.push(piece);
      start += found.messages.length;
      continue;
    }
    let end = start + 1;
    while (end < messages.length && !closesSegment(messages[end - 1]!)) end++;
    for (const piece of await convert(messages, start, end, blobs, reasoning)) pieces.push(piece);
    start = end;
  }
  return pieces;
}

async function convert(
  messages: readonly Message[],
  start: number,
  end: number,
  blobs: BlobStore,
  reasoning: Reasoning,
): Promise<readonly JsonText[]> {
  const segment = messages.slice(start, end);
  const sendable = await inlineMedia(segment, blobs);
  let chat;
  try {
    chat = toOpenAIChat(sendable, { reasoning });
  } catch (error) {
    toOpenAIChat(await inlineMedia(messages, blobs), { reasoning });
    throw error;
  }
  const pieces = chat.map((message) => new JsonText(JSON.stringify(message)));
  if (sendable.every((message, index) => message === segment[index]))
    converted.set(segment[0]!, { messages: segment, reasoning, pieces });
  return pieces;
}

/**
 * The OpenAI chat messages of a prepared request, system prompt first, with media kept in the blob store put
 * back inline (the upstream cannot read `blob:` references), serialised once per message (`chatMessagePieces`).
 * The reasoning of assistant messages that made tool calls goes back as `reasoning_content` (DeepSeek's thinking
 * mode answers 400 without it), unless the upstream has `reasoningContent: false`; other reasoning is left out
 * (servers ignore it, or reject it).
 *
 * @example
 * const body = upstreamBody(request, await upstreamChatMessages(prepared, store.blobs, upstream), model);
 */
export async function upstreamChatMessages(
  prepared: PreparedRequest,
  blobs: BlobStore,
  upstream: Pick<UpstreamOptions, "reasoningContent">,
): Promise<(JsonText | { role: "system"; content: string })[]> {
  const reasoning = upstream.reasoningContent === false ? "omit" : "tool-calls";
  const messages = await chatMessagePieces(prepared.messages, blobs, reasoning);
  return prepared.system === "" ? messages : [{ role: "system", content: prepared.system }, ...messages];
}
