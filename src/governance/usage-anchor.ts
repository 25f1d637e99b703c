/** The provider's count of a payload is never taken below this share of the local count. */
const MIN_SCALE = 0.9;
/** Nor above this multiple of it, except for an offset the report itself proves (see `UsageAnchor`). */
const MAX_SCALE = 2;

/**
 * Anchors the governor's token estimates on what the provider reported. After a response, the provider's
 * prompt-token count R of a request counted locally as E is the truth for that payload. Any payload counted
 * locally as L — the same view grown at its end, or a view a checkpoint rewrote — is then estimated as
 * `offset + scale × L`:
 *
 * - `scale` is the measured ratio R / E, clamped to [0.9, 2]: decisions are never relaxed by more than 10% on
 *   the provider's word, and a ratio past 2 is not believed to be a property of every token;
 * - `offset` is what of R that clamped scale does not explain, when positive (R − 2E when R / E > 2): tokens the
 *   local counter does not see at all, such as tool definitions left out of `fixedTokens`, carried as a
 *   constant. A view smaller than the anchored one is therefore never estimated above R.
 *
 * The estimate is relative, so it holds for whatever view is decided on; it is the anchored payload's R exactly
 * when the ratio is within bounds, and R plus the change since scaled by the ratio while the view only grows.
 * O(1) per request: nothing is recounted.
 *
 * @example
 * const anchor = new UsageAnchor();
 * anchor.observe(10_000, 11_500); // we counted 10k, the provider billed 11.5k
 * anchor.estimate(12_000); // 12_000 × 1.15 = 13_800
 * anchor.estimate(4_000); // after a compaction: 4_600
 */
export class UsageAnchor {
  #estimated = 0;
  #reported = 0;

  /** The provider's count of the anchored request, or undefined before the first report. */
  get reported(): number | undefined {
    return this.#reported > 0 ? this.#reported : undefined;
  }

  /** What each locally counted token is taken to cost (1 before any report). */
  get scale(): number {
    if (this.#reported === 0) return 1;
    return Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.#reported / this.#estimated));
  }

  /** Provider tokens no local count explains, carried by every payload (0 unless the ratio passed 2). */
  get offset(): number {
    if (this.#reported === 0) return 0;
    return Math.max(0, this.#reported - MAX_SCALE * this.#estimated);
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
    const ratio = this.#reported / this.#estimated;
    // Each branch computes offset + scale × total with one rounding, so an exact product stays exact.
    if (ratio < MIN_SCALE) return Math.ceil((estimatedTotal * 9) / 10); // MIN_SCALE, exactly
    if (ratio > MAX_SCALE) return Math.ceil(this.offset + MAX_SCALE * estimatedTotal);
    return Math.ceil((this.#reported * estimatedTotal) / this.#estimated);
  }

  /**
   * The largest locally counted total whose estimate stays within `limit` (the inverse of `estimate`), or -1
   * when none does.
   */
  countedLimit(limit: number): number {
    if (limit < 0) return -1;
    let counted = Math.max(-1, Math.floor((limit - this.offset) / this.scale));
    while (counted >= 0 && this.estimate(counted) > limit) counted--;
    while (this.estimate(counted + 1) <= limit) counted++;
    return counted;
  }

  /** The anchored figures (local and reported totals of the anchored request): a plain value to persist. */
  get state(): { readonly estimated: number; readonly reported: number } | undefined {
    return this.#reported > 0 ? { estimated: this.#estimated, reported: this.#reported } : undefined;
  }

  /** Takes back what `state` returned. */
  restore(state: { readonly estimated: number; readonly reported: number } | undefined): void {
    this.#estimated = state?.estimated ?? 0;
    this.#reported = state?.reported ?? 0;
  }

  /** Forgets the anchor (the view was rebuilt, or the model changed). */
  reset(): void {
    this.#estimated = 0;
    this.#reported = 0;
  }
}
