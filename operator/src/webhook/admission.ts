/**
 * The webhook's decision for one AdmissionReview (admission.k8s.io/v1): skip what is not ours
 * (not a pod CREATE, a system namespace, opted out, already injected), refuse with a message when
 * the annotations name something that does not exist or is not allowed, else the injection patch.
 * The MutatingWebhookConfiguration's selectors keep system namespaces out already; the check here
 * holds even if the configuration is edited.
 */
import { bindingAdmits, parseDeploymentRef, type ResolvedBinding } from '../sidecar/binding.ts'
import { alreadyInjected, ANNOTATIONS, INJECT_LABEL, injectionPatch, InjectionRefused, type Pod, type SidecarSettings } from './inject.ts'

export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease'])

export interface AdmissionDeps {
  settings: SidecarSettings
  /** Namespaces never injected besides the system ones (the operator's own). */
  excludedNamespaces: ReadonlySet<string>
  resolveBinding(namespace: string, name: string): Promise<ResolvedBinding | null>
  /** The namespace's annotations (a namespace may choose the Deployment for all its pods). */
  namespaceAnnotations(namespace: string): Promise<Record<string, string>>
  /** The CA bundle an https control plane is verified with (the webhook's own); null when unknown. */
  controlPlaneCa?: () => string | null
}

interface AdmissionRequest {
  uid: string
  operation?: string
  namespace?: string
  kind?: { kind?: string }
  object?: Pod
}

export interface AdmissionResponse {
  uid: string
  allowed: boolean
  status?: { code: number; message: string }
  patchType?: 'JSONPatch'
  patch?: string
  warnings?: string[]
}

export class AdmissionUnavailable extends Error {
  override name = 'AdmissionUnavailable'
}

export async function admit(request: AdmissionRequest, deps: AdmissionDeps): Promise<AdmissionResponse> {
  const allow: AdmissionResponse = { uid: request.uid, allowed: true }
  const pod = request.object
  const namespace = request.namespace ?? pod?.metadata?.namespace ?? ''
  if (request.operation !== 'CREATE' || request.kind?.kind !== 'Pod' || !pod) return allow
  if (SYSTEM_NAMESPACES.has(namespace) || deps.excludedNamespaces.has(namespace)) return allow
  if (pod.metadata?.labels?.[INJECT_LABEL] === 'false') return allow
  if (alreadyInjected(pod)) return allow

  const refuse = (message: string): AdmissionResponse => ({ uid: request.uid, allowed: false, status: { code: 400, message } })
  let namespaceAnnotations: Record<string, string>
  try {
    namespaceAnnotations = await deps.namespaceAnnotations(namespace)
  } catch (error) {
    throw new AdmissionUnavailable(`could not read namespace ${namespace}: ${(error as Error).message}`)
  }
  const annotations = { ...namespaceAnnotations, ...(pod.metadata?.annotations ?? {}) }
  const reference = annotations[ANNOTATIONS.deployment]
  if (reference === undefined) return refuse(`${ANNOTATIONS.deployment} is required on the pod or its namespace: name the Gatehouse Deployment (namespace/name) whose sidecar binding admits this pod`)
  const target = parseDeploymentRef(reference, namespace)
  if (target === null) return refuse(`${ANNOTATIONS.deployment}: '${reference}' is not a name or namespace/name`)
  let resolved: ResolvedBinding | null
  try {
    resolved = await deps.resolveBinding(target.namespace, target.name)
  } catch (error) {
    throw new AdmissionUnavailable(`could not read the Gatehouse Deployment: ${(error as Error).message}`)
  }
  const what = `deployments.gatehouse.dev ${target.namespace}/${target.name}`
  if (resolved === null) return refuse(`${ANNOTATIONS.deployment}: ${what} does not exist`)
  const serviceAccount = pod.spec?.serviceAccountName || 'default'
  if (resolved.binding === null) return refuse(`${ANNOTATIONS.deployment}: ${what} has no spec.sidecar binding`)
  if (!bindingAdmits(resolved.binding, namespace, serviceAccount)) {
    return refuse(`${ANNOTATIONS.deployment}: the sidecar binding of ${what} does not admit service account ${namespace}/${serviceAccount}`)
  }
  try {
    const controlPlaneCa = deps.settings.controlPlaneUrl.startsWith('https:') ? (deps.controlPlaneCa?.() ?? null) : null
    if (deps.settings.controlPlaneUrl.startsWith('https:') && controlPlaneCa === null) throw new AdmissionUnavailable('the control plane is served over TLS, but its CA bundle is not known yet')
    const patch = injectionPatch(pod, { annotations, deploymentRef: `${target.namespace}/${target.name}`, settings: deps.settings, controlPlaneCa })
    return { ...allow, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }
  } catch (error) {
    if (error instanceof InjectionRefused) return refuse(error.message)
    throw error
  }
}
