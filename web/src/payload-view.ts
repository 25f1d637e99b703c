import { el, visible } from "./dom.ts";
import type { ContentBlock, Message } from "./types.ts";

const PREVIEW_CHARS = 4_000;

/** Reads an offloaded output's full text on demand. */
export type OffloadOpener = (ref: string) => Promise<string>;

/**
 * A `<pre>` with `text` (as text), cut to a preview with a button that shows the rest.
 *
 * @example
 * longText(output);
 */
export function longText(text: string, className = "text"): HTMLElement {
  const pre = el("pre", {
    className,
    text: text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS) : text,
  });
  if (text.length <= PREVIEW_CHARS) return pre;
  const more = el("button", {
    className: "link",
    text: `Show all ${text.length.toLocaleString()} characters`,
    on: {
      click: () => {
        pre.textContent = visible(text);
        more.remove();
      },
    },
  });
  return el("div", {}, pre, more);
}

function stringify(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function offloadButton(ref: string, open: OffloadOpener): HTMLElement {
  const holder = el("div", { className: "offloaded" });
  const button = el("button", {
    className: "open-offloaded",
    text: `Open offloaded output (${ref})`,
    on: {
      click: () => {
        button.disabled = true;
        button.textContent = "Loading…";
        open(ref).then(
          (text) =>
            holder.replaceChildren(
              el("div", { className: "label", text: `Offloaded output ${ref}` }),
              longText(text, "text offloaded-text"),
            ),
          (error: unknown) => {
            button.disabled = false;
            button.textContent = `Could not open ${ref}: ${error instanceof Error ? error.message : String(error)}`;
          },
        );
      },
    },
  });
  holder.append(button);
  return holder;
}

function block(content: ContentBlock, open: OffloadOpener): HTMLElement {
  switch (content.type) {
    case "text":
      return el("div", { className: "block" }, longText(content.text));
    case "reasoning":
      return el(
        "div",
        { className: "block reasoning" },
        el("div", { className: "label", text: "reasoning" }),
        longText(content.text),
      );
    case "tool-call":
      return el(
        "div",
        { className: "block tool-call" },
        el("div", { className: "label", text: `tool call ${content.name} (${content.id})` }),
        longText(stringify(content.input)),
      );
    case "tool-result":
      return el(
        "div",
        { className: `block tool-result${content.isError === true ? " error" : ""}` },
        el("div", {
          className: "label",
          text: `tool result ${content.toolName} (${content.callId})${content.isError === true ? " — error" : ""}`,
        }),
        longText(stringify(content.content)),
        content.offloadRef !== undefined && offloadButton(content.offloadRef, open),
      );
    case "opaque":
      // A provider's own block (a server tool's call or result), kept as it came.
      return el(
        "div",
        { className: "block tool-call" },
        el("div", { className: "label", text: `${content.provider} ${stringify(content.data["type"])}` }),
        longText(stringify(content.data)),
      );
    default:
      return el("div", {
        className: "block media",
        text: `[${content.type}${content.mediaType === undefined ? "" : ` ${content.mediaType}`}${content.ref === undefined ? "" : ` ${content.ref}`}]`,
      });
  }
}

/**
 * One message of a payload: role, seq and kind, then each block as text (tool outputs that governance offloaded
 * get a button that fetches the full output). A `note` marks the message as standing for history that held spans
 * the reply used but this payload lacked.
 *
 * @example
 * list.append(messageView(message, (ref) => fetchOffloaded(ref)));
 */
export function messageView(message: Message, open: OffloadOpener, note?: string): HTMLElement {
  const summary =
    message.kind === "summary"
      ? ` — summary${message.summaryOf === undefined ? "" : ` of seq ${message.summaryOf.fromSeq}–${message.summaryOf.toSeq} (${message.summaryOf.messageCount} messages)`}`
      : message.kind === undefined
        ? ""
        : ` — ${message.kind}`;
  return el(
    "article",
    {
      className: `message role-${message.role}${message.kind === "summary" ? " summary" : ""}${note === undefined ? "" : " holds-missing"}`,
      attrs: { "data-message-id": message.id },
    },
    el("header", { text: `#${message.seq} ${message.role}${summary}` }),
    note !== undefined && el("div", { className: "missing-note", text: note }),
    ...message.content.map((content) => block(content, open)),
  );
}

/**
 * A payload: its messages in order, and the same messages as OpenAI chat JSON on demand, under `jsonLabel` (which
 * says what the payload is: a replay, or the request sent). `notes` (by message id) highlight the messages that
 * stand for history the reply needed and the view lacked.
 *
 * @example
 * panel.append(payloadView(payload.messages, payload.openai, opener, "OpenAI chat JSON (of this replay)"));
 */
export function payloadView(
  messages: readonly Message[],
  openai: readonly unknown[],
  open: OffloadOpener,
  jsonLabel: string,
  notes: ReadonlyMap<string, string> = new Map(),
): HTMLElement {
  const raw = el("details", { className: "openai" }, el("summary", { text: jsonLabel }));
  raw.addEventListener("toggle", () => {
    if (raw.open && raw.childElementCount === 1)
      raw.append(longText(JSON.stringify(openai, null, 2), "text json"));
  });
  return el(
    "div",
    { className: "payload" },
    el("div", { className: "payload-count", text: `${messages.length} messages` }),
    raw,
    el(
      "div",
      { className: "messages" },
      ...messages.map((message) => messageView(message, open, notes.get(message.id))),
    ),
  );
}
