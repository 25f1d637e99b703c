/** DOM helpers that only ever set text: data from transcripts never becomes markup. */

type Child = Node | string | undefined | false;

/** Options of `el`. */
export interface ElementOptions {
  readonly className?: string;
  /** Shown with `textContent`: inert whatever it contains. */
  readonly text?: string;
  readonly attrs?: Readonly<Record<string, string>>;
  readonly on?: Readonly<Partial<Record<"click" | "submit" | "toggle" | "input", (event: Event) => void>>>;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(visible(child)) : child);
  }
}

/**
 * Makes control characters visible (ANSI escapes show as `␛[31m`, not as colours or nothing); text is still
 * only ever set as text.
 *
 * @example
 * visible("\u001b[31mred"); // "␛[31mred"
 */
export function visible(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, (char) =>
    char === "\u001b" ? "␛" : `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Creates an HTML element with a class, text (as `textContent`), attributes, listeners and children.
 *
 * @example
 * el("button", { text: "Open", on: { click: () => open() } });
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.className !== undefined) node.className = options.className;
  if (options.text !== undefined) node.textContent = visible(options.text);
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  for (const [name, listener] of Object.entries(options.on ?? {})) node.addEventListener(name, listener);
  append(node, children);
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Creates an SVG element with attributes and children (text children become text nodes).
 *
 * @example
 * svg("rect", { x: "0", y: "0", width: "10", height: "20", class: "bar" });
 */
export function svg(
  tag: string,
  attrs: Readonly<Record<string, string | number>> = {},
  ...children: Child[]
) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  append(node, children);
  return node;
}

/**
 * Replaces a node's children.
 *
 * @example
 * replaceChildren(main, el("p", { text: "Loading…" }));
 */
export function replaceChildren(node: Element, ...children: Child[]): void {
  node.replaceChildren();
  append(node, children);
}
