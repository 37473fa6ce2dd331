/** Injectable time source: workers and expiry checks take one so tests never sleep. */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()
