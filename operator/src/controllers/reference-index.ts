/**
 * Reverse index of references: which objects point at a given target (a Secret, a Workspace), so a
 * change to the target re-reconciles exactly its referrers. Each referrer points at any number of
 * targets; re-indexing a referrer replaces what it pointed at before.
 */
export class ReferenceIndex {
  readonly #byTarget = new Map<string, Set<string>>()
  readonly #byReferrer = new Map<string, string[]>()

  set(referrer: string, targets: readonly string[]): void {
    this.remove(referrer)
    if (targets.length === 0) return
    this.#byReferrer.set(referrer, [...targets])
    for (const target of targets) {
      let referrers = this.#byTarget.get(target)
      if (!referrers) {
        referrers = new Set()
        this.#byTarget.set(target, referrers)
      }
      referrers.add(referrer)
    }
  }

  remove(referrer: string): void {
    for (const target of this.#byReferrer.get(referrer) ?? []) {
      const referrers = this.#byTarget.get(target)
      referrers?.delete(referrer)
      if (referrers?.size === 0) this.#byTarget.delete(target)
    }
    this.#byReferrer.delete(referrer)
  }

  referrers(target: string): string[] {
    return [...(this.#byTarget.get(target) ?? [])]
  }
}
