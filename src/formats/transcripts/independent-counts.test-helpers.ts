// Counts computed straight from the raw transcript JSON, without the importers' code, to check them against.
// The Claude Code counter walks the record tree top-down (depth-first from the roots to the leaf) where the
// importer walks parent links bottom-up.

/** Expected figures of one conversation. */
export interface ExpectedCounts {
  readonly messages: number;
  readonly toolCalls: number;
  /** Sum of provider-reported output tokens, when the format reports usage. */
  readonly outputTokens?: number;
  /**
   * Calls the transcript records no result for (interrupted, cut off by a compaction or by the end of the file):
   * the importer must give each a result that says so.
   */
  readonly unansweredCalls: readonly string[];
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function jsonLines(text: string): Json[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);
}

function blocksOf(record: Json): Json[] {
  const content = record["message"]?.["content"];
  return Array.isArray(content) ? (content as Json[]) : [];
}

/** One entry per conversation of a Claude Code file: main first, then each subagent, by first appearance. */
export function countClaudeCode(text: string): ExpectedCounts[] {
  const streams = new Map<string, Json[]>();
  for (const record of jsonLines(text)) {
    if (typeof record["uuid"] !== "string") continue;
    const key = record["isSidechain"] === true ? `agent:${record["agentId"] ?? ""}` : "main";
    streams.set(key, [...(streams.get(key) ?? []), record]);
  }
  return [...streams.values()].map(countClaudeStream).filter((counts) => counts !== undefined);
}

function countClaudeStream(records: Json[]): ExpectedCounts | undefined {
  const conversational = records.filter(
    (record) => record["type"] === "user" || record["type"] === "assistant",
  );
  const leaf = conversational.at(-1);
  if (!leaf) return undefined;
  const path = pathFromRoot(records, leaf["uuid"] as string);
  const onPath = new Set(path);
  const responseIds = new Set(
    records
      .filter((record) => onPath.has(record["uuid"]) && record["type"] === "assistant")
      .map((record) => record["message"]?.["id"] ?? record["uuid"]),
  );
  const callIds = new Set<string>();
  const lastLineOfResponse = new Map<string, Json>();
  for (const record of records) {
    if (record["type"] !== "assistant" || !responseIds.has(record["message"]?.["id"] ?? record["uuid"]))
      continue;
    lastLineOfResponse.set(record["message"]?.["id"] ?? record["uuid"], record);
    for (const block of blocksOf(record)) if (block["type"] === "tool_use") callIds.add(block["id"]);
  }
  const answered = new Set<string>();
  for (const record of records) {
    if (record["type"] !== "user") continue;
    for (const block of blocksOf(record)) {
      if (block["type"] === "tool_result" && callIds.has(block["tool_use_id"]))
        answered.add(block["tool_use_id"]);
    }
  }
  let userMessages = 0;
  let markers = 0;
  for (const record of records) {
    if (!onPath.has(record["uuid"])) continue;
    if (record["type"] === "system" && record["subtype"] === "compact_boundary") markers++;
    if (record["type"] !== "user") continue;
    const content = record["message"]?.["content"];
    if (typeof content === "string" || blocksOf(record).some((block) => block["type"] !== "tool_result"))
      userMessages++;
  }
  let outputTokens = 0;
  for (const record of lastLineOfResponse.values())
    outputTokens += record["message"]?.["usage"]?.["output_tokens"] ?? 0;
  return {
    // Every call gets one result: the recorded one, or the importer's note that none was recorded.
    messages: responseIds.size + callIds.size + userMessages + markers,
    toolCalls: callIds.size,
    outputTokens,
    unansweredCalls: [...callIds].filter((id) => !answered.has(id)),
  };
}

/** The uuids from a root down to `leaf`, found by an iterative depth-first search over child links. */
function pathFromRoot(records: Json[], leaf: string): string[] {
  const known = new Set(records.map((record) => record["uuid"] as string));
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  records.forEach((record, index) => {
    let parent: string | undefined = record["parentUuid"] ?? record["logicalParentUuid"] ?? undefined;
    if (
      parent !== undefined &&
      !known.has(parent) &&
      record["parentUuid"] == null &&
      record["logicalParentUuid"]
    ) {
      // Same rule as the format notes: an unwritten logical parent means "the conversational record before".
      parent = records
        .slice(0, index)
        .findLast((earlier) => earlier["type"] === "user" || earlier["type"] === "assistant")?.["uuid"];
    }
    if (parent === undefined || !known.has(parent)) roots.push(record["uuid"]);
    else children.set(parent, [...(children.get(parent) ?? []), record["uuid"]]);
  });
  const stack: { uuid: string; path: string[] }[] = roots.map((uuid) => ({ uuid, path: [uuid] }));
  while (stack.length > 0) {
    const { uuid, path } = stack.pop()!;
    if (uuid === leaf) return path;
    for (const child of children.get(uuid) ?? []) stack.push({ uuid: child, path: [...path, child] });
  }
  throw new Error(`leaf ${leaf} is not reachable from any root`);
}

