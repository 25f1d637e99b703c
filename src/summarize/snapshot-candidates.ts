import { normalizeFact } from "../metrics/fact-patterns.ts";
import type { SnapshotCandidate } from "./fit-snapshot.ts";
import type { FailureRecord, HistoryDigest } from "./history-digest.ts";
import type { PlanItem } from "./plan-state.ts";
import type { ParsedSnapshot, SnapshotSectionKey } from "./snapshot-sections.ts";

/** Drop tiers, lowest dropped first: the order in which a summary gives things up for its budget. */
const TIERS = {
  mentionedFile: 0,
  errorLine: 1,
  earlier: 2,
  action: 3,
  names: 3.5,
  touchedFile: 4,
  latestChange: 4.2,
  recentChange: 0.5,
  change: 4.5,
  fixedError: 5,
  openError: 6,
  reply: 7,
  decision: 7,
  planDone: 8,
  instructionDetail: 2.5,
  instructionBody: 3.6,
  nextStep: 9,
  instruction: 10,
} as const;

const FAILURE_LINE = /^(.+?) failed: (.*) — (fixed later|unresolved)$/;
/** `path: name, name` — the names an edit or write declared in a file. */
const CHANGE_LINE = /^(.+?): (.+)$/;
const COUNTED = /^(.*?)(?: ×(\d+))?$/;
const FILE_LINE = /^(.+?)(?: \(([^()]*)\))?$/;
const PLAN_LINE = /^\[(x|in progress| )\] /;
/** Names in play a summary lists at most (the newest the agent wrote). */
const MAX_NAMES = 80;
/** Starts an item quoting the code an edit put in a file. */
const LATEST_CHANGE = "Latest change to ";
/** An instruction between the first and the newest keeps this much at the instruction tier. */
const MIDDLE_INSTRUCTION_CHARS = 300;
/** Marks the later chunks of a long instruction. */
const CONTINUED = "(cont.) ";

/** Renders `label ×n` (no suffix for one). */
function counted(label: string, count: number): string {
  return count > 1 ? `${label} ×${count}` : label;
}

function parseCounted(text: string): [string, number] {
  const match = COUNTED.exec(text)!;
  return [match[1]!, match[2] === undefined ? 1 : Number(match[2])];
}

function addCount<K>(map: Map<K, number>, key: K, count: number): void {
  map.set(key, (map.get(key) ?? 0) + count);
}

/**
 * Cuts `text` into chunks of at most `limit` characters at line breaks (lines longer than `limit` at spaces),
 * so each chunk is a verbatim run of whole lines.
 */
export function chunkText(text: string, limit: number): string[] {
  const chunks: string[] = [];
  let current = "";
  const pieces = text.split("\n").flatMap((line) => splitLongLine(line, limit));
  for (const piece of pieces) {
    if (current !== "" && current.length + 1 + piece.length > limit) {
      chunks.push(current);
      current = piece;
    } else current = current === "" ? piece : `${current}\n${piece}`;
  }
  if (current.trim() !== "") chunks.push(current);
  return chunks.length > 0 ? chunks : [text];
}

function splitLongLine(line: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    const space = rest.lastIndexOf(" ", limit);
    const cut = space > limit / 2 ? space : limit;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).trimStart();
  }
  pieces.push(rest);
  return pieces;
}

function planLine(item: PlanItem): string {
  return `[${item.status === "done" ? "x" : item.status === "pending" ? " " : "in progress"}] ${item.text}`;
}

/**
 * The items of an extractive snapshot: the previous summary's (parsed), merged with what `digest` found in
 * the new messages, each with its drop tier. Counts add up, failures fixed by a later success are marked
 * fixed, the newest plan replaces an older one, and items matching the focus terms are dropped last in their
 * tier.
 *
 * @example
 * fitSnapshot(snapshotCandidates(digest, parseSnapshot(previous), ["parser"]), 1000, countText)
 */
