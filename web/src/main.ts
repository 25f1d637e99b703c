import { AuthRequired, getJson, storeKey, storedKey } from "./api.ts";
import { el, replaceChildren } from "./dom.ts";
import { KEY_REQUIRED_PROMPT } from "./key-prompt.ts";
import { renderSession } from "./session-view.ts";
import { renderSessions, showError } from "./sessions-view.ts";

const main = document.getElementById("main")!;
const who = document.getElementById("who")!;

function keyForm(message: string): void {
  const input = el("input", {
    attrs: { type: "password", autocomplete: "off", placeholder: "ctxk_…", "aria-label": "API key" },
  });
  replaceChildren(
    main,
    el("h1", { text: "API key" }),
    el("p", { text: message }),
    el(
      "form",
      {
        className: "key-form",
        on: {
          submit: (event) => {
            event.preventDefault();
            const key = input.value.trim();
            if (key === "") return;
            storeKey(key);
            void route();
          },
        },
      },
      input,
      el("button", { text: "Use this key", attrs: { type: "submit" } }),
    ),
    el("p", {
      className: "muted",
      text: "The key is kept in this tab's sessionStorage only and sent to this server alone.",
    }),
  );
  input.focus();
}

async function route(): Promise<void> {
  try {
    if (storedKey() === undefined) {
      // /health needs no key and says whether the server wants one: no 401 round trip before the key form.
      const health = (await (await fetch("/health", { credentials: "omit" })).json()) as { auth?: boolean };
      if (health.auth !== false) throw new AuthRequired();
    }
    const me = await getJson<{ tenant: string; auth: boolean }>("/v1/me");
    replaceChildren(
      who,
      `tenant ${me.tenant}`,
      me.auth &&
        el("button", {
          className: "link",
          text: "Forget key",
          on: {
            click: () => {
              storeKey(undefined);
              keyForm("Key forgotten. Enter a key to continue.");
            },
          },
        }),
    );
    const match = /^#\/sessions\/(.+)$/.exec(location.hash);
    if (match?.[1] !== undefined) await renderSession(main, decodeURIComponent(match[1]));
    else await renderSessions(main, me.tenant);
  } catch (error) {
    if (error instanceof AuthRequired) {
      replaceChildren(who);
      keyForm(
        storedKey() === undefined ? KEY_REQUIRED_PROMPT : "The server refused this key. Enter another one.",
      );
      if (storedKey() !== undefined) storeKey(undefined);
      return;
    }
    showError(main, error);
  }
}

window.addEventListener("hashchange", () => void route());
void route();