/** Items of a model's output: reasoning, assistant text and every kind of call (`function_call`, `tool_search_call`, …). */
function isCodexOutput(payload: Json): boolean {
  const type = String(payload["type"]);
  return (
    type === "reasoning" || type.endsWith("_call") || (type === "message" && payload["role"] === "assistant")
  );
}

/** A Codex rollout: one conversation. */
export function countCodex(text: string): ExpectedCounts[] {
  const lines = jsonLines(text);
  let messages = lines.some(
    (line) => line["type"] === "session_meta" && line["payload"]?.["base_instructions"],
  )
    ? 1
    : 0;
  let inRun = false;
  let outputTokens = 0;
  const calls: string[] = [];
  const outputs = new Set<string>();
  for (const line of lines) {
    const payload = line["payload"] ?? {};
    if (line["type"] === "event_msg" && payload["type"] === "token_count") {
      outputTokens += payload["info"]?.["last_token_usage"]?.["output_tokens"] ?? 0;
    }
    if (line["type"] === "compacted") messages += payload["message"] ? 2 : 1; // a marker, then the summary
    if (line["type"] !== "response_item") continue;
    const type = String(payload["type"]);
    const isOutput = isCodexOutput(payload);
    if (isOutput && !inRun) messages++;
    inRun = isOutput;
    if (type === "message" && payload["role"] !== "assistant") messages++;
    if (type === "web_search_call") {
      calls.push(payload["id"] ?? `web_search:${calls.length}`);
      outputs.add(calls.at(-1)!); // the importer's empty result: the server ran it and logged nothing
      messages++;
    } else if (type.endsWith("_call") && payload["call_id"]) calls.push(payload["call_id"]);
    if (type.endsWith("_output") && payload["call_id"]) {
      outputs.add(payload["call_id"]);
      messages++;
    }
  }
  const unansweredCalls = calls.filter((id) => !outputs.has(id));
  return [
    {
      messages: messages + unansweredCalls.length,
      toolCalls: calls.length,
      outputTokens,
      unansweredCalls,
    },
  ];
}

/** A Gemini CLI session: one conversation. */
export function countGeminiCli(text: string): ExpectedCounts[] {
  const session = JSON.parse(text) as Json;
  let messages = 0;
  let toolCalls = 0;
  let outputTokens = 0;
  for (const message of session["messages"] as Json[]) {
    if (message["type"] !== "user" && message["type"] !== "gemini") continue;
    const calls = (message["toolCalls"] ?? []).length as number;
    messages += 1 + calls; // each call's result sits inside the message that made it
    toolCalls += calls;
    outputTokens += (message["tokens"]?.["output"] ?? 0) + (message["tokens"]?.["thoughts"] ?? 0);
  }
  return [{ messages, toolCalls, outputTokens, unansweredCalls: [] }];
}

/** OpenAI chat JSON: one entry per tau-bench episode, or one for a plain message list. */
export function countOpenAiChat(text: string): ExpectedCounts[] {
  const document = JSON.parse(text) as Json;
  const conversations: Json[][] = Array.isArray(document)
    ? document[0]?.["traj"]
      ? document.map((episode: Json) => episode["traj"] as Json[])
      : [document as Json[]]
    : [document["messages"] as Json[]];
  return conversations.map((messages) => {
    const calls = messages.flatMap((message) =>
      (message["tool_calls"] ?? []).map((call: Json) => call["id"]),
    );
    const answered = new Set(messages.map((message) => message["tool_call_id"]));
    const unansweredCalls = calls.filter((id) => !answered.has(id));
    return { messages: messages.length + unansweredCalls.length, toolCalls: calls.length, unansweredCalls };
  });
}

/** A SWE-agent trajectory: one conversation. */
export function countSweAgent(text: string): ExpectedCounts[] {
  const history = (JSON.parse(text) as Json)["history"] as Json[];
  const functionCalling = history.some((entry) => entry["role"] === "tool" || entry["tool_calls"]?.length);
  let messages = 0;
  let toolCalls = 0;
  const calls: string[] = [];
  const answered = new Set<string>();
  history.forEach((entry, index) => {
    messages += entry["role"] === "tool" ? Math.max(1, entry["tool_call_ids"]?.length ?? 1) : 1;
    for (const id of entry["tool_call_ids"] ?? []) answered.add(id);
    if (functionCalling) {
      toolCalls += entry["tool_calls"]?.length ?? 0;
      for (const call of entry["tool_calls"] ?? []) calls.push(call["id"]);
    } else if (
      entry["role"] === "assistant" &&
      entry["action"]?.trim() &&
      history[index + 1]?.["role"] === "user"
    )
      toolCalls++;
  });
  const unansweredCalls = calls.filter((id) => !answered.has(id));
  return [{ messages: messages + unansweredCalls.length, toolCalls, unansweredCalls }];
}
