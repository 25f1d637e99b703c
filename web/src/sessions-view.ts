import { getJson } from "./api.ts";
import { el, replaceChildren } from "./dom.ts";
import { cost, tokens, when } from "./format.ts";
import type { Session, SessionList } from "./types.ts";

/**
 * The link to a session's view.
 *
 * @example
 * sessionHref("ses_1"); // "#/sessions/ses_1"
 */
export function sessionHref(id: string): string {
  return `#/sessions/${encodeURIComponent(id)}`;
}

function row(session: Session, owner: string, snippet: string | undefined): HTMLElement {
  const title = session.title ?? "(untitled)";
  return el(
    "tr",
    { className: "session-row", attrs: { "data-session": session.id } },
    el(
      "td",
      {},
      el("a", { className: "session-link", text: title, attrs: { href: sessionHref(session.id) } }),
      el("div", { className: "muted", text: session.id }),
      snippet !== undefined && el("div", { className: "snippet", text: snippet }),
    ),
    el("td", { text: owner }),
    el("td", { text: session.agent ?? session.origin?.format ?? "" }),
    el("td", { text: when(session.updatedAt) }),
    el("td", { className: "num", text: tokens(session.messageCount) }),
    el("td", { className: "num", text: tokens(session.usage.input + session.usage.output) }),
    el("td", { className: "num", text: cost(session.cost) }),
  );
}

/**
 * The sessions list: search box, then a table of sessions (title and id, owner, agent or format, updated,
 * messages, tokens, cost), newest first, with "Load more" while the server has more.
 *
 * @example
 * await renderSessions(main, "acme");
 */
export async function renderSessions(main: HTMLElement, owner: string, query = ""): Promise<void> {
  const body = el("tbody");
  const more = el("div", { className: "more" });
  const input = el("input", {
    className: "search",
    attrs: {
      type: "search",
      placeholder: "Search sessions (title and message text)",
      "aria-label": "Search sessions",
    },
  });
  input.value = query;
  const form = el(
    "form",
    {
      className: "search-form",
      on: {
        submit: (event) => {
          event.preventDefault();
          renderSessions(main, owner, input.value.trim()).catch((error: unknown) => showError(main, error));
        },
      },
    },
    input,
    el("button", { text: "Search", attrs: { type: "submit" } }),
    query !== "" &&
      el("button", {
        text: "Clear",
        attrs: { type: "button" },
        on: { click: () => void renderSessions(main, owner) },
      }),
  );
  const table = el(
    "table",
    { className: "sessions" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ...["Session", "Owner", "Agent / format", "Updated", "Messages", "Tokens (in+out)", "Cost"].map(
          (label) => el("th", { text: label }),
        ),
      ),
    ),
    body,
  );
  replaceChildren(
    main,
    el("h1", { text: query === "" ? "Sessions" : `Sessions matching “${query}”` }),
    form,
    table,
    more,
  );

  const load = async (cursor: string | undefined) => {
    const params = new URLSearchParams();
    if (query !== "") params.set("q", query);
    if (cursor !== undefined) params.set("cursor", cursor);
    const list = await getJson<SessionList>(`/v1/sessions${params.size > 0 ? `?${params.toString()}` : ""}`);
    const snippets = new Map((list.hits ?? []).map((hit) => [hit.sessionId, hit.snippet]));
    for (const session of list.sessions) body.append(row(session, owner, snippets.get(session.id)));
    if (body.childElementCount === 0)
      body.append(el("tr", {}, el("td", { text: "No sessions.", attrs: { colspan: "7" } })));
    more.replaceChildren();
    if (list.nextCursor !== undefined) {
      const next = list.nextCursor;
      more.append(
        el("button", {
          text: "Load more",
          on: { click: () => void load(next).catch((error: unknown) => showError(main, error)) },
        }),
      );
    }
  };
  await load(undefined);
}

/**
 * Shows an error message in place of a view.
 *
 * @example
 * showError(main, new Error("boom"));
 */
export function showError(main: HTMLElement, error: unknown): void {
  main.append(el("p", { className: "error", text: error instanceof Error ? error.message : String(error) }));
}
