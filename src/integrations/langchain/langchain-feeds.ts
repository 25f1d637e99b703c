import type { BaseMessage } from "@langchain/core/messages";
import { sharedFeeds } from "../shared/session-feed.ts";
import { originalOf } from "./langchain-messages.ts";

/** The LangChain adapters' feeds: the middleware and every chat history share one per engine and session. */
export const feedOf = sharedFeeds<BaseMessage>(originalOf);
