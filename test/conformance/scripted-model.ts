// The model every adapter of the conformance suite talks to, through its own framework's model interface: it
// reads one file per question, then answers naming the question; a test may make any call fail.

/** A model request as the script reads it, whatever the framework. */
export interface ScriptedRequest {
  /** The session (conversation) the request belongs to. */
  readonly session: string;
  /** The role of the request's last message. */
  readonly last: "user" | "assistant" | "tool";
  /** The text of the request's last user message. */
  readonly question: string;
  /** Everything the framework sends, serialised: what must be byte-identical across a restart. */
  readonly wire: string;
  /** The tool names the request offers the model. */
  readonly tools: readonly string[];
}

/** What the script answers: a text, or one tool call. */
export type ScriptedReply =
  | { readonly text: string }
  | {
      readonly call: {
        readonly id: string;
        readonly name: string;
        readonly input: { [key: string]: string };
      };
    };

/** The file every question reads: long enough for governance to offload it from older turns. */
export function fileContent(path: string): string {
  return `// ${path}\n${`export const line = "${path}";\n`.repeat(200)}`;
}

/** An overflow as OpenAI's SDK throws it. */
export function overflowError(): Error {
  return Object.assign(new Error("This model's maximum context length is 12000 tokens."), {
    status: 400,
    code: "context_length_exceeded",
  });
}

/** The script, with every request it was sent and the failures a test asks for. */
export class ScriptedModel {
  readonly requests: ScriptedRequest[] = [];
  /** Makes the request at this index (0-based, over all requests) fail with the error. */
  readonly failures = new Map<number, Error>();

  answer(request: ScriptedRequest): ScriptedReply {
    const index = this.requests.push(request) - 1;
    const failure = this.failures.get(index);
    if (failure !== undefined) throw failure;
    if (request.last === "tool") return { text: `Answered: ${request.question}` };
    const name = request.question.replace(/\W+/g, "_");
    return { call: { id: `call_${name}`, name: "read_file", input: { path: `src/${name}.ts` } } };
  }

  /** The requests of one session. */
  of(session: string): ScriptedRequest[] {
    return this.requests.filter((request) => request.session === session);
  }
}
