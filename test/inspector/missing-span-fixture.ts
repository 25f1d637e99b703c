import { writeFile } from "node:fs/promises";

/** The line of `src/burrow.ts` the fixture's edit replaces (HTML in it must stay text in the inspector). */
export const ANCHOR_LINE = `const wombatLimit = computeWombatLimit("<svg onload=window.__pwned='span'>", 7411);`;

function fileBody(name: string, lines: number, extra?: string): string {
  const body: string[] = [];
  for (let line = 0; line < lines; line++) {
    body.push(
      `export const ${name}Value${line} = ${name}Source(${line}) + ${line * 7}; // keeps ${name} in step`,
    );
    if (extra !== undefined && line === Math.floor(lines / 2)) body.push(extra);
  }
  return body.join("\n");
}

/**
 * Writes an OpenAI-chat transcript whose agent reads `src/burrow.ts` (which holds `ANCHOR_LINE`), then four large
 * files, then edits `ANCHOR_LINE`: in a 16k window governance has put the first read out of view by then, so the
 * edit's anchor is a span the view lacks, held by the first tool output (seq 2).
 *
 * @example
 * await writeMissingSpanTranscript(join(directory, "burrow.json"));
 */
export async function writeMissingSpanTranscript(path: string): Promise<void> {
  const read = (id: string, file: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [
      { id, type: "function", function: { name: "read", arguments: JSON.stringify({ path: file }) } },
    ],
  });
  const messages: object[] = [
    { role: "user", content: "The wombat limit is wrong somewhere: look around, then fix it." },
    read("call_0", "src/burrow.ts"),
    { role: "tool", tool_call_id: "call_0", content: fileBody("burrow", 120, ANCHOR_LINE) },
  ];
  for (const [index, name] of ["warren", "meadow", "thicket", "hollow"].entries()) {
    messages.push(read(`call_${index + 1}`, `src/${name}.ts`), {
      role: "tool",
      tool_call_id: `call_${index + 1}`,
      content: fileBody(name, 120),
    });
  }
  messages.push(
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_edit",
          type: "function",
          function: {
            name: "edit",
            arguments: JSON.stringify({
              path: "src/burrow.ts",
              old_string: ANCHOR_LINE,
              new_string: "const wombatLimit = 7411;",
            }),
          },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_edit", content: "edited" },
    { role: "assistant", content: "Fixed the wombat limit." },
  );
  await writeFile(path, JSON.stringify(messages));
}
