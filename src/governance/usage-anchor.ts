/**
 * Anchors the governor's token estimates on what the provider reported. After a response, the provider's
 * prompt-token count of the request is the truth for that payload; the next payload is estimated as that
 * count plus the estimated change since, scaled by how far the local counter was off on the anchored request.
 * O(1) per request: the governor already knows both totals, so nothing is recounted.
 *
 * @example
 * const anchor = new UsageAnchor();
 * anchor.observe(10_000, 11_500); // we counted 10k, the provider billed 11.5k
 * anchor.estimate(12_000); // 11_500 + 2_000 × 1.15 = 13_800
 */
export class UsageAnchor {
  #estimated = 0;
  #reported = 0;

  /** The provider's count of the anchored request, or undefined before the first report. */
  get reported(): number | undefined {
    return this.#reported > 0 ? this.#reported : undefined;
  }

  /** Records that a payload counted locally as `estimatedTotal` was reported as `reportedInputTokens`. */
  observe(estimatedTotal: number, reportedInputTokens: number): void {
    if (!(estimatedTotal > 0) || !(reportedInputTokens > 0)) return;
    this.#estimated = estimatedTotal;
    this.#reported = reportedInputTokens;
  }

  /** The anchored estimate of a payload counted locally as `estimatedTotal` (unchanged before any report). */
  estimate(estimatedTotal: number): number {
    if (this.#reported === 0) return estimatedTotal;
    // A ratio outside [0.5, 2] means the report belongs to some other payload (a changed system prompt, a
    // different model): trust the local count's change rather than amplify it.
    const ratio = Math.min(2, Math.max(0.5, this.#reported / this.#estimated));
    return Math.max(0, Math.round(this.#reported + (estimatedTotal - this.#estimated) * ratio));
  }

  /** Forgets the anchor (the view was rebuilt, or the model changed). */
  reset(): void {
    this.#estimated = 0;
    this.#reported = 0;
  }
}