export function snapshotCandidates(
  digest: HistoryDigest,
  previous: ParsedSnapshot,
  options: { readonly focusTerms: readonly string[]; readonly maxInstructionChars: number },
): SnapshotCandidate[] {
  const { focusTerms, maxInstructionChars } = options;
  const candidates: SnapshotCandidate[] = [];
  const push = (section: SnapshotSectionKey, text: string, tier: number, kind: string) => {
    const onFocus = focusTerms.some((term) => text.toLowerCase().includes(term));
    candidates.push({ section, text, tier, rank: (onFocus ? 1e6 : 0) + candidates.length, kind });
  };
  const old = (key: SnapshotSectionKey) => previous.get(key) ?? [];

  const instructions = new Map<string, string>();
  for (const text of [...old("goal"), ...digest.instructions]) instructions.set(normalizeFact(text), text);
  const goal = [...instructions.values()];
  goal.forEach((text, index) => {
    if (text.startsWith(CONTINUED)) {
      push("goal", text, TIERS.instructionDetail, "instruction details");
      return;
    }
    // Keep the first instruction (the goal) and the newest longest; give up the ones in between first.
    const rank = index === goal.length - 1 ? 2 : index === 0 ? 1 : 0;
    const [head, ...rest] = chunkText(text, maxInstructionChars);
    // An instruction in between keeps its opening as an instruction; the rest of its head (mostly what the user
    // pasted: logs, output) goes before the files touched and the code changed.
    const [opening, ...body] = rank === 0 ? chunkText(head!, MIDDLE_INSTRUCTION_CHARS) : [head!];
    push("goal", opening!, TIERS.instruction + rank / 10, "instructions");
    for (const chunk of body)
      push("goal", `${CONTINUED}${chunk}`, TIERS.instructionBody, "instruction details");
    // The rest of a very long instruction (pasted logs) goes early, but only after loose files and errors.
    for (const chunk of rest) {
      push("goal", `${CONTINUED}${chunk}`, TIERS.instructionDetail, "instruction details");
    }
  });
  // A plan the user approved is an instruction: kept nearly verbatim, long ones in chunks given up early.
  for (const plan of digest.approvedPlans) {
    const [head, ...rest] = chunkText(`Approved plan: ${plan}`, maxInstructionChars);
    push("goal", head!, TIERS.instruction + 0.05, "approved plans");
    for (const chunk of rest)
      push("goal", `${CONTINUED}${chunk}`, TIERS.instructionDetail, "instruction details");
  }
  for (const text of old("earlier")) push("earlier", text, TIERS.earlier, "earlier summary lines");
  const decisions = new Map<string, string>();
  for (const text of [...old("decisions"), ...digest.decisions]) decisions.set(normalizeFact(text), text);
  for (const text of decisions.values()) push("decisions", text, TIERS.decision, "decisions");
  const changes = new Map<string, string[]>();
  for (const line of old("changes")) {
    const match = CHANGE_LINE.exec(line);
    if (match) changes.set(match[1]!, match[2]!.split(", "));
  }
  for (const [path, names] of digest.changes) {
    const known = changes.get(path) ?? [];
    changes.set(path, [...known, ...names.filter((name) => !known.includes(name))]);
  }
  for (const [path, names] of changes)
    push("changes", `${path}: ${names.join(", ")}`, TIERS.change, "changes");

  const files = new Map<string, Map<string, number>>();
  for (const line of old("files")) {
    const match = FILE_LINE.exec(line)!;
    const uses = files.get(match[1]!) ?? new Map<string, number>();
    for (const use of match[2]?.split(", ") ?? []) addCount(uses, ...parseCounted(use));
    files.set(match[1]!, uses);
  }
  for (const [path, newUses] of digest.files) {
    const uses = files.get(path) ?? new Map<string, number>();
    for (const [tool, count] of newUses) addCount(uses, tool, count);
    files.set(path, uses);
  }
  const paths = [...files.keys()];
  for (const [path, uses] of files) {
    // A path only mentioned inside a longer one listed too (`lib/a.ts` beside `/repo/lib/a.ts`) says nothing more.
    if (uses.size === 0 && paths.some((other) => other !== path && other.includes(path))) continue;
    if (uses.size === 0) push("files", path, TIERS.mentionedFile, "mentioned files");
    else {
      const list = [...uses].map(([tool, count]) => counted(tool, count)).join(", ");
      push("files", `${path} (${list})`, TIERS.touchedFile, "files");
    }
  }

  const actions = new Map<string, number>();
  for (const line of old("actions")) addCount(actions, ...parseCounted(line));
  for (const [label, count] of digest.actions) addCount(actions, label, count);
  for (const [label, count] of actions) push("actions", counted(label, count), TIERS.action, "actions");

  pushErrors(digest, old("errors"), push);

  const plan = digest.plan;
  const oldState = old("state");
  const oldReplies = oldState.filter((line) => !PLAN_LINE.test(line));
  const planDone = plan ? plan.filter((item) => item.status === "done").map(planLine) : undefined;
  for (const line of planDone ?? oldState.filter((line) => PLAN_LINE.test(line))) {
    push("state", line, TIERS.planDone, "plan steps");
  }
  // Code an earlier summary quoted is the first thing a merge gives up: the newest code comes from this range.
  for (const line of oldReplies)
    if (line.startsWith(LATEST_CHANGE)) push("state", line, TIERS.recentChange - 0.25, "recent changes");
    else push("state", line, TIERS.reply, "replies");
  for (const reply of digest.conclusions) push("state", `Reply: ${reply}`, TIERS.reply, "replies");
  if (digest.latestEdit !== undefined)
    push(
      "state",
      `${LATEST_CHANGE}${digest.latestEdit.path}:\n${digest.latestEdit.text}`,
      TIERS.latestChange,
      "latest change",
    );
  // Older files' code goes before the newest change, and the older the sooner.
  for (const [age, edit] of digest.recentEdits.entries())
    push(
      "state",
      `${LATEST_CHANGE}${edit.path}:\n${edit.text}`,
      TIERS.recentChange - age / (2 * digest.recentEdits.length),
      "recent changes",
    );
  if (digest.names.length > 0)
    push("state", `Names in play: ${digest.names.slice(0, MAX_NAMES).join(", ")}`, TIERS.names, "names");
  const nextSteps = plan ? plan.filter((item) => item.status !== "done").map(planLine) : old("next");
  for (const line of nextSteps) push("next", line, TIERS.nextStep, "next steps");
  return candidates;
}

