// Where ctxkit stands against each peer on the cost/quality plane: whether it is cheaper and keeps at least as
// much (it dominates), the peer does, or each wins on one axis (a trade), per provider's pricing.
import type { BenchProvider } from "./policy-runs.ts";

/** One policy's totals, as the frontier reads them: cost with re-reads and strict figures, per pricing. */
export interface FrontierPoint {
  readonly name: string;
  readonly cost: Readonly<Record<BenchProvider, number>>;
  readonly grounding: Readonly<Record<BenchProvider, number>>;
  readonly anchors: Readonly<Record<BenchProvider, number>>;
}

/**
 * How `ctxkit` stands against `peer` under `provider`'s pricing, on three axes: cost with re-reads, strict
 * grounding and strict edit anchors. One dominates when it is no worse on every axis and better on one. Figures
 * are compared as the tables print them — quality to 0.1 point, cost to 0.1% — so that a difference no table
 * shows decides nothing. Returns `same`, `ctxkit dominates`, `peer dominates`, or a trade that says where ctxkit is
 * ahead and behind ("trade: ctxkit cheaper; less grounding, fewer anchors").
 */
export function standing(ctxkit: FrontierPoint, peer: FrontierPoint, provider: BenchProvider): string {
  const tenths = (value: number) => Math.round(value * 1000);
  const ratio = ctxkit.cost[provider] / peer.cost[provider] - 1;
  // Each axis: +1 where ctxkit is ahead (cheaper, or keeps more), −1 where it is behind.
  const axes = [
    { sign: Math.abs(ratio) < 0.0005 ? 0 : -Math.sign(ratio), ahead: "cheaper", behind: "costlier" },
    {
      sign: Math.sign(tenths(ctxkit.grounding[provider]) - tenths(peer.grounding[provider])),
      ahead: "more grounding",
      behind: "less grounding",
    },
    {
      sign: Math.sign(tenths(ctxkit.anchors[provider]) - tenths(peer.anchors[provider])),
      ahead: "more anchors",
      behind: "fewer anchors",
    },
  ];
  const ahead = axes.filter((axis) => axis.sign > 0).map((axis) => axis.ahead);
  const behind = axes.filter((axis) => axis.sign < 0).map((axis) => axis.behind);
  if (ahead.length === 0 && behind.length === 0) return "same";
  if (behind.length === 0) return "ctxkit dominates";
  if (ahead.length === 0) return "peer dominates";
  return `trade: ctxkit ${ahead.join(", ")}; ${behind.join(", ")}`;
}

/**
 * The frontier paragraph's table: per peer, ctxkit's cost against it and its strict figures' differences in
 * points, and how they stand, under each pricing.
 */
export function frontierRows(
  ctxkit: FrontierPoint,
  peers: readonly FrontierPoint[],
  providers: readonly BenchProvider[],
): string[][] {
  const signed = (value: number, digits: number, unit: string) =>
    `${value > 0 ? "+" : value < 0 ? "−" : "±"}${Math.abs(value).toFixed(digits)}${unit}`;
  return peers.map((peer) => [
    peer.name,
    ...providers.map((provider) => {
      const cost = signed((ctxkit.cost[provider] / peer.cost[provider] - 1) * 100, 1, "%");
      const grounding = signed((ctxkit.grounding[provider] - peer.grounding[provider]) * 100, 1, "");
      const anchors = signed((ctxkit.anchors[provider] - peer.anchors[provider]) * 100, 1, "");
      return `${cost} · ${grounding} · ${anchors}: ${standing(ctxkit, peer, provider)}`;
    }),
  ]);
}
