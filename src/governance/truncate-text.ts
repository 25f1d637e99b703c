/** Where the omission notice goes and what it says. */
export function omissionNotice(omittedTokens: number, totalTokens: number): string {
  return `[… ${omittedTokens} of ${totalTokens} tokens omitted …]`;
}

/**
 * Keeps the head and tail of `text` within `keepChars` characters (`headShare` of them from the head), cutting on
 * line boundaries when a line break is near, and puts `notice` between them.
 */
export function headTail(text: string, keepChars: number, headShare: number, notice: string): string {
  if (text.length <= keepChars) return text;
  const headChars = Math.floor(keepChars * headShare);
  const tailChars = keepChars - headChars;
  let headEnd = headChars;
  const headBreak = text.lastIndexOf("\n", headEnd);
  if (headBreak > headChars * 0.5) headEnd = headBreak;
  let tailStart = text.length - tailChars;
  const tailBreak = text.indexOf("\n", tailStart);
  if (tailBreak !== -1 && tailBreak < tailStart + tailChars * 0.5) tailStart = tailBreak + 1;
  return `${text.slice(0, headEnd)}\n${notice}\n${text.slice(tailStart)}`;
}
