/** The command that creates an API key; tests check that the CLI really has it. */
export const CREATE_KEY_COMMAND = "ctxkit serve keys add <tenant>";

/** What the inspector says when the server wants a key and none is stored. */
export const KEY_REQUIRED_PROMPT = `This server requires an API key (create one with ${CREATE_KEY_COMMAND}).`;