type Push = (section: SnapshotSectionKey, text: string, tier: number, kind: string) => void;

function pushErrors(digest: HistoryDigest, oldLines: readonly string[], push: Push): void {
  const failures = new Map<string, FailureRecord>();
  const plain: string[] = [];
  for (const line of oldLines) {
    const match = FAILURE_LINE.exec(line);
    if (!match) plain.push(line);
    else {
      const [, label, error] = match as unknown as [string, string, string];
      failures.set(`${label}\n${normalizeFact(error)}`, {
        label,
        error,
        resolved: match[3] === "fixed later",
      });
    }
  }
  // A failure carried over from the previous summary is fixed by a success in the new messages.
  for (const [key, failure] of failures) {
    if (!failure.resolved && digest.succeeded.has(failure.label)) {
      failures.set(key, { ...failure, resolved: true });
    }
  }
  for (const failure of digest.failures) {
    failures.set(`${failure.label}\n${normalizeFact(failure.error)}`, failure);
  }
  const shown = new Set<string>();
  for (const failure of failures.values()) {
    shown.add(normalizeFact(failure.error));
    const text = `${failure.label} failed: ${failure.error} — ${failure.resolved ? "fixed later" : "unresolved"}`;
    push("errors", text, failure.resolved ? TIERS.fixedError : TIERS.openError, "errors");
  }
  for (const line of [...plain, ...digest.errorLines]) {
    const key = normalizeFact(line);
    if (shown.has(key)) continue;
    shown.add(key);
    push("errors", line, TIERS.errorLine, "error lines");
  }
}
