// Characters XML 1.0 does not allow at all (C0 controls other than tab, line feed and carriage return, and
// lone surrogates); they are replaced so the prompt stays well-formed.
const INVALID_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Escapes text for an XML element body: `&`, `<` and `>` become entities, so content such as `</turn>` can never
 * close an element of the prompt. Characters XML forbids become U+FFFD.
 *
 * @example
 * escapeXmlText("a </turn> b & c"); // "a &lt;/turn&gt; b &amp; c"
 */
export function escapeXmlText(value: string): string {
  return value
    .replace(INVALID_XML, "\uFFFD")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

/**
 * Escapes a value for a double- or single-quoted XML attribute.
 *
 * @example
 * `<turn role="${escapeXmlAttribute('x" y')}">`; // '<turn role="x&quot; y">'
 */
export function escapeXmlAttribute(value: string): string {
  return escapeXmlText(value).replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}
