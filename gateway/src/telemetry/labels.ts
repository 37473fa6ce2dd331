/**
 * Bounded label values. Prometheus keeps one series per distinct label set, and several labels here
 * start as caller input (the model string, a provider's custom host), so each is mapped onto a
 * small, known set before it reaches a metric:
 *
 *  - model: a model the pricing table or the snapshot knows (its `known` check), and only the first
 *    `DEFAULT_MAX_MODEL_LABELS` such names seen by this registry; anything else is `other`. A caller
 *    sending 10,000 made-up model names adds one series (`other`), not 10,000.
 *  - workspace: the snapshot's workspace slug (authenticated callers only), the first
 *    `DEFAULT_MAX_WORKSPACE_LABELS` of them; `none` before authentication.
 *  - status class: `2xx` .. `5xx`, and `cancelled` for a client that left (499).
 *  - error code: a code from the gateway's error catalog, else `other`.
 */
import { errorCatalog } from '../core/errors.ts'

export const OTHER = 'other'
/** No value applies (no model in the request, no provider reached, not authenticated). */
export const NONE = 'none'
export const DEFAULT_MAX_MODEL_LABELS = 200
export const DEFAULT_MAX_WORKSPACE_LABELS = 1000

/** A label whose values are admitted once known, up to a cap per registry; past it, `other`. */
export class CappedLabel {
  readonly #seen = new Set<string>()
  readonly #max: number

  constructor(max: number) {
    this.#max = max
  }

  /** The label for `value`: itself once known and admitted, else `other` (`none` without a value). */
  label(value: string | null, known: (value: string) => boolean = () => true): string {
    if (value === null || value === '') return NONE
    if (this.#seen.has(value)) return value
    if (this.#seen.size >= this.#max || !known(value)) return OTHER
    this.#seen.add(value)
    return value
  }

  get size(): number {
    return this.#seen.size
  }
}

/** Built once: a label value per exchange is then no new string. */
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx']

export function statusClass(status: number): string {
  if (status === 499) return 'cancelled'
  if (status >= 100 && status < 600) return STATUS_CLASSES[Math.floor(status / 100) - 1]!
  return OTHER
}

export function errorCodeLabel(code: string | null): string {
  if (code === null) return NONE
  return Object.hasOwn(errorCatalog, code) ? code : OTHER
}

/** The capped labels of one registry. */
export interface BoundedLabels {
  readonly models: CappedLabel
  readonly workspaces: CappedLabel
}

export function boundedLabels(maxModels = DEFAULT_MAX_MODEL_LABELS, maxWorkspaces = DEFAULT_MAX_WORKSPACE_LABELS): BoundedLabels {
  return { models: new CappedLabel(maxModels), workspaces: new CappedLabel(maxWorkspaces) }
}
