/**
 * A log that writes the lines of one event-loop turn together: under load a server logs a line per request, and
 * one write per line (a system call each) cost more CPU than the lines themselves.
 *
 * @example
 * const log = batchedLines((text) => process.stderr.write(text));
 * log("POST /v1/chat/completions 200 21.3ms …"); // written with the turn's other lines, after it
 */
export function batchedLines(write: (text: string) => void): (line: string) => void {
  let pending = "";
  const flush = () => {
    const text = pending;
    pending = "";
    write(text);
  };
  return (line) => {
    if (pending === "") setImmediate(flush);
    pending += `${line}\n`;
  };
}
