import type { Message } from "../model/message.ts";
import { opensTurn } from "../model/turns.ts";

/** Figures derived from a governed view. */
export interface ViewFigures {
  /** Tokens of its messages. */
  readonly tokens: number;
  /** Its user turns. */
  readonly turns: number;
  /** Tokens after its newest summary (what a settled-history compaction could summarise). */
  readonly unsettledTokens: number;
}

/**
 * The figures of a view, derived from it and remembered: a view that only grew at its end since the last call
 * costs only its new messages, any other view is counted afresh. Nothing here is state: the same view always
 * gives the same figures.
 */
export class ViewFigureCache {
  readonly #tokensOf: (message: Message) => number;
  #view: readonly Message[] | undefined;
  #counted = 0;
  #figures: ViewFigures = { tokens: 0, turns: 0, unsettledTokens: 0 };

  constructor(tokensOf: (message: Message) => number) {
    this.#tokensOf = tokensOf;
  }

  /** The figures of `view` (a view grown in place at its end keeps its earlier figures). */
  of(view: readonly Message[]): ViewFigures {
    if (view !== this.#view || view.length < this.#counted) {
      this.#view = view;
      this.#counted = 0;
      this.#figures = { tokens: 0, turns: 0, unsettledTokens: 0 };
    }
    let { tokens, turns, unsettledTokens } = this.#figures;
    for (let index = this.#counted; index < view.length; index++) {
      const message = view[index]!;
      const count = this.#tokensOf(message);
      tokens += count;
      if (opensTurn(message)) turns++;
      unsettledTokens = message.kind === "summary" ? 0 : unsettledTokens + count;
    }
    this.#counted = view.length;
    this.#figures = { tokens, turns, unsettledTokens };
    return this.#figures;
  }
}
