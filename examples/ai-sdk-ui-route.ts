// README: a Next.js route for `useChat` (app/api/chat/route.ts): the chat is loaded and saved by id in a ctxkit
// store, and every model call is governed. Type-checked by `npm test`.
import { openai } from "@ai-sdk/openai";
import { convertToModelMessages, stepCountIs, streamText, tool, wrapLanguageModel, type UIMessage } from "ai";
import { z } from "zod";
import { counterForModel, createExtractiveSummarizer } from "ctxkit";
import { ctxkitMiddleware, loadChat, saveChat } from "ctxkit/ai-sdk";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const store = await openSqliteSessionStore({ path: "chats.db" });
const counter = await counterForModel("gpt-4.1");
const summarizer = createExtractiveSummarizer();
const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `Sunny in ${city}`,
  }),
};

/** `useChat` posts `{ id, messages }`; the reply streams back as UI message parts. */
export async function POST(request: Request): Promise<Response> {
  const { id, messages }: { id: string; messages: UIMessage[] } = await request.json();
  const model = wrapLanguageModel({
    model: openai("gpt-4.1"),
    // One governor per chat: the session id is also OpenAI's prompt-cache key.
    middleware: ctxkitMiddleware({ sessionId: id, contextWindow: 128_000, counter, summarizer }),
  });
  const result = streamText({
    model,
    instructions: "You are a helpful assistant.",
    messages: await convertToModelMessages(messages, { tools }),
    tools,
    stopWhen: stepCountIs(5),
  });
  return result.toUIMessageStreamResponse({
    originalMessages: messages,
    onFinish: ({ messages }) => saveChat(store, id, messages, { tools }),
  });
}

/** The page loads a chat's messages for `useChat({ id, messages })`. */
export async function GET(request: Request): Promise<Response> {
  const id = new URL(request.url).searchParams.get("id");
  if (id === null) return new Response("missing ?id=", { status: 400 });
  return Response.json(await loadChat(store, id));
}
